"""The rows a streaming window view keeps between micro-batches, and the prefix summaries of
the rows it let go (prefix.py). Each committed batch names its state folder, so a replayed batch
reads the state its first attempt read.

The summaries are written with the rows, in one write (one Spark job): a summary row has its
group in `_wv_part` and NULL for the row's columns, a kept row NULL in `_wv_part` and in the
summary columns."""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import Any, List, Mapping, Optional, Tuple

from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType
from sqlglot import exp

from dbt.adapters.window_views.kinds import overwindows, prefix
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.records import BatchId, BatchRecord, RecomputeRecord
from dbt.adapters.window_views.storage.filesystems import FileSystem
from dbt.adapters.window_views.streaming.commit.locations import Locations
from dbt.adapters.window_views.streaming.shapes.model_query import ModelQuery, quoted

T = exp.column(internal("t"))  # a retained row's event time, epoch micros
PART = internal("part")  # a state row's prefix group (g0, g1, ...); NULL for a kept input row
# The commit records where the next over-window `on_update` batch recomputes from
# (records.RecomputeRecord): the earliest point over all rows; by partition, the point the
# partitions not held back share and where the held-back ones are (held_position; not recorded
# past HELD_MAX), so that a batch whose new rows reach none of them recomputes from that point, as
# if none were held back (recompute_from), and per place the hours (of hold_horizon) its
# rows from its point lie in, so that one whose new rows reach some knows the hours it rewrites.
FROM = internal("from")  # a kept row's partition's overwindows.RECOMPUTE_FROM (ModelQuery.partitioned_by)
HELD_POSITIONS = 1 << 20
HELD_MAX = 1000  # more held-back partitions: not recorded, and each batch finds the points and hours (a job)


@dataclass(frozen=True)
class Recompute:
    """Where an over-window `on_update` batch recomputes from (recompute_from)."""

    since: Optional[int]  # the earliest point over all partitions (None: no state, from the first new row)
    # the PARTITION BY columns, when a partition is held back (overwindows.update_retain_sql): each
    # partition with new rows recomputes from its own point (FROM); empty: every one from `since`
    by: Tuple[str, ...] = ()
    # by partition, as the batch before recorded them: the point the partitions not held back
    # share, and the hours the held-back ones with new rows keep rows in from their points (None:
    # not recorded past HELD_MAX, so a job finds the hours: over_shapes.py)
    shared: Optional[int] = None
    hours: Optional[Tuple[int, ...]] = None


def held_position(by: Tuple[str, ...]) -> Any:
    """A partition's place among HELD_POSITIONS: a hash of its PARTITION BY values, the same in
    the state's rows and in new ones. Two partitions may share one (a batch then rewrites a held-back
    partition's hours where it need not), a partition never has two (no batch misses one)."""
    return F.pmod(F.xxhash64(*[F.col(f"`{c}`") for c in by]), F.lit(HELD_POSITIONS))


def held_rows_metric(previous: Optional[BatchRecord], by: Tuple[str, ...], on_time: Any) -> Optional[Any]:
    """For the count of a batch's new rows (`on_time`: those not late): the places of the
    partitions the batch before held back that they fall in (`held_hit`), when it recorded
    where they are (it records them, with the shared point, by partition only); else None."""
    recorded = previous.recompute if previous is not None else None
    positions = recorded.held_at if recorded is not None else None
    if not by or positions is None:
        return None
    place = held_position(by)
    return F.collect_set(F.when(on_time & place.isin(list(positions)), place))


def _with(schema: Any, *fields: StructField) -> Any:
    return StructType([*schema.fields, *fields])


def recompute_from(
    plan: StreamPlan, previous: Optional[BatchRecord], held_hit: Optional[List[int]], by: Tuple[str, ...]
) -> Recompute:
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
        and since < overwindows.held_back_before(previous.watermark, plan.hold_horizon)
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
    return Recompute(since, by, recorded.shared, hours)


def observed(flagged: Any, bound: Any, w_new: int, by: Tuple[str, ...], horizon: int) -> Any:
    """Over windows `on_update`: the flagged rows the state keeps, observed (`bound`) for where
    the next batch recomputes from (recorded); `by` the PARTITION BY by which each partition
    keeps its own point, `horizon` the plan's hold_horizon."""
    point = F.col(overwindows.RECOMPUTE_FROM)
    metrics = [F.min(point).alias("from")]
    if by:
        held = point < overwindows.held_back_before(w_new, horizon)
        # a held-back partition's place and the hours of its rows from its point (all kept)
        hour = F.expr(sqlexpr.to_sql(sqlexpr.floor_index(T, horizon)))
        at = F.struct(held_position(by).alias("place"), hour.alias("hour"))
        metrics += [
            F.min(F.when(~held, point)).alias("shared"),
            F.collect_set(F.when(held & (F.col(T.name) >= point), at)).alias("held"),
        ]
    flagged = flagged.observe(bound, *metrics)
    if by:  # each partition's own, kept beside its rows
        return flagged.withColumnRenamed(overwindows.RECOMPUTE_FROM, FROM)
    return flagged.drop(overwindows.RECOMPUTE_FROM)  # the same in every row


def recorded(found: Mapping[str, Any], by: Tuple[str, ...]) -> RecomputeRecord:
    """What the commit records of `observed`'s metrics (the places only up to HELD_MAX)."""
    if not by:
        return RecomputeRecord(found.get("from"))
    hours: dict = {}
    for place, hour in found.get("held") or []:
        hours.setdefault(str(place), []).append(hour)
    if len(hours) > HELD_MAX:
        return RecomputeRecord(found.get("from"), by, found.get("shared"))
    return RecomputeRecord(
        found.get("from"),
        by,
        found.get("shared"),
        tuple(sorted(map(int, hours))),
        {p: tuple(sorted(h)) for p, h in sorted(hours.items())},
    )


class State:
    """The state folders of a batch: the rows it keeps and the prefix summaries beside them."""

    def __init__(self, plan: StreamPlan, where: Locations, query: ModelQuery, fs: FileSystem, small: bool) -> None:
        self.plan = plan
        self.where = where
        self.query = query
        self.fs = fs
        self.small = small  # the batch is planned as one job (shuffles.small)
        self.by = query.partitioned_by

    def _read(self, spark: Any, state: str, schema: Any, part: Optional[str]) -> Any:
        """The rows of `state` with `part` in PART (None: the kept input rows)."""
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

    def write(self, kept: Any, states: List[Any], batch_id: BatchId) -> None:
        """The kept rows and each group's summary, in one write."""
        parts = [kept] + [s.coalesce(1).withColumn(PART, F.lit(f"g{g}")) for g, s in enumerate(states)]
        self.write_rows(reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), parts), batch_id)

    def write_rows(self, rows: Any, batch_id: BatchId) -> None:
        rows.write.mode("overwrite").parquet(self.where.state_rows(batch_id))
