"""Over windows' prefix state folded in the pass that keeps the rows (prefix.py): the rows a
batch evicts summarized per group and partition and merged into the old summaries, written as
rows of the state beside the rows kept (state.py), in one write."""

from __future__ import annotations

from functools import reduce
from typing import Any, List, Sequence, Tuple

from pyspark.sql import functions as F
from sqlglot import exp

from dbt.adapters.window_views.kinds import overwindows, prefix
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.records import BatchId
from dbt.adapters.window_views.streaming.shapes.model_query import counted_if
from dbt.adapters.window_views.streaming.shapes.state import PART, State

OLD, EVICTED, KEPT = internal("old"), internal("evicted"), internal("kept")
PRESENT, ROW = internal("present"), internal("r")
# what a merged summary carries beside its columns: whether it had an old state, how many rows
# the batch evicted into it, and the partition's kept rows
_CARRIED = [exp.alias_(sqlexpr.column(OLD, "a"), OLD)] + [
    exp.alias_(sqlexpr.column(name, "b"), name) for name in (EVICTED, KEPT)
]


def _state_rows(merged: Any, rows: List[Any], part: str) -> Any:
    """A group's merged summaries as rows of the state: per partition its summary (when it has
    one) and its kept rows, each with NULL for the other's columns. Built as one SQL expression,
    one call into Spark: a Column per field is a py4j call each (105 -> 40 ms a group a batch)."""
    summary = [f.name for f in merged.schema.fields if f.name not in (OLD, EVICTED, KEPT)]
    names = [f.name for f in rows]
    kept = sqlexpr.column(KEPT)

    def field(of: exp.Expression, name: str) -> exp.Expression:
        return exp.Dot(this=of, expression=exp.to_identifier(name, quoted=True))

    def blank(typed: exp.Expression) -> exp.Expression:
        # a NULL of `typed`'s type, with no type to spell out (Spark folds the IF)
        return exp.If(this=exp.false(), true=typed, false=exp.null())

    def struct(values: Sequence[Tuple[str, exp.Expr]]) -> exp.Expression:
        return exp.Struct(expressions=[exp.alias_(v, n, quoted=True) for n, v in values])

    present = exp.or_(
        sqlexpr.coalesce(sqlexpr.column(OLD), exp.false()),
        sqlexpr.coalesce(sqlexpr.column(EVICTED), 0) > 0,
    )
    summary_row = struct(
        [(n, blank(field(exp.Bracket(this=kept.copy(), expressions=[exp.Literal.number(0)]), n))) for n in names]
        + [(n, sqlexpr.column(n)) for n in summary]
        + [(PART, exp.Literal.string(part)), (PRESENT, present)]
    )
    row = exp.column(ROW)
    kept_row = struct(
        [(n, field(row.copy(), n)) for n in names]
        + [(n, blank(sqlexpr.column(n))) for n in summary]
        + [(PART, exp.cast(exp.null(), "string")), (PRESENT, exp.true())]
    )
    kept_rows = exp.func(
        "transform",
        sqlexpr.coalesce(kept, exp.func("array")),
        exp.Lambda(this=kept_row, expressions=[exp.to_identifier(ROW)]),
    )
    rows_of = exp.func("inline", exp.func("concat", exp.func("array", summary_row), kept_rows))
    return merged.selectExpr(sqlexpr.to_sql(rows_of)).where(PRESENT).drop(PRESENT)


def save_folded(state: State, flagged: Any, old: List[Any], batch_id: BatchId) -> int:
    """The rows kept and each group's summary of the rows evicted, from one aggregate over
    the flagged rows (prefix.aggregate_all: per group and partition, the summary over the
    evicted rows, and the kept ones collected), so the window functions that flag the rows
    run once, with no cache: the pass a whole history goes through on an initial load. A
    partition's kept rows are what its frames still reach, so its array is small. Returns
    the rows kept."""
    spark = flagged.sparkSession
    groups = state.query.prefix_groups
    view = f"{state.plan.view}_flagged"
    rows = [f for f in flagged.schema.fields if f.name != overwindows.KEEP]
    if len(groups) > 1:  # each row once per group (prefix.GROUP)
        numbers = F.array(*[F.lit(g) for g in range(len(groups))])
        flagged = flagged.select(F.explode(numbers).alias(prefix.GROUP), "*")
    flagged.createOrReplaceTempView(view)
    keep = exp.column(overwindows.KEEP)
    evicted = exp.not_(keep)
    # each kept row once: in the rows of the group with the finest PARTITION BY, so that
    # its partitions' arrays are small (a global running total's would hold every kept row)
    finest = max(range(len(groups)), key=lambda g: len(groups[g][0]))
    collected = keep if len(groups) == 1 else exp.and_(exp.column(prefix.GROUP).eq(exp.Literal.number(finest)), keep)
    carried = [
        exp.alias_(prefix.filtered(exp.Count(this=exp.Literal.number(1)), evicted), EVICTED),
        exp.alias_(
            prefix.filtered(
                exp.func("collect_list", exp.Struct(expressions=[sqlexpr.column(f.name) for f in rows])), collected
            ),
            KEPT,
        ),
    ]
    new = spark.sql(sqlexpr.to_sql(prefix.aggregate_all(view, groups, evicted, carried)))
    parts = []
    for g, (partition_by, calls) in enumerate(groups):
        ours = new if len(groups) == 1 else new.where(f"{prefix.GROUP} = {g}")
        ours.createOrReplaceTempView(f"{view}_new{g}")
        old[g].withColumn(OLD, F.lit(True)).createOrReplaceTempView(f"{view}_old{g}")
        group = prefix.StateGroup(g, partition_by, tuple(calls))
        merged = spark.sql(prefix.merge_sql(f"{view}_old{g}", f"{view}_new{g}", group, _CARRIED))
        parts.append(_state_rows(merged, rows, f"g{g}"))
    rows_of_state, count = counted_if(
        reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), parts), F.col(PART).isNull()
    )
    state.write_rows(rows_of_state, batch_id)
    return count()
