"""A keyed Top-N (topn.py) kept current (emit='on_update'). A batch ranks the state's rows (each
key's top rows) of the keys its new rows have with those new rows once and keeps those within
the bound: a row that falls out never comes back, as the input only grows. The state's other
keys are not ranked. The keys whose new rows are among the kept get their output replaced,
computed by the model's SQL over their kept rows (Output.upsert_keys).

The ranked rows are written once, as the batch's state part, and the output is computed from
them as written: one ranking (of ties too), without caching it. Both writes follow the keys a
batch touches, not the whole result:
- The state is kept in parts: a batch writes the ranked rows of the keys it touched as a part of
  its own, and a key's rows are those of the latest part that has the key. Every PARTS_MAX-th
  part is the state written whole, which bounds what a batch reads.
- The output lies in buckets by when keys first came (a key's home, kept with its state rows):
  a batch's new keys go to the latest bucket while it is under OPEN_BYTES, else to a new one;
  a batch of many new rows spreads them over buckets by their latest event time. Keys that
  come back are mostly recent ones, so a batch rewrites the few recent buckets; a hash of the
  key would spread any 1% of keys over every bucket (bench/history.md)."""

from __future__ import annotations

import math
import re
from functools import reduce
from typing import Any, Callable, Dict, Tuple

from pyspark.sql import Window
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType
from sqlglot import exp

from dbt.adapters.window_views.kinds.model_kind import KeyedTopN
from dbt.adapters.window_views.kinds.topn import HOME, RANK, TopN
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.records import NewRowCounts
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.streaming.shapes.base import NEW, Batch, ModelShape, Parts, Saved
from dbt.adapters.window_views.streaming.shapes.model_query import counted, quoted
from dbt.adapters.window_views.streaming.shapes.output import HOME_BUCKETS, KEY_BUCKETS, Staged
from dbt.adapters.window_views.streaming.shapes.state import State

# up to this many new rows, the keys they have are broadcast to pick the state's and the output's
# rows of those keys (no shuffle of either); more: both sides shuffled, the keys' side hashed
BROADCAST_ROWS = 500_000
# at most this many parts: a batch that would make more writes the state whole, as its one part
PARTS_MAX = 8
ORDER, LATEST = internal("part_order"), internal("latest_part")  # a row's part, and its key's latest
# new keys join the latest bucket while its files are smaller than this
OPEN_BYTES = 16 << 20
# a batch's new keys go to one bucket per this many new rows, split by their latest event time
SPLIT_ROWS = 250_000
# before homes, a key's bucket was a hash of it: the rows of a state written then have no home
KEY_BUCKET_COUNT = 32


