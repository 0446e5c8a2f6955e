"""The time columns a model's windows read, and one query that counts their NULLs.

A time a model parses or casts without a format (`to_timestamp(ts)` of `13/05/2024 10:00:00`)
is NULL, which is in no window TVF and orders first in an over window: a build that reports OK
with no rows, or rows ordered by nothing. `reads(tree)` finds each window's time column and the
relation it is read from (through the tree: a table, dbt's filtered read or a CTE of the model),
and, where the model computes that column itself, the cast or parse that computes it;
`count_query` counts every read's rows and NULL times in one query, with a value that did not
parse, from which `formatted` guesses the format to give it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from sqlglot import exp

from dbt.adapters.window_views.errors import AnalysisError
from dbt.adapters.window_views.query import analysis, sqlexpr, tvf
from dbt.adapters.window_views.query.shown import shown

# casts and parses that read a string without being told its format
_UNFORMATTED = (exp.Cast, exp.TryCast, exp.TsOrDsToDate, exp.TsOrDsToTimestamp, exp.StrToTime, exp.StrToDate)
_PARSE_FUNCTIONS = ("to_timestamp", "try_to_timestamp", "to_date", "timestamp", "date")


@dataclass(frozen=True)
class Parse:
    """The model's own expression that computes a time column from a string, without a format."""

    expression: str  # as the user wrote it, e.g. `CAST(ts AS TIMESTAMP)`
    raw: str  # the column it parses


@dataclass(frozen=True)
class TimeRead:
    """A time column a window reads, and where from."""

    column: str
    relation: str  # the table or CTE it is read from, as the message names it
    windowed: bool  # a window TVF (a NULL time is in no window); else an over window (it orders first)
    source: exp.Expression  # the FROM item the window reads, a copy
    parse: Optional[Parse] = None
    parse_from: Optional[exp.Select] = None  # the CTE's query, where its parse is counted on its input


def reads(tree: exp.Expression, order_columns: Sequence[str] = ()) -> List[TimeRead]:
    """Every window TVF's time column, and the ORDER BY column of each over window ordered by
    one of `order_columns` (the watermark's, RANGE interval frames'), each once."""
    ctes = {cte.alias_or_name.lower(): cte.this for cte in tree.find_all(exp.CTE)}
    found: Dict[tuple, TimeRead] = {}
    for select in tree.find_all(exp.Select):
        markers = [c for c in select.comments or [] if "window_views:tvf:" in c]
        if not markers:
            continue
        for window in tvf.find("".join(f"/*{c}*/" for c in markers)):
            read = _read(select, window.time_col, True, ctes)
            if read is not None:
                found.setdefault((read.relation.lower(), read.column.lower()), read)
    wanted = {c.lower() for c in order_columns}
    try:
        calls = analysis.over_calls(tree)
    except AnalysisError:
        calls = []
    for call in calls:
        order = call.node.args.get("order")
        keys = order.expressions if order is not None else []
        if call.generated or len(keys) != 1 or not isinstance(keys[0].this, exp.Column):
            continue
        if keys[0].this.name.lower() not in wanted:
            continue
        holder = call.node.find_ancestor(exp.Select)
        read = _read(holder, keys[0].this.name, False, ctes) if holder is not None else None
        if read is not None:
            found.setdefault((read.relation.lower(), read.column.lower()), read)
    return list(found.values())


def _read(select: exp.Select, column: str, windowed: bool, ctes: Dict[str, exp.Expression]) -> Optional[TimeRead]:
    """The time column `column` of the one relation `select` reads (None: a join, or no FROM)."""
    source = _input_of(select)
    if source is None:
        return None
    table = source if isinstance(source, exp.Table) else source.find(exp.Table)
    if table is None:
        return None
    name = table.name if not table.db else f"{table.db}.{table.name}"
    defined = ctes.get(table.name.lower()) if not table.db else None
    parse, parse_from = None, None
    if isinstance(defined, exp.Select):
        parse = _parse_of(defined, column)
        if parse is not None and _plain(defined):
            parse_from = defined
    return TimeRead(column, name, windowed, source.copy(), parse, parse_from)


def _input_of(select: exp.Select) -> Optional[exp.Expression]:
    """What `select` reads its rows from, below the subqueries a macro nests over it (a
    session's): a table, a CTE name or dbt's `(select * from t where ...)`. None: a join."""
    source = getattr(select.args.get("from_"), "this", None)
    for _ in range(8):
        if source is None or select.args.get("joins"):
            return None
        inner = source.this if isinstance(source, exp.Subquery) else None
        if not isinstance(inner, exp.Select) or inner.is_star:
            return source
        select, source = inner, getattr(inner.args.get("from_"), "this", None)
    return None


def _parse_of(select: exp.Select, column: str) -> Optional[Parse]:
    """The cast or parse without a format that `select` computes `column` by, if it does."""
    for projection in select.selects:
        if projection.alias_or_name.lower() != column.lower() or not isinstance(projection, exp.Alias):
            continue
        value = projection.this
        unformatted = isinstance(value, _UNFORMATTED) and value.args.get("format") is None
        if isinstance(value, exp.Anonymous):
            unformatted = str(value.this).lower() in _PARSE_FUNCTIONS and len(value.expressions) == 1
            inner = value.expressions[0] if value.expressions else None
        else:
            inner = value.this
        if unformatted and isinstance(inner, exp.Column):
            return Parse(shown(value), inner.name)
    return None


