"""The rows a streaming window view keeps between micro-batches, and the prefix summaries of
the rows it let go (prefix.py). Each committed batch names its state folder, so a replayed batch
reads the state its first attempt read.

The summaries are written with the rows, in one write (one Spark job): a summary row has its
group in `_wv_part` and NULL for the row's columns, a kept row NULL in `_wv_part` and in the
summary columns."""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import Any, Dict, List, Optional, Tuple

from pyspark.sql import Observation
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType
from sqlglot import exp

from dbt.adapters.window_views import overwindows, prefix, sqlexpr
from dbt.adapters.window_views.filesystems import FileSystem
from dbt.adapters.window_views.streaming.locations import Locations
from dbt.adapters.window_views.streaming.model_query import ModelQuery, counted, counted_if, quoted
from dbt.adapters.window_views.streaming.plan import StreamPlan, is_session
from dbt.adapters.window_views.streaming.records import BatchId, BatchRecord, RecomputeRecord

T = exp.column("_wv_t")  # a retained row's event time, epoch micros
PART = "_wv_part"  # a state row's prefix group (g0, g1, ...); NULL for a kept input row
# The commit records where the next over-window `on_update` batch recomputes from
# (records.RecomputeRecord): the earliest point over all rows; by partition, the point the
# partitions not held back share and where the held-back ones are (held_position; not recorded
# past HELD_MAX), so that a batch whose new rows reach none of them recomputes from that point, as
# if none were held back (State.recompute_from), and per place the hours (of hold_horizon) its
# rows from its point lie in, so that one whose new rows reach some knows the hours it rewrites.
FROM = "_wv_from"  # a kept row's partition's overwindows.RECOMPUTE_FROM (ModelQuery.partitioned_by)
HELD_POSITIONS = 1 << 20
HELD_MAX = 1000  # more held-back partitions: not recorded, and each batch finds the points and hours (a job)


@dataclass(frozen=True)
class Recompute:
    """Where an over-window `on_update` batch recomputes from (State.recompute_from)."""

    since: Optional[int]  # the earliest point over all partitions (None: no state, from the first new row)
    # the PARTITION BY columns, when a partition is held back (overwindows.update_retain_sql): each
    # partition with new rows recomputes from its own point (FROM); empty: every one from `since`
    by: Tuple[str, ...] = ()
    # by partition, as the batch before recorded them: the point the partitions not held back
    # share, and the hours the held-back ones with new rows keep rows in from their points (None:
    # not recorded past HELD_MAX, so a job finds the hours: Output._update_rows)
    shared: Optional[int] = None
    hours: Optional[Tuple[int, ...]] = None


def held_position(by: Tuple[str, ...]) -> Any:
    """A partition's place among HELD_POSITIONS: a hash of its PARTITION BY values, the same in
    the state's rows and in new ones. Two partitions may share one (a batch then rewrites a held-back
    partition's hours where it need not), a partition never has two (no batch misses one)."""
    return F.pmod(F.xxhash64(*[F.col(f"`{c}`") for c in by]), F.lit(HELD_POSITIONS))


def held_rows_metric(previous: Optional[BatchRecord], by: Tuple[str, ...], on_time: Any) -> List[Any]:
    """For the count of a batch's new rows (`on_time`: those not late): the places of the
    partitions the batch before held back that they fall in (`held_hit`), when it recorded
    where they are (it records them, with the shared point, by partition only)."""
    recorded = previous.recompute if previous is not None else None
    positions = recorded.held_at if recorded is not None else None
    if not by or positions is None:
        return []
    place = held_position(by)
    return [F.collect_set(F.when(on_time & place.isin(positions), place)).alias("held_hit")]


def _with(schema: Any, *fields: StructField) -> Any:
    return StructType([*schema.fields, *fields])


# what a merged summary carries beside its columns: whether it had an old state, how many rows
# the batch evicted into it, and the partition's kept rows
_CARRIED = [exp.alias_(sqlexpr.column("_wv_old", "a"), "_wv_old")] + [
    exp.alias_(sqlexpr.column(name, "b"), name) for name in ("_wv_evicted", "_wv_kept")
]


