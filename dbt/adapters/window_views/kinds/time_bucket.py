"""A GROUP BY of a time bucket of the event time, read as the TUMBLE it is: Nexmark's q15-q17
group by `DATE_FORMAT(dateTime, 'yyyy-MM-dd')`, which is a day's window. Recognised once, here,
and rewritten into the window macro's own form (the input read through a TUMBLE subquery carrying
its marker, the GROUP BY by window_start, window_end), so the kinds that keep window TVFs
(registry.py), the batches that own windows (plans/batch_reads.py) and on_window_close keep it
with no rule of their own.

A bucket is one of: `date_format(t, p)` whose pattern `p` names the year, month and day and
optionally the hour, minute and second, each down to the finest (a day, hour, minute or second);
`to_date(t)`, `cast(t as date)` (a day); `date_trunc('DAY' | 'HOUR' | 'MINUTE' | 'SECOND', t)`;
`window(t, '<size>')` (Spark's tumbling window). Days are UTC days: the session time zone the
plugin sets. A time function of the event time that is not a bucket (a pattern without the month,
a month, a week) is refused with the reason, never computed as a window it is not.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from sqlglot import exp
from sqlglot.dialects.spark import Spark

from dbt.adapters.window_views.errors import AnalysisError
from dbt.adapters.window_views.query import macro_arguments, sqlexpr, window_columns
from dbt.adapters.window_views.query.intervals import Interval
from dbt.adapters.window_views.query.shown import shown
from dbt.adapters.window_views.query.tvf import MARKER, VERSION
from dbt.adapters.window_views.query.window_columns import Bound

_US = {"second": 1_000_000, "minute": 60_000_000, "hour": 3_600_000_000, "day": 86_400_000_000}
# date_format's fields from the coarsest; a bucket names a prefix of them down to the day or finer
_FIELDS = (("y", None), ("M", None), ("d", "day"), ("H", "hour"), ("m", "minute"), ("s", "second"))
_TRUNC_UNITS = {"DAY": "day", "DD": "day", "HOUR": "hour", "MINUTE": "minute", "SECOND": "second"}
_QUOTED = re.compile(r"'[^']*'")
_FIX = (
    "group by date_format(<time>, 'yyyy-MM-dd') (or 'yyyy-MM-dd HH', ...), to_date(<time>) or date_trunc('DAY', <time>)"
)


class BucketError(AnalysisError):
    """A GROUP BY of a time function that is not a fixed-size bucket of the event time."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(f"{problem}; fix: {fix}")


@dataclass(frozen=True)
class Bucket:
    """One GROUP BY item that is a bucket of the event time: its size as a window."""

    node: exp.Expression
    size: str  # "1 day", as the TUMBLE's marker shows it


def as_tumble(tree: exp.Expression, time_col: Optional[str], on_update: bool = False) -> Optional[exp.Expression]:
    """`tree` (not changed) rewritten into the TUMBLE form if it groups by a bucket of `time_col`
    (None: no watermark; of the column its first GROUP BY's time function reads);
    None if no GROUP BY holds a time bucket; BucketError for one a window cannot keep. `on_update`:
    a stream that replaces a window's rows by its bounds, which are added to the output if the
    model does not select them (window_start, window_end)."""
    time_col = time_col or _first_time_column(tree)
    if time_col is None:
        return None
    found = [(select, buckets) for select in tree.find_all(exp.Select) if (buckets := _buckets(select, time_col))]
    if not found:
        return None
    if len(found) > 1:
        raise BucketError(
            f"it groups by a time bucket of `{time_col}` in {len(found)} SELECTs, which are not one window",
            "group by the bucket once, in the query that reads the input, and aggregate its result downstream",
        )
    written, buckets = found[0]
    tables = [t for t in written.find_all(exp.Table) if t.parent_select is written]
    source = written.args.get("from_")
    if len(tables) != 1 or written.args.get("joins") or source is None or source.this is not tables[0]:
        raise BucketError(
            f"`{shown(buckets[0].node)}` groups rows that are not one input table's: that query reads "
            f"{'a join' if written.args.get('joins') else 'a subquery'}, which a window of `{time_col}` cannot own",
            "group by the bucket in a SELECT that reads one ref() or source() directly",
        )
    size = min(buckets, key=lambda b: Interval.parse(b.size).micros).size
    tumbled = tree.copy()
    select = next(s for s in tumbled.find_all(exp.Select) if s == written)
    _regroup(select, time_col)
    table = select.args["from_"].this
    table.replace(_windowed(table.copy(), time_col, size))
    if on_update:  # the stream replaces a window's rows by its bounds: the table keeps them
        kept = window_columns.selected(select)
        select.set("expressions", [*select.expressions, *(sqlexpr.column(b.value) for b in Bound if b not in kept)])
    return tumbled