class TopNOnUpdate(ModelShape):
    """Each key's current top rows: a batch replaces the rows of the keys its new rows enter."""

    def __init__(self, plan: StreamPlan) -> None:
        super().__init__(plan)
        assert isinstance(plan.kind, KeyedTopN)  # chosen for keyed Top-N models
        self.top_n: TopN = plan.kind.top_n
        keys = [sqlexpr.column(k) for k in self.top_n.keys]
        hashed = exp.func("pmod", exp.func("xxhash64", *keys), exp.Literal.number(KEY_BUCKET_COUNT))
        self.hashed_home = exp.func("concat", exp.Literal.string(KEY_BUCKETS), exp.cast(hashed, "string"))
        # a row's key and a changed key (in `by_<i>`), the same, NULLs included
        self.by = [internal(f"by_{i}") for i in range(len(keys))]
        self.same_key = exp.and_(*[exp.NullSafeEQ(this=k, expression=sqlexpr.column(b)) for k, b in zip(keys, self.by)])
        self.event_time = sqlexpr.epoch_micros(sqlexpr.column(plan.watermark.column))
        # a batch's counts for save, by the job that writes its part: the state's rows its
        # ranking replaces, the rows it writes
        self._replaced: Callable[[], int] = lambda: 0
        self._written: Callable[[], int] = lambda: 0

    def _key(self) -> Any:
        """A window by the key (made when used: Spark's columns need a running Spark)."""
        return Window.partitionBy(*[F.col(f"`{k}`") for k in self.top_n.keys])

    def _keys(self, rows: Any, rows_in: int) -> Any:
        """The keys `rows` have (in `by_<i>`), broadcast for a batch of few new rows."""
        keys = rows.select(*[F.col(f"`{k}`").alias(b) for k, b in zip(self.top_n.keys, self.by)]).distinct()
        return F.broadcast(keys) if rows_in <= BROADCAST_ROWS else keys.hint("shuffle_hash")

    def retained(self, spark: Any, fresh: Any, state: State, previous: Tuple[str, ...], counts: NewRowCounts) -> Any:
        """The new rows and the state's rows of their keys ranked, only those within the bound
        kept, each with its key's home and its RANK: what the batch writes as its state part
        (stage) and computes its output from."""
        rows = fresh.withColumn(NEW, F.lit(True)).withColumn(HOME, F.lit(None).cast(StringType()))
        self._replaced = lambda: 0
        if previous:
            old = self._parts(spark, state, previous, fresh.schema)
            same = F.expr(sqlexpr.to_sql(self.same_key))
            touched = self._latest(old.join(self._keys(fresh, counts.rows), same, "left_semi"), len(previous))
            touched, self._replaced = counted(touched)
            rows = touched.withColumn(NEW, F.lit(False)).unionByName(rows)
        key = self._key()
        if previous:  # a key's home over all its rows: a row that falls out may hold it
            rows = rows.withColumn(HOME, F.max(HOME).over(key))
        rows.createOrReplaceTempView(self.plan.view)
        ranked = spark.sql(self.top_n.state_sql)
        first, split = self._open(state, counts)
        if split <= 1:
            return ranked.withColumn(HOME, F.coalesce(F.col(HOME), F.lit(f"{HOME_BUCKETS}{first}")))
        assert counts.tmin is not None and counts.tmax is not None  # split: new rows on time
        # by the latest time of the key's ranked rows: they are already grouped by key, no sort
        last_seen = F.max(F.expr(sqlexpr.to_sql(self.event_time))).over(key)
        part = F.floor((last_seen - F.lit(counts.tmin)) * split / (counts.tmax - counts.tmin + 1))
        new = F.concat(F.lit(HOME_BUCKETS), (F.lit(first) + F.least(part, F.lit(split - 1))).cast("string"))
        return ranked.withColumn(HOME, F.coalesce(F.col(HOME), new))

    def _open(self, state: State, counts: NewRowCounts) -> Tuple[int, int]:
        """Where a batch's new keys go: the first home (the latest bucket while it is small, else
        the next), and over how many from it (a batch of many new rows splits them by time)."""
        sizes: Dict[int, int] = {}
        for name, size in storage.live_file_sizes(state.fs, state.where.table).items():
            found = re.fullmatch(rf"{HOME_BUCKETS}(\d+)", storage.bucket_of(name))
            if found:
                sizes[int(found[1])] = sizes.get(int(found[1]), 0) + size
        first = max(sizes, default=0)
        if sizes and sizes[first] >= OPEN_BYTES:
            first += 1
        split = math.ceil(counts.rows / SPLIT_ROWS) if counts.tmin is not None else 1
        return first, split

    def _parts(self, spark: Any, state: State, folders: Tuple[str, ...], schema: Any) -> Any:
        """The rows of the state's parts, each with its part's place (ORDER) and its key's home."""
        schema = StructType([*schema.fields, StructField(HOME, StringType())])
        parts = [state.rows(spark, f, schema).withColumn(ORDER, F.lit(i)) for i, f in enumerate(folders)]
        hashed = F.expr(sqlexpr.to_sql(self.hashed_home))
        return reduce(lambda a, b: a.unionByName(b), parts).withColumn(HOME, F.coalesce(F.col(HOME), hashed))

    def _latest(self, rows: Any, parts: int) -> Any:
        """Of rows from `parts` parts (ORDER), each key's from the latest part that has the key."""
        if parts == 1:
            return rows.drop(ORDER)
        latest = F.max(ORDER).over(self._key())
        return rows.withColumn(LATEST, latest).where(F.col(ORDER) == F.col(LATEST)).drop(ORDER, LATEST)

    def _write_part(self, parts: Parts, batch: Batch) -> Any:
        """Write the batch's ranked rows as its state part, once, and read them back: the output
        is computed from the part, so both hold one ranking (of ties too) and one home per key,
        without caching the ranking. The batch that would make more than PARTS_MAX parts writes
        every key's latest rows instead (the earlier parts' as not new, without a rank)."""
        ranked, earlier = batch.retained, batch.previous_states
        if _whole(batch):
            every = self._parts(batch.spark, parts.state, earlier, ranked.drop(NEW, RANK, HOME).schema)
            every = every.withColumn(NEW, F.lit(False)).withColumn(RANK, F.lit(None).cast(ranked.schema[RANK].dataType))
            ranked = self._latest(every.unionByName(ranked.withColumn(ORDER, F.lit(len(earlier)))), len(earlier) + 1)
        written, self._written = counted(ranked)
        parts.state.write_rows(written, batch.id)
        return parts.state.rows(batch.spark, str(batch.id), ranked.schema)

    def stage(self, parts: Parts, batch: Batch) -> Staged:
        part = self._write_part(parts, batch)
        if batch.tmin is None:  # no new row on time: no key changes
            return 0, []
        entered = part.where(F.col(NEW))
        # the homes of the keys whose new rows made their top: one small job
        touched = [r[0] for r in entered.select(HOME).distinct().collect()]
        if not touched:
            return 0, []
        changed = self._keys(entered, batch.rows_in)
        same = F.expr(sqlexpr.to_sql(self.same_key))
        # without a state before, every key is new, so changed
        rows = part.join(changed, same, "left_semi") if batch.previous_states else part
        # the model over its ranked rows, as ranked (no second ranking), each with its key's home
        parts.query.as_input(rows, RANK, HOME)
        result = batch.spark.sql(self.top_n.output_sql)
        homed = result.select(*quoted(parts.query.schema.fieldNames()), F.col(HOME).alias(storage.BUCKET))
        return parts.output.upsert_keys(homed, lambda old: old.join(changed, same, "left_anti"), touched)

    def save(self, parts: Parts, batch: Batch) -> Saved:
        """Each key's top rows are kept (the bound times the keys; more with ties under RANK and
        DENSE_RANK): the part stage wrote, after the state's, or the state written whole."""
        if _whole(batch):
            return Saved(self._written(), folders=(str(batch.id),))
        rows = batch.kept_before - self._replaced() + self._written()
        return Saved(rows, folders=(*batch.previous_states, str(batch.id)))


def _whole(batch: Batch) -> bool:
    """Whether the batch writes the state whole: its part would be one more than PARTS_MAX allows."""
    return len(batch.previous_states) + 1 >= PARTS_MAX
