"""The adapter methods the batch window_view materialization calls (execution='batch'): a full
build's statement, an incremental run's batches, and the swap of a table built beside the
model's. A mixin of the adapter (impl.py), so dbt finds them as `@available` there."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, Mapping, Optional, Sequence

from dbt.adapters.base import available
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.spark.impl import SparkAdapter

from dbt.adapters.window_views.batch import incremental, swap, unchanged
from dbt.adapters.window_views.batch import statement as batch
from dbt.adapters.window_views.plans.window_view import WindowViewPlan
from dbt.adapters.window_views.spark.session import refresh_inputs
from dbt.adapters.window_views.storage.table_format import Build


class BatchMaterialization(SparkAdapter):
    """The batch materialization's adapter methods."""

    @available
    def batch_statement(self, plan: WindowViewPlan) -> Dict[str, Any]:
        """The statement that builds a batch window view, and the metadata to record with it."""
        refresh_inputs(self, plan.inputs)  # no stale reads in a long-lived session (session.py)
        return batch.statement(self, plan)

    @available
    def window_view_shown(
        self, model_name: str, compiled_code: str, config: Mapping[str, Any], upstream: Sequence[Mapping[str, Any]]
    ) -> str:
        """The query `dbt show` previews of a window view: what its table would hold, so with
        on_window_close only what the watermark closed (a streaming one as its batch build would)."""
        plan = WindowViewPlan.from_model(model_name, compiled_code, {**config, "execution": "batch"}, upstream)
        refresh_inputs(self, plan.inputs)
        return batch.shown(self, plan)

    @available
    def batch_response(self, response: AdapterResponse, nulls: Optional[str]) -> AdapterResponse:
        """The build's response, its message saying what the build found of NULL times."""
        if not nulls:
            return response
        return replace(response, _message=f"{response._message}; {nulls}")

    @available
    def run_batches(
        self, plan: WindowViewPlan, relation: Any, full_refresh: bool, location_root: Optional[str]
    ) -> incremental.BatchesWritten:
        """An incremental batch window view's run: the batches it owes, each replaced whole (incremental.py)."""
        refresh_inputs(self, plan.inputs)
        inputs = batch.InputColumns(self)
        output = batch.checked_output(self, plan, inputs)
        digest = unchanged.digest(self, plan)  # a full refresh reads every file too: its digest holds
        batch_run = incremental.BatchRun(self, plan, relation, location_root, output, digest)
        return incremental.run(batch_run, full_refresh, inputs.types_of)

    @available
    def build_beside(self, plan: WindowViewPlan, relation: Any, existing: Any) -> Build:
        """Where a batch window view's new table is built: beside its table, or in its place
        when the file format replaces a table in one transaction (swap.table_format)."""
        config = plan.config
        return swap.table_format(config.file_format.value).build(self, relation, existing, config.location_root)

    @available
    def swap_into_place(self, plan: WindowViewPlan, build: Build, relation: Any, existing: Any) -> None:
        """The new table takes the model's name; the one it replaces (or None), and its files, go."""
        swap.table_format(plan.config.file_format.value).into_place(self, build, relation, existing)