def _first_time_column(tree: exp.Expression) -> Optional[str]:
    """The column of the first time function a GROUP BY of `tree` holds."""
    for group in tree.find_all(exp.Group):
        for item in group.expressions:
            column = _time_column(item)
            if column is not None:
                return column.name
    return None


def _buckets(select: exp.Select, time_col: str) -> List[Bucket]:
    """The SELECT's GROUP BY items that bucket `time_col`; BucketError where one of its time
    functions is not a bucket, or only another column is bucketed."""
    group = select.args.get("group")
    buckets, others = [], []
    for item in group.expressions if group else ():
        column = _time_column(item)
        if column is None:
            continue
        if column.name.lower() != time_col.strip("`").lower():
            others.append((item, column))
            continue
        buckets.append(Bucket(item, _size(item)))
    if others and not buckets:
        item, column = others[0]
        raise BucketError(
            f"it groups by `{shown(item)}`, a time bucket of `{column.name}`, not of the watermark column "
            f"`{time_col}`, so no watermark closes its groups",
            f"set watermark={{'column': '{column.name}', ...}}, or group by a bucket of `{time_col}`",
        )
    return buckets


def _time_column(node: exp.Expression) -> Optional[exp.Column]:
    """The column a time function of one column reads, or None if `node` is no such call."""
    if isinstance(node, (exp.TimeToStr, exp.TsOrDsToDate, exp.TimestampTrunc, exp.DateTrunc)):
        inner = node.this.this if isinstance(node.this, exp.TimeStrToTime) else node.this
    elif isinstance(node, (exp.Cast, exp.TryCast)) and node.to.is_type(exp.DataType.Type.DATE):
        inner = node.this
    elif isinstance(node, exp.Anonymous) and node.name.lower() == "window" and node.expressions:
        inner = node.expressions[0]
    else:
        return None
    return inner if isinstance(inner, exp.Column) else None


def _size(node: exp.Expression) -> str:
    """The window a bucket is, as '<n> <unit>'; BucketError if the call is not a bucket."""
    unit: Optional[str]
    if isinstance(node, exp.TimeToStr):
        unit = _pattern_unit(node)
    elif isinstance(node, exp.TsOrDsToDate):
        unit = None if node.args.get("format") else "day"
    elif isinstance(node, (exp.Cast, exp.TryCast)):
        unit = "day"
    elif isinstance(node, exp.TimestampTrunc):
        unit = _TRUNC_UNITS.get(node.unit.name.upper() if node.unit else "")
    elif isinstance(node, exp.Anonymous):
        return _window_size(node)
    else:  # trunc(t, 'MM'): a month or a year
        unit = None
    if unit is None:
        raise BucketError(
            f"it groups by `{shown(node)}`, a time function that is not a fixed-size bucket (a day, an hour, a "
            "minute or a second), so it is no window a watermark can close",
            _FIX,
        )
    return f"1 {unit}"


def _pattern_unit(node: exp.TimeToStr) -> Optional[str]:
    """The unit of a date_format pattern that names y, M, d (and H, m, s) down to its finest."""
    pattern = Spark().generator().format_time(node) or ""
    runs = re.findall(r"(([A-Za-z])\2*)", _QUOTED.sub("", pattern.strip("'")))
    letters = [letter for _, letter in runs]
    if any(run == "yy" for run, _ in runs) or len(set(letters)) != len(letters):
        return None  # a two-digit year folds centuries together; a field twice is not a plain bucket
    fields = [field for field, _ in _FIELDS]
    if set(letters) - set(fields) or sorted(letters, key=fields.index) != fields[: len(letters)]:
        return None
    return dict(_FIELDS)[letters[-1]] if letters else None


