"""Over-window models: a batch's retained rows sorted once for every window pass, the rows
closed by W emitted (on_window_close) or every row a new one changes recomputed and replaced
(on_update), and the state the frames still reach kept, with the prefix summaries of the rows
they let go (prefix_state.py)."""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

from pyspark.sql import Observation, Window
from pyspark.sql import functions as F
from sqlglot import exp

from dbt.adapters.window_views.kinds import emit, overwindows
from dbt.adapters.window_views.kinds.model_kind import OverWindows
from dbt.adapters.window_views.kinds.overwindows import OverPlan
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.query import analysis, sqlexpr
from dbt.adapters.window_views.records import BatchRecord, NewRowCounts, RecomputeRecord
from dbt.adapters.window_views.streaming.shapes import prefix_state, state
from dbt.adapters.window_views.streaming.shapes.base import NEW, Batch, ModelShape, Parts, Saved
from dbt.adapters.window_views.streaming.shapes.model_query import counted
from dbt.adapters.window_views.streaming.shapes.output import Staged, holding, outside, within
from dbt.adapters.window_views.streaming.shapes.state import FROM, Recompute, State

T = exp.column(internal("t"))  # a retained row's event time, epoch micros
CUT = internal("cut")  # where a partition recomputes from (_cuts)
NEW_T = internal("new_t")  # a partition's first new row


def sorted_once(spark: Any, retained: Any, over: OverPlan, view: str) -> Any:
    """An over-window batch's retained rows, clustered and sorted as every window pass over
    them reads them (OverPlan.sorted_by) and cached: the output's job shuffles and sorts them
    once, the state's pass reads them sorted, with no shuffle or sort of its own. It pays on an
    initial load, whose second sort of the history it saves (bench/history.md); a small batch
    breaks even. Calls over several PARTITION BYs or ORDER BYs are left to Spark."""
    spec = over.sorted_by
    if spec is None:
        return retained
    partition, order = spec
    retained.createOrReplaceTempView(view)
    # what a window pass requires of its input: its PARTITION BY ascending, then its ORDER BY
    # (bare column names, quoted here: sqlexpr.order_by would parse them as SQL)
    keys = [sqlexpr.ordered(sqlexpr.column(name)) for name in partition]
    keys += [sqlexpr.ordered(sqlexpr.column(name), desc, nulls_first) for name, desc, nulls_first in order]
    query = exp.select("*").from_(view)
    query.set("distribute", exp.Distribute(expressions=[sqlexpr.column(name) for name in partition]))
    query.set("sort", exp.Sort(expressions=keys))
    return spark.sql(sqlexpr.to_sql(query)).persist()


class OverShape(ModelShape):
    """Over windows: rows of the model's one input, ordered by the watermark column."""

    def __init__(self, plan: StreamPlan) -> None:
        super().__init__(plan)
        assert isinstance(plan.kind, OverWindows)  # chosen for over-window models
        self.over: OverPlan = plan.kind.over

    def retained(self, spark: Any, fresh: Any, state: State, previous: Tuple[str, ...], counts: NewRowCounts) -> Any:
        rows = super().retained(spark, fresh, state, previous, counts)
        return sorted_once(spark, rows, self.over, f"{self.plan.view}_sorted")

    def event_time(self) -> exp.Expr:
        return sqlexpr.epoch_micros(sqlexpr.column(self.plan.watermark.column))

    def retain_sql(self, kept: State, w_new: int) -> str:
        """The model's rows flagged whether the state keeps them (overwindows.KEEP)."""
        return overwindows.retain_sql(self.plan.parsed(), self.over, w_new)

    def save(self, parts: Parts, batch: Batch) -> Saved:
        """Keep the rows a frame still to come needs, and fold the ones it lets go into the
        prefix summaries; over windows `on_update` also record where the next batch recomputes
        from (the earliest point of all partitions; by partition, each kept row holds its
        partition's in FROM)."""
        rows = batch.retained.drop(NEW)
        if batch.w_new is None:  # no W yet: every row is kept
            kept, count = counted(rows)
            parts.state.write(kept, list(batch.states), batch.id)
            return Saved(count())
        parts.query.as_input(rows)
        flagged = batch.spark.sql(self.retain_sql(parts.state, batch.w_new))
        flagged = flagged.selectExpr("*", sqlexpr.to_sql(exp.alias_(self.event_time(), T.name)))
        flagged, recorded = self.observed(flagged, parts.state, batch.w_new)
        if batch.states:
            return Saved(prefix_state.save_folded(parts.state, flagged, list(batch.states), batch.id), recorded())
        kept, counter = counted(flagged.where(overwindows.KEEP).drop(overwindows.KEEP))
        parts.state.write_rows(kept, batch.id)
        return Saved(counter(), recorded())

    def observed(self, flagged: Any, kept: State, w_new: int) -> Tuple[Any, Callable[[], Optional[RecomputeRecord]]]:
        """The flagged rows as the state is written, and what the commit records of them."""
        return flagged, lambda: None


class OverOnWindowClose(OverShape):
    """Appends the rows W closes: final rows, written once."""

    def stage(self, parts: Parts, batch: Batch) -> Staged:
        if not batch.closes:
            return 0, []
        column, w_prev, w_new = self.plan.watermark.column, batch.w_prev, batch.w_new
        assert w_new is not None  # W moved
        result = parts.query.rewritten(
            batch.spark,
            batch.retained,
            batch.states,
            lambda sql: sqlexpr.to_sql(emit.closing_rows(analysis.parse(sql), column, w_prev, w_new)),
        )
        return parts.output.append(result), []


