"""A keyed Top-N read from the model's SQL (sqlglot): ROW_NUMBER (or RANK, DENSE_RANK) over
PARTITION BY key columns ORDER BY any columns, in a SELECT over the upstream table, kept by its
rank in the WHERE of the SELECT that reads it (`rank <= N`, `rank < N`, `rank = N`).
Deduplication is its N = 1 (keep the last row: ORDER BY the event time descending).

No row of it is ever final (a later row can take any of a key's places), but a key's top rows
are the top rows of its old top rows and its new rows: a stream keeps the rows ranked within
the bound per key and replaces a key's output when its new rows enter them
(streaming/topn_shapes.py). A ranking ordered by the watermark column ascending is not one:
over windows stream it (overwindows.py), rows final as W passes them."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import List, Optional, Tuple

from sqlglot import exp

from dbt.adapters.window_views import names
from dbt.adapters.window_views.errors import AnalysisError
from dbt.adapters.window_views.query import analysis, sqlexpr
from dbt.adapters.window_views.query.analysis import OverCall
from dbt.adapters.window_views.query.shown import shown

RANKING = (exp.RowNumber, exp.Rank, exp.DenseRank)
RANK = names.internal("rank")  # a row's rank in the state's query
HOME = names.internal("home")  # passed through the model's SQL over ranked rows (output_sql): a key's output bucket
DOWNSTREAM = "fix: move the rest to a downstream model, or use execution='batch'"


@dataclass(frozen=True)
class TopN:
    """What a stream of a keyed Top-N keeps: per key, the rows ranked at most `limit`."""

    call: str  # the ranking call, as the model's SQL reads it
    kept_by: str  # the condition on its rank, as the model's SQL reads it
    keys: Tuple[str, ...]  # the PARTITION BY columns, which the output holds under these names
    limit: int
    # the input rows the state keeps, read from the view the model reads its input from, with
    # their rank in RANK (a ranking by the same call over the same FROM and WHERE)
    state: exp.Expression
    # the model's query over such ranked rows in that view: the call read as their RANK, and HOME
    # passed through to the output
    output: exp.Expr

    @functools.cached_property
    def state_sql(self) -> str:
        return sqlexpr.to_sql(self.state)

    @functools.cached_property
    def output_sql(self) -> str:
        return sqlexpr.to_sql(self.output)


@dataclass(frozen=True)
class Ranking:
    """A keyed Top-N as found in the model's tree: its ranking call (nodes of that tree), the
    condition on its rank and the highest rank kept."""

    call: OverCall
    kept_by: str
    limit: int

    def top_n(self) -> TopN:
        """What a stream keeps, its state's query over the ranking SELECT's FROM as the tree reads
        it now: streaming/plan.py points that FROM at the input's view after finding the ranking."""
        keys = tuple(analysis.parse(p).name for p in self.call.partition_by)
        return TopN(self.call.shown, self.kept_by, keys, self.limit, _state(self.call, self.limit), _output(self.call))


def _limit(condition: exp.Expr, rank: str) -> Optional[int]:
    """The highest rank `condition` keeps, when it bounds the column `rank` by an integer."""
    if isinstance(condition, (exp.GTE, exp.GT)) or (
        isinstance(condition, exp.EQ) and isinstance(condition.this, exp.Literal)
    ):
        flipped = {exp.GTE: exp.LTE, exp.GT: exp.LT, exp.EQ: exp.EQ}[type(condition)]
        condition = flipped(this=condition.expression, expression=condition.this)  # `N >= rank` as `rank <= N`
    if not isinstance(condition, (exp.LTE, exp.LT, exp.EQ)):
        return None
    column, bound = condition.this, condition.expression
    if not (isinstance(column, exp.Column) and column.name.lower() == rank.lower()):
        return None
    if not (isinstance(bound, exp.Literal) and not bound.is_string and bound.this.isdigit()):
        return None
    return int(bound.this) - 1 if isinstance(condition, exp.LT) else int(bound.this)


def _reader(tree: exp.Expression, inner: exp.Select) -> Optional[exp.Select]:
    """The SELECT that reads `inner`'s rows: from it as a subquery, or from its CTE."""
    parent = inner.parent
    if isinstance(parent, exp.Subquery):
        outer = parent.parent.parent if isinstance(parent.parent, exp.From) else None
        return outer if isinstance(outer, exp.Select) else None
    if isinstance(parent, exp.CTE):
        name = parent.alias_or_name.lower()
        for select in tree.find_all(exp.Select):
            source = getattr(select.args.get("from_"), "this", None)
            if isinstance(source, exp.Table) and not source.db and source.name.lower() == name:
                return select
    return None


def _ranked(tree: exp.Expression, call: OverCall) -> Optional[Tuple[exp.Select, List[exp.Expr], int]]:
    """The SELECT that keeps the ranked rows by their rank, the conditions that do, and the
    highest rank they keep; None when no SELECT keeps them by rank."""
    alias = call.node.parent
    if not isinstance(call.func, RANKING) or not isinstance(alias, exp.Alias) or alias.parent is not call.select:
        return None
    outer = _reader(tree, call.select)
    where = outer.args.get("where") if outer is not None else None
    if outer is None or where is None:
        return None
    conditions = [c.unnest() for c in where.this.flatten()] if isinstance(where.this, exp.And) else [where.this]
    bounds = [(c, _limit(c, alias.alias)) for c in conditions]
    kept = [(c, n) for c, n in bounds if n is not None]
    if not kept:
        return None
    return outer, [c for c, _ in kept], min(n for _, n in kept)