def _window_size(node: exp.Anonymous) -> str:
    """Spark's window(t, size): a TUMBLE of its size; a slide or start is another window."""
    if len(node.expressions) != 2 or not node.expressions[1].is_string:
        raise BucketError(
            f"it groups by `{shown(node)}`, a sliding or shifted window, which is no tumbling window of one bucket",
            "use window_views.hop(...) for a sliding window, or window(<time>, '<size>') for a tumbling one",
        )
    try:
        return Interval.parse(node.expressions[1].name, window=True).text
    except ValueError as exc:
        raise BucketError(f"it groups by `{shown(node)}`, whose size is not an interval", str(exc)) from exc


def _regroup(select: exp.Select, time_col: str) -> None:
    """Buckets outside aggregates read window_start (equal for every row of its window); the
    GROUP BY's buckets become window_start, window_end."""
    name = time_col.strip("`").lower()
    for node in list(_outside_aggregates(select)):
        column = _time_column(node)
        if column is None or column.name.lower() != name:
            continue
        if isinstance(node, exp.Anonymous):  # Spark's window(): its struct of start and end
            start, end = sqlexpr.column("window_start"), sqlexpr.column("window_end")
            node.replace(exp.func("named_struct", exp.Literal.string("start"), start, exp.Literal.string("end"), end))
        else:
            column.replace(sqlexpr.column("window_start"))
    group = select.args["group"]
    kept = [item for item in group.expressions if not _is_window_start_bucket(item)]
    group.set("expressions", [*kept, sqlexpr.column("window_start"), sqlexpr.column("window_end")])


def _is_window_start_bucket(item: exp.Expression) -> bool:
    column = _time_column(item)
    named = isinstance(item, exp.Anonymous) and item.name.lower() == "named_struct"
    return named or (column is not None and column.name.lower() == "window_start")


def _outside_aggregates(select: exp.Select) -> List[exp.Expression]:
    """The SELECT's own nodes (not its subqueries') that no aggregate function holds."""
    found: List[exp.Expression] = []
    stack: List[exp.Expression] = [v for k, v in _clauses(select)]
    while stack:
        node = stack.pop()
        if isinstance(node, (exp.AggFunc, exp.Select, exp.Subquery, exp.Window)):
            continue
        found.append(node)
        stack.extend(node.iter_expressions())
    return found


def _clauses(select: exp.Select) -> List[Tuple[str, exp.Expression]]:
    clauses = [("expressions", e) for e in select.expressions]
    for key in ("group", "having", "order"):
        if select.args.get(key) is not None:
            clauses.append((key, select.args[key]))
    return clauses


def _windowed(table: exp.Table, time_col: str, size: str) -> exp.Subquery:
    """The table read as window_views.tumble(table, time_col, size) reads it: its rows with the
    window bounds, rows without a time left out, under the TUMBLE's marker."""
    spec = macro_arguments.window_spec("tumble", {"time_col": time_col.strip("`"), "size": size})
    time = sqlexpr.column(time_col.strip("`"))
    start = sqlexpr.window_floor(sqlexpr.epoch_micros(time), spec["offset_us"], spec["size_us"])
    end = exp.Add(this=start.copy(), expression=exp.Literal.number(spec["size_us"]))
    alias = table.alias_or_name
    table.set("alias", None)
    rows = (
        exp.select(exp.Star(), *sqlexpr.window_bounds(start, end))
        .from_(table)
        .where(exp.Not(this=exp.Is(this=time, expression=exp.Null())))
    )
    rows.comments = [f" window_views:tvf:{VERSION} {json.dumps(spec)} "]
    assert MARKER.search(f"/*{rows.comments[0]}*/")  # the marker tvf.find reads back
    return exp.Subquery(this=rows, alias=exp.TableAlias(this=exp.to_identifier(alias)))