def _state_rows(merged: Any, rows: List[Any], part: str) -> Any:
    """A group's merged summaries as rows of the state: per partition its summary (when it has
    one) and its kept rows, each with NULL for the other's columns. Built as one SQL expression,
    one call into Spark: a Column per field is a py4j call each (105 -> 40 ms a group a batch)."""
    summary = [f.name for f in merged.schema.fields if f.name not in ("_wv_old", "_wv_evicted", "_wv_kept")]
    names = [f.name for f in rows]
    kept = sqlexpr.column("_wv_kept")

    def field(of: exp.Expression, name: str) -> exp.Expression:
        return exp.Dot(this=of, expression=exp.to_identifier(name, quoted=True))

    def blank(typed: exp.Expression) -> exp.Expression:
        # a NULL of `typed`'s type, with no type to spell out (Spark folds the IF)
        return exp.If(this=exp.false(), true=typed, false=exp.null())

    def struct(values: List[Tuple[str, exp.Expression]]) -> exp.Expression:
        return exp.Struct(expressions=[exp.alias_(v, n, quoted=True) for n, v in values])

    present = exp.or_(
        sqlexpr.coalesce(sqlexpr.column("_wv_old"), exp.false()),
        sqlexpr.coalesce(sqlexpr.column("_wv_evicted"), 0) > 0,
    )
    summary_row = struct(
        [(n, blank(field(exp.Bracket(this=kept.copy(), expressions=[exp.Literal.number(0)]), n))) for n in names]
        + [(n, sqlexpr.column(n)) for n in summary]
        + [(PART, exp.Literal.string(part)), ("_wv_present", present)]
    )
    row = exp.column("_wv_r")
    kept_row = struct(
        [(n, field(row.copy(), n)) for n in names]
        + [(n, blank(sqlexpr.column(n))) for n in summary]
        + [(PART, exp.cast(exp.null(), "string")), ("_wv_present", exp.true())]
    )
    kept_rows = exp.func(
        "transform",
        sqlexpr.coalesce(kept, exp.func("array")),
        exp.Lambda(this=kept_row, expressions=[exp.to_identifier("_wv_r")]),
    )
    rows_of = exp.func("inline", exp.func("concat", exp.func("array", summary_row), kept_rows))
    return merged.selectExpr(sqlexpr.to_sql(rows_of)).where("_wv_present").drop("_wv_present")


