"""A keyed Top-N (topn.py) kept current (emit='on_update'). A batch ranks the state's rows (each
key's top rows) of the keys its new rows have with those new rows once and keeps those within
the bound: a row that falls out never comes back, as the input only grows. The state's other
keys are not ranked. The keys whose new rows are among the kept get their output replaced,
computed by the model's SQL over their kept rows, in the buckets of those keys
(Output.upsert_keys).

The state is kept in parts: a batch writes the ranked rows of the keys it touched as a part of
its own, and a key's rows are those of the latest part that has the key. So a batch writes what
it ranked, not every key's rows; every PARTS_MAX-th part it writes the state whole, in one part,
which bounds what a batch reads."""

from __future__ import annotations

from functools import reduce
from typing import Any, Callable, Tuple

from pyspark.sql import Window
from pyspark.sql import functions as F
from sqlglot import exp

from dbt.adapters.window_views import sqlexpr
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.streaming.model_query import counted
from dbt.adapters.window_views.streaming.output import Staged
from dbt.adapters.window_views.streaming.plan import StreamPlan
from dbt.adapters.window_views.streaming.shapes import NEW, Batch, ModelShape, Parts, Saved
from dbt.adapters.window_views.streaming.state import State
from dbt.adapters.window_views.topn import RANK, TopN

# the output's buckets: a key's is a hash of it, so a batch rewrites those of the keys it changed
KEY_BUCKET_COUNT = 32
# up to this many new rows, the keys they have are broadcast to pick the state's and the output's
# rows of those keys (no shuffle of either); more: both sides shuffled, the keys' side hashed
BROADCAST_ROWS = 500_000
# at most this many parts: a batch that would make more writes the state whole, as its one part
PARTS_MAX = 8
ORDER, LATEST = internal("part_order"), internal("latest_part")  # a row's part, and its key's latest


class TopNOnUpdate(ModelShape):
    """Each key's current top rows: a batch replaces the rows of the keys its new rows enter."""

    def __init__(self, plan: StreamPlan) -> None:
        super().__init__(plan)
        assert plan.top_n is not None  # chosen for keyed Top-N models
        self.top_n: TopN = plan.top_n
        keys = [sqlexpr.column(k) for k in self.top_n.keys]
        self.bucket = exp.func("pmod", exp.func("xxhash64", *keys), exp.Literal.number(KEY_BUCKET_COUNT))
        # a row's key and a changed key (in `by_<i>`), the same, NULLs included
        self.by = [internal(f"by_{i}") for i in range(len(keys))]
        self.same_key = exp.and_(*[exp.NullSafeEQ(this=k, expression=sqlexpr.column(b)) for k, b in zip(keys, self.by)])
        # the state's rows the batch's ranking replaces, counted by the job that caches it
        self._replaced: Callable[[], int] = lambda: 0

    def _keys(self, rows: Any, rows_in: int) -> Any:
        """The keys `rows` have (in `by_<i>`), broadcast for a batch of few new rows."""
        keys = rows.select(*[F.col(f"`{k}`").alias(b) for k, b in zip(self.top_n.keys, self.by)]).distinct()
        return F.broadcast(keys) if rows_in <= BROADCAST_ROWS else keys.hint("shuffle_hash")

    def retained(self, spark: Any, fresh: Any, state: State, previous: Tuple[str, ...], rows_in: int) -> Any:
        """The new rows and the state's rows of their keys ranked once, only those within the
        bound kept, cached for the output's job and the state's write (so both see one ranking
        of ties)."""
        rows = fresh.withColumn(NEW, F.lit(True))
        self._replaced = lambda: 0
        if previous:
            old = self._parts(spark, state, previous, fresh.schema)
            same = F.expr(sqlexpr.to_sql(self.same_key))
            touched = self._latest(old.join(self._keys(fresh, rows_in), same, "left_semi"), len(previous))
            touched, self._replaced = counted(touched)
            rows = touched.withColumn(NEW, F.lit(False)).unionByName(rows, allowMissingColumns=True)
        rows.createOrReplaceTempView(self.plan.view)
        return spark.sql(self.top_n.state_sql).drop(RANK).persist()

    def _parts(self, spark: Any, state: State, folders: Tuple[str, ...], schema: Any) -> Any:
        """The rows of the state's parts, each with its part's place (ORDER)."""
        parts = [state.rows(spark, f, schema).withColumn(ORDER, F.lit(i)) for i, f in enumerate(folders)]
        return reduce(lambda a, b: a.unionByName(b), parts)

    def _latest(self, rows: Any, parts: int) -> Any:
        """Of rows from `parts` parts (ORDER), each key's from the latest part that has the key."""
        if parts == 1:
            return rows.drop(ORDER)
        latest = F.max(ORDER).over(Window.partitionBy(*[F.col(f"`{k}`") for k in self.top_n.keys]))
        return rows.withColumn(LATEST, latest).where(F.col(ORDER) == F.col(LATEST)).drop(ORDER, LATEST)

    def stage(self, parts: Parts, batch: Batch) -> Staged:
        if batch.tmin is None:  # no new row on time: no key changes
            return 0, []
        entered = batch.retained.where(F.col(NEW))
        # the buckets of the keys whose new rows made their top: one small job
        touched = [r[0] for r in entered.select(F.expr(sqlexpr.to_sql(self.bucket))).distinct().collect()]
        if not touched:
            return 0, []
        changed = self._keys(entered, batch.rows_in)
        same = F.expr(sqlexpr.to_sql(self.same_key))
        rows = batch.retained.join(changed, same, "left_semi")
        result = parts.query.compute(batch.spark, rows, exp.true())
        return parts.output.upsert_keys(result, lambda old: old.join(changed, same, "left_anti"), self.bucket, touched)

    def save(self, parts: Parts, batch: Batch) -> Saved:
        """Keep each key's top rows: the bound times the keys (more with ties under RANK and
        DENSE_RANK). The ranked rows are a part of their own, after the state's; a batch that
        would make more than PARTS_MAX parts writes every key's latest rows as its one part."""
        ranked = batch.retained.drop(NEW)
        earlier = batch.previous_states
        if len(earlier) + 1 < PARTS_MAX:
            kept, count = counted(ranked)
            parts.state.write_rows(kept, batch.id)
            return Saved(batch.kept_before - self._replaced() + count(), folders=(*earlier, str(batch.id)))
        every = self._parts(batch.spark, parts.state, earlier, ranked.schema)
        every = every.unionByName(ranked.withColumn(ORDER, F.lit(len(earlier))))
        whole, count = counted(self._latest(every, len(earlier) + 1))
        parts.state.write_rows(whole, batch.id)
        return Saved(count(), folders=(str(batch.id),))