class OverOnUpdate(OverShape):
    """Recomputes every row from the first one a new row may change: the point the last batch
    kept its state for (no later than the first row any partition's next row changes,
    state.py), or with no state the first new row. When a partition is held back, only the
    partitions with new rows, each from its own point, rewriting only the hours that hold their
    rows from there."""

    def recompute(
        self, previous: Optional[BatchRecord], held_hit: Optional[Sequence[int]], by: Tuple[str, ...]
    ) -> Optional[Recompute]:
        return state.recompute_from(self.plan, previous, list(held_hit) if held_hit is not None else None, by)

    def retain_sql(self, kept: State, w_new: int) -> str:
        horizon = self.plan.hold_horizon if kept.by else None
        return overwindows.update_retain_sql(self.plan.parsed(), self.over, w_new, kept.small, horizon)

    def observed(self, flagged: Any, kept: State, w_new: int) -> Tuple[Any, Callable[[], Optional[RecomputeRecord]]]:
        bound = Observation()
        flagged = state.observed(flagged, bound, w_new, kept.by, self.plan.hold_horizon)
        return flagged, lambda: state.recorded(bound.get, kept.by)

    def stage(self, parts: Parts, batch: Batch) -> Staged:
        recompute, tmin = batch.recompute, batch.tmin
        if tmin is None or recompute is None:
            return 0, []
        cut = tmin if recompute.since is None else min(tmin, recompute.since)
        t = self.event_time()
        if not recompute.by:
            region = t >= cut
            result = parts.query.compute(batch.spark, batch.retained, region, batch.states)
            return parts.output.upsert(result, outside(region), t, within(cut - 1, None))
        # the earliest point is held back by a partition (state.py): those with new rows recompute
        # from their own points, in the hours their retained rows from there fall in. The state
        # keeps each partition's rows from its point, so those hours hold every row replaced and
        # every row written, and the batch reads and rewrites them only, however long ago a
        # held-back partition's point lies: the hours between stay as they are
        cuts = _cuts(batch.retained, recompute.by)
        keys = [
            exp.NullSafeEQ(this=sqlexpr.column(c), expression=sqlexpr.column(internal(f"by_{i}")))
            for i, c in enumerate(recompute.by)
        ]
        ours = F.expr(sqlexpr.to_sql(exp.and_(*keys, t >= sqlexpr.column(CUT))))
        hour = self.plan.hold_horizon
        if recompute.hours is not None and batch.w_new is not None:
            # recorded for the held-back partitions the new rows reach; the others' rows from their
            # points, and every new row, lie after the point they share or the first new row
            since = tmin if recompute.shared is None else min(tmin, recompute.shared)
            last = batch.w_new + self.plan.watermark.delay.micros  # no row seen is later
            hours = sorted({*recompute.hours, *range(since // hour, last // hour + 1)})
        else:  # not recorded (past HELD_MAX): one small job finds them
            hours, cut = _hours_from_cuts(batch.retained, recompute.by, hour)
        result = parts.query.compute(batch.spark, batch.retained, t >= cut, batch.states).join(cuts, ours, "left_semi")
        # the old rows no partition with new rows recomputes (none before `cut`: no cut is earlier)
        return parts.output.upsert(result, lambda old: old.join(cuts, ours, "left_anti"), t, holding(hours, hour))


def _own_cut(per_partition: Callable[[Any], Any]) -> Tuple[Any, Any]:
    """A partition's first new row, and where it recomputes from (CUT): the earlier of that row
    and the point its kept rows hold (FROM); a partition without kept rows has no row a new one
    could change before it. `per_partition` makes an aggregate a partition's (a group's, or a
    window's over the partition)."""
    new = per_partition(F.min(F.when(F.col(NEW), F.col(T.name))))
    return new, F.least(F.coalesce(per_partition(F.min(FROM)), new), new)


def _hours_from_cuts(retained: Any, by: Tuple[str, ...], hour: int) -> Tuple[List[int], int]:
    """The hours (indices of `hour` micros) the retained rows of the partitions with new rows
    fall in from their cuts, and the earliest cut: the cuts again, as a window over the
    retained rows (one shuffle, where a join with the cuts' aggregate shuffles them twice)."""
    index = F.expr(sqlexpr.to_sql(sqlexpr.floor_index(T, hour)))
    new, own = _own_cut(lambda agg: agg.over(Window.partitionBy(*[F.col(f"`{c}`") for c in by])))
    theirs = retained.select(T.name, new.alias(NEW_T), own.alias(CUT))
    theirs = theirs.where(f"{NEW_T} is not null and {T.name} >= {CUT}")
    found = theirs.agg(F.min(CUT).alias("cut"), F.collect_set(index).alias("hours")).first()
    return found["hours"], found["cut"]


def _cuts(retained: Any, by: Tuple[str, ...]) -> Any:
    """Per partition with new rows (`by_<i>` its PARTITION BY values): where it recomputes from
    (CUT, _own_cut). Small: the state's rows are few per partition, so Spark shuffles it (hash
    joins, no broadcast job) beside the model's rows and the old output. (Collected once
    instead, as a local relation, the batch cost more: bench/history.md.)"""
    new, cut = _own_cut(lambda agg: agg)
    keys = [F.col(f"`{c}`").alias(internal(f"by_{i}")) for i, c in enumerate(by)]
    cuts = retained.groupBy(*keys).agg(new.alias(NEW_T), cut.alias(CUT))
    return cuts.where(f"{NEW_T} is not null").drop(NEW_T).hint("shuffle_hash")
