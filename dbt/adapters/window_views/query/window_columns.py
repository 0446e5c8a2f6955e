"""Which columns of a query are a window TVF's window_start and window_end, whatever the SQL
calls them: a column is followed through aliases (`window_start AS starttime`), subqueries and
CTEs down to the TVF that computes it. So a join on renamed bounds (Nexmark's q5, q8) is a
window join, and a stream keys its results by the column that is window_start (q11)."""

from __future__ import annotations

from enum import Enum
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from sqlglot import exp

from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.query import tvf


class Bound(str, Enum):
    START = "window_start"
    END = "window_end"


_NAMES = {b.value: b for b in Bound}
_DEPTH = 32  # subqueries followed at most: deeper nesting is no window column


# the columns every window TVF adds to its input's
ADDED = ("window_start", "window_end", "window_time")


def added_again(columns: Iterable[str]) -> List[str]:
    """The columns of an input a window TVF over it would add a second time (Spark's
    AMBIGUOUS_REFERENCE on each)."""
    have = {c.strip("`").lower() for c in columns}
    return [c for c in ADDED if c in have]


def _name(node: exp.Expression) -> str:
    return node.name.strip("`").lower()


def is_tvf(query: exp.Expression) -> bool:
    """Whether `query` is a window TVF's expansion: its macro's marker heads it."""
    return isinstance(query, exp.Select) and bool(tvf.on_node(query))


def _ctes(node: exp.Expression) -> Dict[str, exp.Expression]:
    return {cte.alias_or_name.lower(): cte.this for cte in node.root().find_all(exp.CTE)}


def _query(source: exp.Expression) -> Optional[exp.Expression]:
    """The query a FROM / JOIN source reads: a subquery's, a CTE's; None for a table."""
    if isinstance(source, exp.Subquery):
        inner = source.this
        while isinstance(inner, exp.Subquery):
            inner = inner.this
        return inner
    if isinstance(source, exp.Table) and not source.db:
        return _ctes(source).get(_name(source))
    return None


def sources(select: exp.Select) -> List[Tuple[str, exp.Expression]]:
    """The relations `select` reads (FROM and JOINs), each with the name its columns qualify it by."""
    found = []
    first = select.args.get("from_") or select.args.get("from")
    for clause in [first, *(select.args.get("joins") or [])]:
        if clause is not None and isinstance(clause.this, exp.Expression):
            found.append((clause.this.alias_or_name, clause.this))
    return found


def _in_query(name: str, query: Optional[exp.Expression], depth: int) -> Optional[Bound]:
    """The bound the output column `name` of `query` is, or None."""
    if not isinstance(query, exp.Select) or depth > _DEPTH:
        return None
    if is_tvf(query):
        return _NAMES.get(name)
    for projection in query.expressions:
        if isinstance(projection, exp.Star) or (isinstance(projection, exp.Column) and projection.is_star):
            star = _in_sources(
                name, query, projection.table.lower() if isinstance(projection, exp.Column) else "", depth
            )
            if star is not None:
                return star
        elif projection.alias_or_name.lower() == name:
            inner = projection.unalias()
            return _of(inner, query, depth + 1) if isinstance(inner, exp.Column) else None
    return None


def _in_sources(name: str, select: exp.Select, table: str, depth: int) -> Optional[Bound]:
    """The bound the column `name` (of the source `table`, or of any one: "") of `select` is."""
    found = {
        _in_query(name, _query(source), depth + 1)
        for alias, source in sources(select)
        if not table or alias.lower() == table
    }
    found.discard(None)
    return found.pop() if len(found) == 1 else None


def _of(column: exp.Column, select: exp.Select, depth: int) -> Optional[Bound]:
    return _in_sources(_name(column), select, column.table.lower(), depth)


def bound_of(column: exp.Column) -> Optional[Bound]:
    """The window bound `column` is in the SELECT it is read in (its ON, its select list, its
    GROUP BY), followed to the window TVF that computes it; None if it is no window bound."""
    select = column.find_ancestor(exp.Select)
    return _of(column, select, 0) if select is not None else None


def selected(select: exp.Select) -> Dict[Bound, str]:
    """The output columns of `select` that are its windows' bounds, by name: one named
    window_start / window_end (whatever computes it, e.g. a full join's coalesce), else a
    column that is one under another name."""
    found: Dict[Bound, str] = {}
    for projection in select.expressions:
        name = projection.alias_or_name
        inner = projection.unalias()
        bound = _NAMES.get(name.lower()) or (_of(inner, select, 0) if isinstance(inner, exp.Column) else None)
        if bound is not None and bound not in found:
            found[bound] = name
    return found


def _columns(select: exp.Select) -> Iterator[exp.Column]:
    """The columns `select` may read from its sources: each source's output columns, qualified."""
    for alias, source in sources(select):
        query = _query(source)
        if not isinstance(query, exp.Select):
            continue
        names = list(_NAMES) if is_tvf(query) else [p.alias_or_name for p in query.expressions if p.alias_or_name]
        for name in names:
            yield exp.column(name, table=alias or None)


def readable(select: exp.Select, bound: Bound) -> Optional[exp.Column]:
    """A column `select` could add to its select list that is `bound`: of a source, or in a
    GROUP BY, one of its keys; None if there is none, or a DISTINCT would merge windows."""
    if select.args.get("distinct"):
        return None
    group = select.args.get("group")
    candidates = list(group.expressions) if group is not None else list(_columns(select))
    for candidate in candidates:
        if isinstance(candidate, exp.Column) and _of(candidate, select, 0) is bound:
            return candidate.copy()
    return None


def hide(select: exp.Select, bound: Bound) -> Optional[str]:
    """Add `bound` to `select`'s list under a hidden name, read from what `readable` finds, so a
    model that does not select it can still be closed by it (batch and streaming alike); the
    hidden name, or None if the select list can read no such column."""
    column = readable(select, bound)
    if column is None:
        return None
    name = internal(bound.value)
    select.select(exp.alias_(column, name), copy=False)
    return name