def _plain(select: exp.Select) -> bool:
    """A query whose rows are its input's rows, filtered: its expressions can be counted there."""
    grouped = any(select.args.get(k) for k in ("group", "having", "distinct", "limit", "qualify"))
    return not grouped and not any(s.find(exp.AggFunc, exp.Window) for s in select.selects)


def count_query(tree: exp.Expression, time_reads: Sequence[TimeRead]) -> exp.Expression:
    """One row per read: (its index in `time_reads`, rows, NULL times, a value of the parsed
    column that the model's parse made NULL, or NULL); the model's CTEs ahead of them."""
    branches: List[exp.Expression] = []
    for index, read in enumerate(time_reads):
        if read.parse is not None and read.parse_from is not None:
            parsed = next(s.this for s in read.parse_from.selects if s.alias_or_name.lower() == read.column.lower())
            branch: exp.Expression = read.parse_from.copy()
            branch.set("expressions", _counts(index, parsed.copy(), sqlexpr.column(read.parse.raw)))
        else:
            branch = exp.select(*_counts(index, sqlexpr.column(read.column), None)).from_(read.source.copy())
        branches.append(branch)
    query = branches[0]
    for branch in branches[1:]:
        query = sqlexpr.node(exp.union(query, branch, distinct=False))
    with_ = tree.args.get("with_")
    if with_ is not None:
        if len(branches) > 1:
            query = exp.select("*").from_(exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier("c"))))
        query.set("with_", with_.copy())
    return query


def _counts(index: int, value: exp.Expression, raw: Optional[exp.Expression]) -> List[exp.Expression]:
    is_null = exp.Is(this=value, expression=exp.null())
    sample: exp.Expression = exp.cast(exp.null(), "string")
    if raw is not None:
        present = exp.not_(exp.Is(this=raw.copy(), expression=exp.null()))
        unparsed = exp.case().when(exp.and_(is_null.copy(), present), exp.cast(raw, "string"))
        sample = exp.Min(this=unparsed)
    aliased = [
        (exp.Literal.number(index), "i"),
        (exp.Count(this=exp.Star()), "n"),
        (exp.func("count_if", is_null), "nulls"),
        (sample, "sample"),
    ]
    return [sqlexpr.node(exp.alias_(value, name)) for value, name in aliased]


# a date and a time as strings spell them: day, month and year, then hours, minutes, seconds
_DATE = re.compile(r"^(\d{1,4})([/.\-])(\d{1,2})\2(\d{1,4})")
_TIME = re.compile(r"^[ T](\d{1,2}):(\d{2})(:\d{2})?(\.\d+)?")


def formatted(raw: str, sample: Optional[str]) -> str:
    """The parse to give `raw` for strings like `sample`: `to_timestamp(ts, 'dd/MM/yyyy HH:mm:ss')`
    (a format guessed from the value; a placeholder where the value does not tell)."""
    guess = _format_of(sample.strip()) if sample else None
    text = guess or "<its format, e.g. dd/MM/yyyy HH:mm:ss>"
    quote = '"' if "'" in text else "'"  # Spark reads 'a''b' as two literals: a quoted 'T' goes in "..."
    return f"to_timestamp({raw}, {quote}{text}{quote})"


def _format_of(value: str) -> Optional[str]:
    date = _DATE.match(value)
    if date is None:
        return None
    first, sep, second, third = date.group(1), date.group(2), date.group(3), date.group(4)
    if len(first) == 4:
        parts = ["yyyy", "MM", "dd"]
    elif len(third) in (2, 4):
        month_first = int(second) > 12 and int(first) <= 12  # 05/13/2024: the day is the second
        parts = ["MM", "dd"] if month_first else ["dd", "MM"]
        parts.append("yyyy" if len(third) == 4 else "yy")
    else:
        return None
    text = sep.join(parts)
    rest = value[date.end() :]
    clock = _TIME.match(rest)
    if clock is not None:
        text += ("'T'" if rest[0] == "T" else " ") + "HH:mm" + (":ss" if clock.group(3) else "")
        text += "." + "S" * (len(clock.group(4)) - 1) if clock.group(4) else ""
    return text


def every_null(read: TimeRead, rows: int, sample: Optional[str]) -> Tuple[str, str]:
    """(problem, fix) of a read whose time is NULL on every one of its `rows` rows."""
    if read.parse is not None:
        value = f" (such as {sample!r})" if sample else ""
        cause = (
            f"`{read.parse.expression}` in the model reads `{read.parse.raw}` without a format, and Spark makes "
            f"a string it cannot read that way NULL{value}"
        )
        fix = f"{formatted(read.parse.raw, sample)} as {read.column}, with the format its strings have"
    else:
        cause = (
            f"likely a cast or parse without a format where `{read.column}` is computed (e.g. `to_timestamp"
            f"({read.column})` upstream of strings like '13/05/2024 10:00:00', which Spark makes NULL)"
        )
        fix = (
            f"parse it with its strings' format where it is computed, e.g. {formatted(read.column, None)}, "
            "and build the upstream again"
        )
    what = "no row is in any window" if read.windowed else "its over windows order no row"
    problem = (
        f"every one of the {rows:,} rows it reads from {read.relation} has a NULL `{read.column}`, so {what}: {cause}"
    )
    return problem, fix


def some_null(read: TimeRead, nulls: int) -> str:
    """What a build says of a read whose time is NULL on some rows."""
    rows = f"{nulls:,} row{'s' if nulls != 1 else ''} with a NULL {read.column}"
    verb = "is" if nulls == 1 else "are"
    return f"{rows} {verb} in no window" if read.windowed else f"{rows} {verb} ordered first by its over windows"
