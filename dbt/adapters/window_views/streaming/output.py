"""A micro-batch's output, staged beside the table for the commit protocol to publish.

on_window_close appends what the new watermark closed: final rows, written once. on_update
recomputes every window (over windows: every row) a new row changes and replaces them, rewriting
only the buckets (hours or days of window_end or event time: StreamPlan.bucket_sizes) that
hold such rows.
"""

from __future__ import annotations

import re
from typing import Any, Callable, List, Optional, Sequence, Tuple

from pyspark.sql import Window
from pyspark.sql import functions as F
from sqlglot import exp

from dbt.adapters.window_views import emit, paths, sqlexpr, storage
from dbt.adapters.window_views.config import Emit
from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.filesystems import FileSystem
from dbt.adapters.window_views.streaming.locations import Locations
from dbt.adapters.window_views.streaming.model_query import ModelQuery, counted
from dbt.adapters.window_views.streaming.plan import StreamPlan, is_session
from dbt.adapters.window_views.streaming.state import FROM, Recompute

WINDOW_START = sqlexpr.epoch_micros(sqlexpr.column("window_start"))
WINDOW_END = sqlexpr.epoch_micros(sqlexpr.column("window_end"))
T = exp.column("_wv_t")  # a retained row's event time, epoch micros
# a bucket's name: the `letter` of its size and its `index`
BUCKET_NAME = sqlexpr.parse("concat(:letter, cast(:index as string))")
NEW_BUCKETS, BULK_BUCKETS = "h", "b"  # hours, days (StreamPlan.bucket_sizes)
CUT = "_wv_cut"  # where a partition recomputes from (Output._cuts)


