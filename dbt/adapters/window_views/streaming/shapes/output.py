"""A micro-batch's output, staged beside the table for the commit protocol to publish: what the
batch's model shape (shapes.py) computed, appended or upserted by bucket.

on_window_close appends what the new watermark closed: final rows, written once. on_update
recomputes every window (over windows: every row) a new row changes and replaces them, rewriting
only the buckets (hours or days of window_end or event time: StreamPlan.bucket_sizes) that
hold such rows.
"""

from __future__ import annotations

import re
from typing import Any, Callable, List, NoReturn, Optional, Sequence, Set, Tuple

from pyspark.sql import functions as F
from sqlglot import exp

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.records import BatchId
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.storage import paths
from dbt.adapters.window_views.storage.filesystems import FileSystem
from dbt.adapters.window_views.streaming.commit.locations import Locations
from dbt.adapters.window_views.streaming.shapes.model_query import counted

# a bucket's name: the `letter` of its size and its `index`
BUCKET_NAME = sqlexpr.parse("concat(:letter, cast(:index as string))")
NEW_BUCKETS, BULK_BUCKETS = "h", "b"  # hours, days (StreamPlan.bucket_sizes)
# a keyed Top-N's (upsert_keys): homes, numbered as the keys first came; before homes, a hash of the key
HOME_BUCKETS, KEY_BUCKETS = "g", "k"
Staged = Tuple[int, List[str]]  # rows written, buckets replaced


