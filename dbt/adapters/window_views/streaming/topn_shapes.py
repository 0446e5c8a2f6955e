"""A keyed Top-N (topn.py) kept current (emit='on_update'). A batch ranks the state's rows (each
key's top rows) of the keys its new rows have with those new rows once and keeps those within
the bound: a row that falls out never comes back, as the input only grows. The state's other
keys are not ranked: their rows are carried over as they were. The keys whose new rows are
among the kept get their output replaced, computed by the model's SQL over their kept rows, in
the buckets of those keys (Output.upsert_keys)."""

from __future__ import annotations

from typing import Any, Optional, Tuple

from pyspark.sql import functions as F
from sqlglot import exp

from dbt.adapters.window_views import sqlexpr
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.streaming.model_query import counted
from dbt.adapters.window_views.streaming.output import Staged
from dbt.adapters.window_views.streaming.plan import StreamPlan
from dbt.adapters.window_views.streaming.records import RecomputeRecord
from dbt.adapters.window_views.streaming.shapes import NEW, Batch, ModelShape, Parts
from dbt.adapters.window_views.streaming.state import State
from dbt.adapters.window_views.topn import RANK, TopN

# the output's buckets: a key's is a hash of it, so a batch rewrites those of the keys it changed
KEY_BUCKET_COUNT = 32
# up to this many new rows, the keys they have are broadcast to pick the state's and the output's
# rows of those keys (no shuffle of either); more: both sides shuffled, the keys' side hashed
BROADCAST_ROWS = 500_000


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

    def _keys(self, rows: Any, rows_in: int) -> Any:
        """The keys `rows` have (in `by_<i>`), broadcast for a batch of few new rows."""
        keys = rows.select(*[F.col(f"`{k}`").alias(b) for k, b in zip(self.top_n.keys, self.by)]).distinct()
        return F.broadcast(keys) if rows_in <= BROADCAST_ROWS else keys.hint("shuffle_hash")

    def retained(self, spark: Any, fresh: Any, state: State, previous_state: Optional[str], rows_in: int) -> Any:
        """The new rows and the state's rows of their keys ranked once, only those within the
        bound kept, cached for the output's job and the state's write (so both see one ranking
        of ties)."""
        rows = fresh.withColumn(NEW, F.lit(True))
        if previous_state:
            old = state.rows(spark, previous_state, fresh.schema)
            touched = old.join(self._keys(fresh, rows_in), F.expr(sqlexpr.to_sql(self.same_key)), "left_semi")
            rows = touched.withColumn(NEW, F.lit(False)).unionByName(rows, allowMissingColumns=True)
        rows.createOrReplaceTempView(self.plan.view)
        return spark.sql(self.top_n.state_sql).drop(RANK).persist()

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

    def save(self, parts: Parts, batch: Batch) -> Tuple[int, Optional[RecomputeRecord]]:
        """Keep each key's top rows: the bound times the keys (more with ties under RANK and
        DENSE_RANK). Those ranked, and the state's rows of the keys without new rows."""
        kept = batch.retained.drop(NEW)
        if batch.previous_state:
            old = parts.state.rows(batch.spark, batch.previous_state, kept.schema)
            same = F.expr(sqlexpr.to_sql(self.same_key))
            # the new rows' keys found again, from the cached ranked rows: retained()'s, unless
            # cached, read the batch's files again; a key missing here has no state rows
            kept = old.join(self._keys(batch.retained, batch.rows_in), same, "left_anti").unionByName(kept)
        kept, count = counted(kept)
        parts.state.write_rows(kept, batch.id)
        return count(), None