class State:
    def __init__(self, plan: StreamPlan, where: Locations, query: ModelQuery, fs: FileSystem, small: bool) -> None:
        self.plan = plan
        self.where = where
        self.query = query
        self.fs = fs
        self.small = small  # the batch is planned as one job (shuffles.small)
        self.by = query.partitioned_by

    def _read(self, spark: Any, state: str, schema: Any, part: Optional[str]) -> Any:
        """The rows of `state` with `part` in `_wv_part` (None: the kept input rows)."""
        fields = [StructField(PART, StringType())] + (
            [StructField(FROM, LongType())] if self.by and part is None else []
        )
        rows = spark.read.schema(_with(schema, *fields)).parquet(self.where.state_rows(state))
        which = exp.column(PART).is_(exp.null()) if part is None else exp.column(PART).eq(exp.Literal.string(part))
        return rows.where(sqlexpr.to_sql(which)).drop(PART)

    def rows(self, spark: Any, state: str, schema: Any) -> Any:
        return self._read(spark, state, schema, None)

    def prefix_states(self, spark: Any, rows: Any, state: Optional[str]) -> List[Any]:
        """Per group of prefix calls, the summary of the rows evicted so far."""
        if not self.query.prefix_groups:
            return []
        view = f"{self.plan.view}_evicted"
        rows.select(*quoted(self.query.columns)).limit(0).createOrReplaceTempView(view)
        states = []
        for g, (partition_by, calls) in enumerate(self.query.prefix_groups):
            blank = spark.sql(prefix.aggregate_sql(view, g, partition_by, calls))
            states.append(blank if state is None else self._read(spark, state, blank.schema, f"g{g}"))
        return states

    def _write(self, kept: Any, states: List[Any], batch_id: BatchId) -> None:
        """The kept rows and each group's summary, in one write."""
        parts = [kept] + [s.coalesce(1).selectExpr("*", f"'g{g}' as {PART}") for g, s in enumerate(states)]
        self._write_rows(reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), parts), batch_id)

    def _write_rows(self, rows: Any, batch_id: BatchId) -> None:
        rows.write.mode("overwrite").parquet(self.where.state_rows(batch_id))

    def save(
        self, retained: Any, w_new: Optional[int], states: List[Any], batch_id: BatchId
    ) -> Tuple[int, Optional[RecomputeRecord]]:
        """Write the rows an open window or a frame still to come needs; returns how many, and
        for over windows `on_update` where the next batch recomputes from (the earliest point of
        all partitions; by partition, each kept row holds its partition's in FROM). Over windows
        fold the rows they evict into the prefix state."""
        if self.plan.window is not None or w_new is None:
            kept, count = counted(self._unclosed(retained, w_new))
            self._write(kept, states, batch_id)
            return count(), None
        over = self.plan.over
        assert over is not None  # a plan without a window has over windows
        spark = retained.sparkSession
        self.query.as_input(retained)
        update = self.plan.recomputes_rows
        if update:
            horizon = self.plan.hold_horizon if self.by else None
            sql = overwindows.update_retain_sql(self.plan.sql, over, w_new, self.small, horizon)
        else:
            sql = overwindows.retain_sql(self.plan.sql, over, w_new)
        flagged = spark.sql(sql).selectExpr("*", sqlexpr.to_sql(exp.alias_(self._event_time(), T.name)))
        bound = Observation() if update else None
        if bound is not None:  # read as the state is written
            flagged = self._observed(flagged, bound, w_new)
        if states:
            rows = self._save_folded(flagged, states, batch_id)
        else:
            kept, counter = counted(flagged.where(overwindows.KEEP).drop(overwindows.KEEP))
            self._write_rows(kept, batch_id)
            rows = counter()
        return rows, (self._recorded(bound.get) if bound is not None else None)

    def _event_time(self) -> exp.Expr:
        return sqlexpr.epoch_micros(sqlexpr.column(self.plan.watermark.column))

    def _observed(self, flagged: Any, bound: Any, w_new: int) -> Any:
        """The flagged rows, observed for where the next batch recomputes from (_recorded)."""
        point = F.col(overwindows.RECOMPUTE_FROM)
        metrics = [F.min(point).alias("from")]
        if self.by:
            held = point < overwindows.held_back_before(w_new, self.plan.hold_horizon)
            # a held-back partition's place and the hours of its rows from its point (all kept)
            hour = F.expr(sqlexpr.to_sql(sqlexpr.floor_index(T, self.plan.hold_horizon)))
            at = F.struct(held_position(self.by).alias("place"), hour.alias("hour"))
            metrics += [
                F.min(F.when(~held, point)).alias("shared"),
                F.collect_set(F.when(held & (F.col(T.name) >= point), at)).alias("held"),
            ]
        flagged = flagged.observe(bound, *metrics)
        if self.by:  # each partition's own, kept beside its rows
            return flagged.withColumnRenamed(overwindows.RECOMPUTE_FROM, FROM)
        return flagged.drop(overwindows.RECOMPUTE_FROM)  # the same in every row

    def _recorded(self, found: Dict[str, Any]) -> RecomputeRecord:
        if not self.by:
            return RecomputeRecord(found.get("from"))
        hours: Dict[str, List[int]] = {}
        for place, hour in found.get("held") or []:
            hours.setdefault(str(place), []).append(hour)
        if len(hours) > HELD_MAX:
            return RecomputeRecord(found.get("from"), self.by, found.get("shared"))
        return RecomputeRecord(
            found.get("from"),
            self.by,
            found.get("shared"),
            tuple(sorted(map(int, hours))),
            {p: tuple(sorted(h)) for p, h in sorted(hours.items())},
        )

    def recompute_from(self, previous: Optional[BatchRecord], held_hit: Optional[List[int]] = None) -> Recompute:
        """Over windows `on_update`: where this batch recomputes from, as recorded by the batch
        before (`since` None: it kept no state, so from the first new row). When a partition is
        held back but none of this batch's new rows is in one (`held_hit`: the places of those
        they are in, found with the count of the new rows, held_rows_metric), the batch
        recomputes from the point the others share: a held-back partition keeps every row from
        its own, earlier point, so its rows after the shared one are recomputed as they were.
        When some are, each partition with new rows from its own point, in the hours recorded
        for their places and those from the shared point on."""
        recorded = previous.recompute if previous is not None else None
        if previous is None or recorded is None:
            return Recompute(None)
        since = recorded.since
        # the earliest point is a held-back partition's own: each partition from its own
        held = (
            bool(recorded.by)
            and since is not None
            and previous.watermark is not None
            and since < overwindows.held_back_before(previous.watermark, self.plan.hold_horizon)
        )
        if not held:
            return Recompute(since)
        if held_hit is not None and not held_hit:  # found only where the places, and so the shared point, were recorded
            return Recompute(recorded.shared)
        # the places hit are among those recorded (and carried on) with their hours
        hours = (
            None
            if held_hit is None or recorded.held_hours is None
            else tuple(sorted({h for p in held_hit for h in recorded.held_hours[str(p)]}))
        )
        return Recompute(since, self.by, recorded.shared, hours)

    def _save_folded(self, flagged: Any, old: List[Any], batch_id: BatchId) -> int:
        """The rows kept and each group's summary of the rows evicted, from one aggregate over
        the flagged rows (prefix.aggregate_all: per group and partition, the summary over the
        evicted rows, and the kept ones collected), so the window functions that flag the rows
        run once, with no cache: the pass a whole history goes through on an initial load. A
        partition's kept rows are what its frames still reach, so its array is small. Returns
        the rows kept."""
        spark = flagged.sparkSession
        groups = self.query.prefix_groups
        view = f"{self.plan.view}_flagged"
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
        collected = (
            keep if len(groups) == 1 else exp.and_(exp.column(prefix.GROUP).eq(exp.Literal.number(finest)), keep)
        )
        carried = [
            exp.alias_(prefix.filtered(exp.Count(this=exp.Literal.number(1)), evicted), "_wv_evicted"),
            exp.alias_(
                prefix.filtered(
                    exp.func("collect_list", exp.Struct(expressions=[sqlexpr.column(f.name) for f in rows])), collected
                ),
                "_wv_kept",
            ),
        ]
        new = spark.sql(sqlexpr.to_sql(prefix.aggregate_all(view, groups, evicted, carried)))
        parts = []
        for g, (partition_by, calls) in enumerate(groups):
            ours = new if len(groups) == 1 else new.where(f"{prefix.GROUP} = {g}")
            ours.createOrReplaceTempView(f"{view}_new{g}")
            old[g].selectExpr("*", "true as _wv_old").createOrReplaceTempView(f"{view}_old{g}")
            merged = spark.sql(prefix.merge_sql(f"{view}_old{g}", f"{view}_new{g}", g, partition_by, calls, _CARRIED))
            parts.append(_state_rows(merged, rows, f"g{g}"))
        state, count = counted_if(
            reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), parts), F.col(PART).isNull()
        )
        self._write_rows(state, batch_id)
        return count()

    def _unclosed(self, retained: Any, w_new: Optional[int]) -> Any:
        """Window TVFs: the retained rows some open window needs."""
        if w_new is None:
            return retained
        window = self.plan.window
        if self.plan.slicing is not None:  # pane partials (pane_state.py): `_wv_t` is a pane's start
            return retained.where(sqlexpr.to_sql(sqlexpr.parse(window.last_end("_wv_t")) > w_new))
        if not is_session(window):
            # a row no later than w_new - span is in no open window; said of the time column
            # itself, parquet skips the files and row groups that hold only such rows
            since = exp.cast(sqlexpr.column(self.plan.watermark.column), "timestamp") > exp.func(
                "timestamp_micros", exp.Literal.number(w_new - window.span)
            )
            return retained.where(sqlexpr.to_sql(exp.and_(since, sqlexpr.parse(window.last_end("_wv_t")) > w_new)))
        # sessions: a row is needed while the session it belongs to (as far as the state knows)
        # may still grow, i.e. its last row + gap is after W
        keys = [sqlexpr.column(k) for k in window.partition_by]
        by_time = [sqlexpr.ordered(T)]
        starts = exp.If(
            this=sqlexpr.window(exp.Lag(this=T), keys, by_time) >= T - window.gap,
            true=exp.Literal.number(0),
            false=exp.Literal.number(1),
        )
        rows = sqlexpr.frame("ROWS", ("UNBOUNDED", "PRECEDING"), ("CURRENT ROW", None))
        session = sqlexpr.window(exp.Sum(this=exp.column("_wv_new")), keys, by_time, rows)
        end = sqlexpr.window(exp.Max(this=T), [*keys, exp.column("_wv_session")]) + window.gap
        sessions = (
            retained.selectExpr("*", sqlexpr.to_sql(exp.alias_(starts, "_wv_new")))
            .selectExpr("*", sqlexpr.to_sql(exp.alias_(session, "_wv_session")))
            .selectExpr("*", sqlexpr.to_sql(exp.alias_(end, "_wv_session_end")))
        )
        return sessions.where(sqlexpr.to_sql(exp.column("_wv_session_end") > w_new)).drop(
            "_wv_new", "_wv_session", "_wv_session_end"
        )