class Output:
    """The table's files as one batch stages them (`w_new`: the watermark it reaches)."""

    def __init__(self, plan: StreamPlan, where: Locations, fs: FileSystem, batch_id: BatchId, w_new: Optional[int]):
        self.plan = plan
        self.where = where
        self.fs = fs
        self.staging = storage.staging_dir(where.table, batch_id)
        # into an empty table, the event time (window_end) from which rows go in hours, before it
        # in days (_bucket_name); None: days only. The day of W + 1 - hold_horizon, floored
        self.hours_from: Optional[int] = None
        if w_new is not None:
            day = plan.bucket_sizes[BULK_BUCKETS]
            self.hours_from = (w_new + 1 - plan.hold_horizon) // day * day

    def append(self, result: Any) -> int:
        """Stage rows that are final: emitted once, appended, never rewritten."""
        result, rows_out = counted(result)
        result.withColumn(storage.BUCKET, F.lit("e")).write.partitionBy(storage.BUCKET).mode("overwrite").parquet(
            str(self.staging)
        )
        return rows_out()

    def upsert(
        self, result: Any, outside: Callable[[Any], Any], key: exp.Expr, reaches: Callable[[int, int], bool]
    ) -> Staged:
        """Replace the output rows in a region (`outside` keeps an old frame's rows outside it)
        by `result`, rewriting only the buckets of `key` that may hold such rows (`reaches`:
        whether the bucket of a size and index does): the result is staged, then the rows of
        those buckets outside the region beside it, in hours (an empty table: _bucket_name)."""
        files = storage.live_file_names(self.fs, self.where.table)
        touched = {name for name in {storage.bucket_of(f) for f in files} if reaches(*self._bucket(name, files))}
        return self._replaced(result, outside, self._bucket_name(key, not files), touched, files)

    def upsert_keys(self, result: Any, outside: Callable[[Any], Any], touched: Sequence[str]) -> Staged:
        """Replace the output rows of some keys (`outside` keeps an old row of another key) by
        `result`, each row staged in the bucket its BUCKET column names (its key's home:
        topn_shapes.py), rewriting only the `touched` buckets, those of the keys replaced."""
        files = storage.live_file_names(self.fs, self.where.table)
        for name in {storage.bucket_of(f) for f in files}:
            if not re.fullmatch(rf"[{KEY_BUCKETS}{HOME_BUCKETS}]\d+", name):
                self._stray(name, files)
        result, rows_out = counted(result)
        columns = result.drop(storage.BUCKET).schema
        staged = result
        for name in sorted(touched):  # each bucket's other keys' rows, staged in it again
            existing = [paths.join(self.where.table, f) for f in files if storage.bucket_of(f) == name]
            if existing:
                kept = outside(result.sparkSession.read.schema(columns).parquet(*existing))
                staged = staged.unionByName(kept.withColumn(storage.BUCKET, F.lit(name)))
        staged.write.partitionBy(storage.BUCKET).mode("overwrite").parquet(str(self.staging))
        return rows_out(), sorted(set(touched) | set(storage.staged_buckets(self.fs, self.staging)))

    def _replaced(
        self, result: Any, outside: Callable[[Any], Any], bucket: exp.Expr, touched: Set[str], files: List[str]
    ) -> Staged:
        """`result` staged by `bucket` (its name), with the rows `outside` keeps of the
        `touched` buckets' files beside it, in one write; returns the rows of `result` and
        every bucket the publish replaces."""
        named = sqlexpr.to_sql(exp.alias_(bucket, storage.BUCKET))
        result, rows_out = counted(result)
        staged = result.selectExpr("*", named)
        existing = [paths.join(self.where.table, f) for f in files if storage.bucket_of(f) in touched]
        if existing:
            kept = outside(result.sparkSession.read.schema(result.schema).parquet(*existing))
            staged = staged.unionByName(kept.selectExpr("*", named))
        staged.write.partitionBy(storage.BUCKET).mode("overwrite").parquet(str(self.staging))
        return rows_out(), sorted(touched | set(storage.staged_buckets(self.fs, self.staging)))

    def _bucket_name(self, key: exp.Expr, empty: bool) -> exp.Expr:
        """The bucket a row with `key` is staged in. Into a table with files: hours. Into an
        empty table: days before the day the next batch's rewrites reach back into (hours_from,
        that of W + 1 - hold_horizon: over windows, the shared point lies after it, and a window
        TVF rewrites windows ending after W), hours from it. So the history lands in few files and
        the next batch reads and rewrites the hours its rows reach, not a whole day; a day
        moves to hours when a later batch first rewrites it (a held-back partition's rows).
        Every staged bucket is touched or new either way: a batch never adds to a bucket it did
        not read, which publish would replace."""
        sizes = self.plan.bucket_sizes

        def named(letter: str) -> exp.Expr:
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
            self._stray(name, files)
        return size, int(name[1:])

    def _stray(self, name: str, files: List[str]) -> NoReturn:
        """Fail on a bucket no batch wrote: a file someone put in the table's folder."""
        stray = next(f for f in files if storage.bucket_of(f) == name)
        raise StreamFailure(
            self.plan.model,
            f"its table's folder holds `{stray}`, a file the window view did not write",
            "move that file out of the folder (it holds the window view's own files only) and run again: "
            "committed micro-batches are kept, this one is redone",
            path=self.where.table,
        )


def within(low: Optional[int], high: Optional[int]) -> Callable[[int, int], bool]:
    """For Output.upsert: whether the bucket of a size and index may hold a key in (low, high]
    (None: unbounded)."""
    return lambda size, k: (low is None or (k + 1) * size > low + 1) and (high is None or k * size <= high)


def holding(hours: Sequence[int], hour: int) -> Callable[[int, int], bool]:
    """For Output.upsert: whether the bucket of a size and index holds one of `hours` (indices
    of buckets of `hour` micros; a bucket's size is a multiple of it)."""
    return lambda size, k: any(k * size <= h * hour < (k + 1) * size for h in hours)


def outside(region: exp.Expr) -> Callable[[Any], Any]:
    """For Output.upsert: the rows of a frame outside `region`, a condition over output columns."""
    return lambda rows: rows.where(sqlexpr.to_sql(exp.not_(sqlexpr.coalesce(region, False))))