class Output:
    def __init__(self, plan: StreamPlan, where: Locations, query: ModelQuery, fs: FileSystem) -> None:
        self.plan = plan
        self.where = where
        self.query = query
        self.fs = fs
        # into an empty table, the event time (window_end) from which rows go in hours, before it
        # in days (_bucket_name); None: days only. Fixed by stage() for its batch
        self.hours_from: Optional[int] = None

    def stage(
        self,
        spark: Any,
        retained: Any,
        batch_id: int,
        w_prev: Optional[int],
        w_new: Optional[int],
        tmin: Optional[int],
        tmax: Optional[int],
        states: List[Any],
        recompute: Optional[Recompute],
    ) -> Tuple[int, List[str]]:
        """Stage this batch's output files; returns the rows written and the buckets replaced.
        `retained` holds the state's rows and the new ones (those in (tmin, tmax)); over windows
        `on_update` recompute from where `recompute` says (State.recompute_from; None for other
        models)."""
        window, staging = self.plan.window, storage.staging_dir(self.where.table, batch_id)
        if w_new is not None:  # the day of W + 1 - hold_horizon, floored: before 1970 too
            day = self.plan.bucket_sizes[BULK_BUCKETS]
            self.hours_from = (w_new + 1 - self.plan.hold_horizon) // day * day
        closes = w_new is not None and w_new != w_prev
        if window is None:
            if self.plan.config.emit == Emit.ON_UPDATE:
                return self._update_rows(spark, retained, tmin, w_new, recompute, staging, states)
            if not closes:
                return 0, []
            column = self.plan.watermark.column
            result = self.query.rewritten(
                spark, retained, states, lambda sql: emit.closing_rows(sql, column, w_prev, w_new)
            )
            return self._append(spark, result, staging), []
        session = is_session(window)
        after = WINDOW_END > w_prev if w_prev is not None else exp.true()
        if self.plan.config.emit == Emit.ON_WINDOW_CLOSE:
            if not closes:
                return 0, []
            rows = retained
            if w_prev is not None and not session:
                rows = rows.where(sqlexpr.to_sql(T >= w_prev - window.span))
            result = self.query.compute(spark, rows, exp.and_(after, WINDOW_END <= w_new))
            return self._append(spark, result, staging), []

        # on_update: recompute every window a new row falls in, and replace those windows
        if tmin is None:
            return 0, []
        if session:
            region, rows = after, retained
            low, high = w_prev, None
        else:
            lo, hi = tmin - window.span, tmax + window.span
            rows = retained.where(sqlexpr.to_sql(exp.and_(T >= lo, T < hi)))
            region = exp.and_(after, WINDOW_START >= lo, WINDOW_END <= hi)
            low, high = (lo if w_prev is None else max(lo, w_prev)), hi
        result = self.query.compute(spark, rows, region)
        return self._upsert(spark, result, _outside(region), WINDOW_END, _within(low, high), staging)

    def _update_rows(
        self,
        spark: Any,
        retained: Any,
        tmin: Optional[int],
        w_new: Optional[int],
        recompute: Recompute,
        staging: str,
        states: List[Any],
    ) -> Tuple[int, List[str]]:
        """Over windows, on_update: recompute every row from the first one a new row may change:
        the point the last batch kept its state for (`recompute.since`: no later than the first
        row any partition's next row changes, state.py), or with no state the first new row. When
        a partition is held back (`recompute.by`), only the partitions with new rows, each from
        its own point, rewriting only the hours that hold their rows from there."""
        if tmin is None:
            return 0, []
        cut = tmin if recompute.since is None else min(tmin, recompute.since)
        t = sqlexpr.epoch_micros(sqlexpr.column(self.plan.watermark.column))
        if not recompute.by:
            region = t >= cut
            result = self.query.compute(spark, retained, region, states)
            return self._upsert(spark, result, _outside(region), t, _within(cut - 1, None), staging)
        # the earliest point is held back by a partition (state.py): those with new rows recompute
        # from their own points, in the hours their retained rows from there fall in. The state
        # keeps each partition's rows from its point, so those hours hold every row replaced and
        # every row written, and the batch reads and rewrites them only, however long ago a
        # held-back partition's point lies: the hours between stay as they are
        cuts = self._cuts(retained, recompute.by)
        keys = [
            exp.NullSafeEQ(this=sqlexpr.column(c), expression=sqlexpr.column(f"_wv_by_{i}"))
            for i, c in enumerate(recompute.by)
        ]
        ours = F.expr(sqlexpr.to_sql(exp.and_(*keys, t >= sqlexpr.column(CUT))))
        hour = self.plan.hold_horizon
        if recompute.hours is not None:
            # recorded for the held-back partitions the new rows reach; the others' rows from their
            # points, and every new row, lie after the point they share or the first new row
            since = tmin if recompute.shared is None else min(tmin, recompute.shared)
            last = w_new + self.plan.watermark.delay.micros  # no row seen is later
            hours = sorted({*recompute.hours, *range(since // hour, last // hour + 1)})
        else:  # not recorded (past HELD_MAX): one small job finds them
            hours, cut = self._hours_from_cuts(retained, recompute.by, hour)
        result = self.query.compute(spark, retained, t >= cut, states).join(cuts, ours, "left_semi")
        # the old rows no partition with new rows recomputes (none before `cut`: no cut is earlier)
        return self._upsert(
            spark, result, lambda old: old.join(cuts, ours, "left_anti"), t, _holding(hours, hour), staging
        )

    @staticmethod
    def _hours_from_cuts(retained: Any, by: Tuple[str, ...], hour: int) -> Tuple[List[int], int]:
        """The hours (indices of `hour` micros) the retained rows of the partitions with new rows
        fall in from their cuts, and the earliest cut: the cuts again, as a window over the
        retained rows (one shuffle, where a join with the cuts' aggregate shuffles them twice)."""
        index = F.expr(sqlexpr.to_sql(sqlexpr.floor_index(T, hour)))
        new, own = _own_cut(lambda agg: agg.over(Window.partitionBy(*[F.col(f"`{c}`") for c in by])))
        theirs = retained.select(T.name, new.alias("_wv_new_t"), own.alias(CUT))
        theirs = theirs.where(f"_wv_new_t is not null and {T.name} >= {CUT}")
        found = theirs.agg(F.min(CUT).alias("cut"), F.collect_set(index).alias("hours")).first()
        return found["hours"], found["cut"]

    @staticmethod
    def _cuts(retained: Any, by: Tuple[str, ...]) -> Any:
        """Per partition with new rows (`_wv_by_<i>` its PARTITION BY values): where it recomputes
        from (CUT, _own_cut). Small: the state's rows are few per partition, so Spark shuffles it
        (hash joins, no broadcast job) beside the model's rows and the old output. (Collected
        once instead, as a local relation, the batch cost more: bench/README.)"""
        new, cut = _own_cut(lambda agg: agg)
        keys = [F.col(f"`{c}`").alias(f"_wv_by_{i}") for i, c in enumerate(by)]
        cuts = retained.groupBy(*keys).agg(new.alias("_wv_new_t"), cut.alias(CUT))
        return cuts.where("_wv_new_t is not null").drop("_wv_new_t").hint("shuffle_hash")

    def _upsert(
        self,
        spark: Any,
        result: Any,
        outside: Callable[[Any], Any],
        key: exp.Expression,
        reaches: Callable[[int, int], bool],
        staging: str,
    ) -> Tuple[int, List[str]]:
        """Replace the output rows in a region (`outside` keeps an old frame's rows outside it)
        by `result`, rewriting only the buckets of `key` that may hold such rows (`reaches`:
        whether the bucket of a size and index does): the result is staged, then the rows of
        those buckets outside the region beside it, in hours (an empty table: _bucket_name)."""
        files = storage.live_file_names(self.fs, self.where.table)
        bucket = sqlexpr.to_sql(exp.alias_(self._bucket_name(key, not files), storage.BUCKET))
        touched = set()
        for name in {storage.bucket_of(f) for f in files}:
            if reaches(*self._bucket(name, files)):
                touched.add(name)
        result, rows_out = counted(result)
        staged = result.selectExpr("*", bucket)
        existing = [paths.join(self.where.table, f) for f in files if storage.bucket_of(f) in touched]
        if existing:
            # the rows of those buckets outside the region, staged with the result in one write
            kept = outside(spark.read.schema(result.schema).parquet(*existing))
            staged = staged.unionByName(kept.selectExpr("*", bucket))
        staged.write.partitionBy(storage.BUCKET).mode("overwrite").parquet(str(staging))
        touched.update(storage.staged_buckets(self.fs, staging))
        return rows_out(), sorted(touched)

    def _bucket_name(self, key: exp.Expression, empty: bool) -> exp.Expression:
        """The bucket a row with `key` is staged in. Into a table with files: hours. Into an
        empty table: days before the day the next batch's rewrites reach back into (hours_from,
        that of W + 1 - hold_horizon: over windows, the shared point lies after it, and a window
        TVF rewrites windows ending after W), hours from it. So the history lands in few files and
        the next batch reads and rewrites the hours its rows reach, not a whole day; a day
        moves to hours when a later batch first rewrites it (a held-back partition's rows).
        Every staged bucket is touched or new either way: a batch never adds to a bucket it did
        not read, which publish would replace."""
        sizes = self.plan.bucket_sizes

        def named(letter: str) -> exp.Expression:
            index = sqlexpr.floor_index(key, sizes[letter])
            return sqlexpr.fill(BUCKET_NAME, letter=exp.Literal.string(letter), index=index)

        if not empty:
            return named(NEW_BUCKETS)
        if self.hours_from is None:  # no event time yet: no batch rewrites anything soon
            return named(BULK_BUCKETS)
        return exp.If(this=key >= self.hours_from, true=named(NEW_BUCKETS), false=named(BULK_BUCKETS))

    def _bucket(self, name: str, files: List[str]) -> Tuple[int, int]:
        """The size and index of the bucket a table file's name starts with. A table without a file
        log yet shows every file in its folder, also one put there by hand, which no bucket holds."""
        size = self.plan.bucket_sizes.get(name[:1])
        if size is None or not re.fullmatch(r"-?\d+", name[1:]):  # before 1970: negative
            stray = next(f for f in files if storage.bucket_of(f) == name)
            raise StreamFailure(
                self.plan.model,
                f"its table's folder holds `{stray}`, a file the window view did not write",
                "move that file out of the folder (it holds the window view's own files only) and run again: "
                "committed micro-batches are kept, this one is redone",
                path=self.where.table,
            )
        return size, int(name[1:])

    @staticmethod
    def _append(spark: Any, result: Any, staging: str) -> int:
        """Stage rows that are final: emitted once, appended, never rewritten."""
        result, rows_out = counted(result)
        result.selectExpr("*", f"'e' as {storage.BUCKET}").write.partitionBy(storage.BUCKET).mode("overwrite").parquet(
            str(staging)
        )
        return rows_out()


def _own_cut(per_partition: Callable[[Any], Any]) -> Tuple[Any, Any]:
    """A partition's first new row, and where it recomputes from (CUT): the earlier of that row
    and the point its kept rows hold (FROM); a partition without kept rows has no row a new one
    could change before it. `per_partition` makes an aggregate a partition's (a group's, or a
    window's over the partition)."""
    new = per_partition(F.min(F.when(F.col("_wv_new"), F.col("_wv_t"))))
    return new, F.least(F.coalesce(per_partition(F.min(FROM)), new), new)


def _within(low: Optional[int], high: Optional[int]) -> Callable[[int, int], bool]:
    """For Output._upsert: whether the bucket of a size and index may hold a key in (low, high]
    (None: unbounded)."""
    return lambda size, k: (low is None or (k + 1) * size > low + 1) and (high is None or k * size <= high)


def _holding(hours: Sequence[int], hour: int) -> Callable[[int, int], bool]:
    """For Output._upsert: whether the bucket of a size and index holds one of `hours` (indices
    of buckets of `hour` micros; a bucket's size is a multiple of it)."""
    return lambda size, k: any(k * size <= h * hour < (k + 1) * size for h in hours)


def _outside(region: exp.Expression) -> Callable[[Any], Any]:
    """For Output._upsert: the rows of a frame outside `region`, a condition over output columns."""
    return lambda rows: rows.where(sqlexpr.to_sql(exp.not_(sqlexpr.coalesce(region, False))))