def find(tree: exp.Expression, watermark_column: str) -> Optional[Ranking]:
    """The model's keyed Top-N ranking, or None when it has none (or a ranking over windows
    stream, ordered by the watermark column ascending). Raises AnalysisError, naming the call
    and the fix, for a Top-N a stream cannot keep."""
    calls = [c for c in analysis.over_calls(tree) if not c.generated]
    for call in calls:
        ranked = _ranked(tree, call)
        if ranked is None:
            continue
        descending = call.order_by[0][1] if call.order_by else False
        if call.order_by and analysis.is_column(call.order_nodes[0], watermark_column) and not descending:
            return None  # rows final once W passes them: over windows
        outer, conditions, limit = ranked
        kept_by = " AND ".join(shown(sqlexpr.node(c)) for c in conditions)
        _check(tree, call, calls, outer, kept_by)
        return Ranking(call, kept_by, limit)
    return None


def _check(tree: exp.Expression, call: OverCall, calls: List[OverCall], outer: exp.Select, kept_by: str) -> None:
    """Refuse what a stream cannot keep per key, naming the call and the rank condition."""
    what = f"the Top-N `{call.shown}` kept by `{kept_by}`"
    others = [c.shown for c in calls if c is not call]
    if others:
        raise AnalysisError(f"{what} is streamed alone, but the model also computes `{others[0]}`; {DOWNSTREAM}")
    if not call.partition_by:
        raise AnalysisError(
            f"{what} ranks every row together (no PARTITION BY): a stream keeps a Top-N per key; fix: partition it "
            "by key columns, or use execution='batch'"
        )
    nodes = [analysis.parse(p) for p in call.partition_by]
    if not all(isinstance(n, exp.Column) for n in nodes):
        raise AnalysisError(
            f"{what} is partitioned by expressions; a stream keeps a Top-N by key columns; fix: compute the keys as "
            "columns in an upstream model, or use execution='batch'"
        )
    inner = call.select
    source = getattr(inner.args.get("from_"), "this", None)
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    if (
        inner.args.get("group") is not None
        or inner.args.get("joins")
        or not isinstance(source, exp.Table)
        or (not source.db and source.name.lower() in ctes)
    ):
        raise AnalysisError(
            f"{what} must rank the upstream table's rows directly (no GROUP BY, join, subquery or CTE in its FROM) "
            f"for a stream to keep them as state; {DOWNSTREAM}"
        )
    if outer is not tree or outer.args.get("limit") is not None or outer.args.get("joins"):
        raise AnalysisError(
            f"{what}: the query that keeps rows by rank must be the model's outermost, with no join or LIMIT, for a "
            f"stream to replace a key's rows; {DOWNSTREAM}"
        )
    _check_keys_kept(what, outer, [n.name for n in nodes])


def _check_keys_kept(what: str, outer: exp.Select, keys: List[str]) -> None:
    """The output holds the PARTITION BY columns as they are: a batch replaces a key's rows."""
    if any(e.is_star for e in outer.expressions):
        return
    passed = {e.name.lower() for e in outer.expressions if isinstance(e, exp.Column)} | {
        e.alias.lower()
        for e in outer.expressions
        if isinstance(e, exp.Alias) and isinstance(e.this, exp.Column) and e.this.name.lower() == e.alias.lower()
    }
    missing = [k for k in keys if k.lower() not in passed]
    if missing:
        raise AnalysisError(
            f"{what}: a stream replaces a key's rows as its new rows enter the top, so the model must output its "
            f"PARTITION BY column(s) `{', '.join(missing)}` unchanged; fix: add them to the output columns"
        )


def _state(call: OverCall, limit: int) -> exp.Expression:
    """The input rows ranked at most `limit` by the call, over the SELECT's own FROM and WHERE,
    with their rank in RANK: the rows the state keeps, as `SELECT *` over the input keeps them."""
    ranked = call.select.copy()
    for key in ("order", "limit", "distinct", "qualify"):
        ranked.set(key, None)
    ranked.set("expressions", [exp.Star(), exp.alias_(call.node.copy(), RANK)])
    return exp.select("*").from_(ranked.subquery(sqlexpr.ROWS)).where(exp.column(RANK) <= limit)


def _output(call: OverCall) -> exp.Expr:
    """The model's query over the rows `_state` ranks, without ranking them again: the call
    read as their RANK, HOME added to the ranking SELECT and the one around it (but where they
    select `*`, which passes it)."""
    tree = call.select.root()
    copy = tree.copy()
    walked = list(copy.walk())

    def copied(node: exp.Expr) -> exp.Expr:  # a node's place in the copy
        return walked[next(i for i, n in enumerate(tree.walk()) if n is node)]

    inner = copied(call.select)
    copied(call.node).replace(exp.column(RANK))
    for select in (inner, copy):
        if isinstance(select, exp.Select) and not any(e.is_star for e in select.expressions):
            select.append("expressions", exp.column(HOME))
            if select.args.get("group") is not None:  # one home per key: grouping by it too changes nothing
                select.args["group"].append("expressions", exp.column(HOME))
    return copy
