"""The adapter: dbt-spark's, plus the methods the window macros and materialization call."""

from __future__ import annotations

import gc
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from dbt.adapters.base import available
from dbt.adapters.base.impl import AdapterTrackingRelationInfo
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt_common.exceptions import CompilationError

from dbt.adapters.window_views.__version__ import version
from dbt.adapters.window_views.batch.materialization import BatchMaterialization
from dbt.adapters.window_views.batch.statement import check_orders
from dbt.adapters.window_views.catalog import WindowViewCatalog
from dbt.adapters.window_views.connections import WindowViewsConnectionManager, project_target
from dbt.adapters.window_views.errors import ModelConfigError, ModelSqlError
from dbt.adapters.window_views.kinds.partials import panes
from dbt.adapters.window_views.model.config import LateData, WindowViewsConfig
from dbt.adapters.window_views.model.kafka_source import KafkaSource, KafkaSourceError
from dbt.adapters.window_views.plans import filtered_reads
from dbt.adapters.window_views.plans.window_view import WindowViewPlan, summary
from dbt.adapters.window_views.query import ddl, macro_arguments, sqlexpr
from dbt.adapters.window_views.query.intervals import describe_epoch_micros
from dbt.adapters.window_views.relation_cache import LazyRelationCache
from dbt.adapters.window_views.spark.session import TIME_ZONE, embedded_settings, remote_url, spark_session
from dbt.adapters.window_views.storage.table_files import TableFiles

logger = AdapterLogger("WindowViews")


@dataclass
class StreamingAdapterResponse(AdapterResponse):
    """A streaming run's counts; dbt prints the message and keeps the fields in run_results.json."""

    batches: int = 0
    rows_in: int = 0
    rows_out: int = 0
    late_rows: int = 0
    watermark: Optional[str] = None
    state_rows: int = 0
    untimed_rows: int = 0  # of late_rows, those with a NULL time


class WindowViewsAdapter(BatchMaterialization, WindowViewCatalog, TableFiles, LazyRelationCache):
    ConnectionManager = WindowViewsConnectionManager
    AdapterSpecificConfigs = WindowViewsConfig

    def __init__(self, config: Any, mp_context: Any) -> None:
        creds = config.credentials
        if creds.method == SparkConnectionMethod.SESSION and not remote_url(creds.server_side_parameters):
            # the embedded default: settings the profile leaves out go under the project's target/
            target = project_target(config)
            creds.server_side_parameters = embedded_settings(target, creds.server_side_parameters)
        super().__init__(config, mp_context)
        if getattr(creds, "warm_spark", False):
            # a warm command is mostly dbt's own Python: Python's full collections traverse every
            # object dbt and its imports made (200k), 0.3 s a run; frozen now, they skip those
            gc.freeze()

    @classmethod
    def type(cls) -> str:
        return "window_views"

    @classmethod
    def get_adapter_run_info(cls, config: Any) -> AdapterTrackingRelationInfo:
        # the base class derives the module from the class name ("windowviews"). dbt's class
        # declares Hashable but its dataclass drops __hash__; dbt's own base builds it the same way
        return AdapterTrackingRelationInfo(  # type: ignore[abstract]
            adapter_name="window_views",
            base_adapter_version=import_module("dbt.adapters.__about__").version,
            adapter_version=version,
            model_adapter_details=cls._get_adapter_specific_run_info(config),
        )

    @available
    def window_view_plan(
        self, model_name: str, compiled_code: str, config: Mapping[str, Any], upstream: Sequence[Mapping[str, Any]]
    ) -> WindowViewPlan:
        """The model's plan (plan.py): every check that needs no Spark, the same one `dbt compile` ran.
        `compiled_code`: dbt's compiled SQL of the model, parsed once here into the plan's query form."""
        return _utc_checked(self, WindowViewPlan.from_model(model_name, compiled_code, config, upstream))

    @available
    def plan_window_aggregate(self, relation: str, window: Any, measures: Any, group_by: Any) -> Dict[str, Any]:
        """A pane plan for window_views.window_aggregate, or the reason to use the TVF form.
        `relation`: the macro's `relation` argument as it renders it (the FROM item, filtered by dbt's time range)."""
        try:
            plan = panes.plan_from_config(relation, window, measures, group_by)
        except panes.PlanError as exc:
            raise CompilationError(str(exc)) from exc
        if plan["fallback_reason"]:
            logger.debug(f"window_aggregate falls back to row expansion: {plan['fallback_reason']}")
        return plan

    @available
    def window_spec(self, macro: str, arguments: Mapping[str, Any]) -> Dict[str, Any]:
        """A window macro's arguments checked and read into its window's spec (query/macro_arguments.py)."""
        return macro_arguments.spec_of_call(macro, arguments)

    @available
    def window_column(self, name: Any, macro: str, argument: str) -> str:
        """A column a window macro's argument names, checked (names.py) and quoted."""
        return self.quote(macro_arguments.MacroArgument(macro, argument, name).column())

    @available
    def window_read(
        self, relation: Any, spec: Mapping[str, Any], macro: str, lookback: Optional[str]
    ) -> Dict[str, Optional[str]]:
        """A window macro's input under dbt's time filter, widened by its reach (filtered_reads.py)."""
        return filtered_reads.window_read(relation, spec, macro, lookback)

    @available
    def check_stream_columns(self, plan: WindowViewPlan) -> None:
        """The plan's column check (plan.check_columns) against the stream's input, before any
        other check that would let Spark report a misspelled column in its own words."""
        from dbt.adapters.window_views.streaming.runner import input_table

        spark = _stream_session(self.config.credentials, plan.model)

        def columns_of(relation: Any) -> List[Tuple[str, str]]:
            table = input_table(spark, plan.model, ".".join(p for p in relation if p))
            return [(f.name, f.dataType.simpleString()) for f in table.schema.fields]

        def first_value(query: Any) -> Optional[str]:
            rows = spark.sql(sqlexpr.to_sql(query)).collect()
            return None if not rows or rows[0][0] is None else str(rows[0][0])

        plan.check_columns(columns_of)
        check_orders(plan, columns_of, first_value)

    @available
    def declare_kafka_sources(self, sources: Sequence[Mapping[str, Any]]) -> None:
        """The model's Kafka sources (macros/_internal/kafka_sources.sql) put in the catalog as
        views that parse their topics, and each topic probed (streaming/kafka_sources.py)."""
        declared = [found for found in map(KafkaSource.from_node, sources) if found is not None]
        if not declared:
            return
        from dbt.adapters.window_views.streaming import kafka_sources

        creds = self.config.credentials
        if creds.method != SparkConnectionMethod.SESSION:
            raise KafkaSourceError(
                declared[0].name,
                f"a Kafka source is read through a SparkSession, which `method: {creds.method}` does not give",
                "use method: session",
            )
        spark = spark_session(creds.server_side_parameters)
        for source in declared:
            kafka_sources.declare(spark, source)

    @available
    def run_stream(
        self, plan: WindowViewPlan, relation: Any, full_refresh: bool, run_id: str, empty: bool = False
    ) -> Dict[str, Any]:
        """Run an execution='streaming' window view as a Structured Streaming query (streaming/);
        with `--empty`, leave its state untouched."""
        # imported here: a batch model's run needs none of the streaming runner (40 ms of imports)
        from dbt.adapters.window_views.streaming import runner

        model, stream = plan.model, plan.stream_plan
        spark = _stream_session(self.config.credentials, plan.model)
        if stream.over and stream.over.unbounded:
            logger.warning(
                f"window_view model '{model}': {'; '.join(stream.over.unbounded)} read(s) the whole partition "
                "in a way no per-partition summary serves, so its streaming state keeps every row of it; "
                "SUM/COUNT/AVG/MIN/MAX/FIRST_VALUE from UNBOUNDED PRECEDING and ranking functions keep a summary"
            )
        late_relation = relation.incorporate(path={"identifier": relation.identifier + "__late"})
        if empty:
            result = runner.empty(spark, stream, str(relation))
            response = StreamingAdapterResponse(_message=result.message(), code="EMPTY")
            return {"response": response, "plan": None, "late_relation": None}
        target = runner.Target(relation.schema, relation.identifier, str(relation), str(late_relation))
        result = runner.run(spark, stream, target, run_id, bool(full_refresh))
        properties = {**plan.properties(), **result.properties}
        response = StreamingAdapterResponse(
            _message=result.message(),
            code="STREAM",
            rows_affected=result.rows_out,
            batches=result.batches,
            rows_in=result.rows_in,
            rows_out=result.rows_out,
            late_rows=result.late,
            watermark=describe_epoch_micros(result.watermark),
            state_rows=result.state_rows,
            untimed_rows=result.untimed,
        )
        return {
            "response": response,
            "plan": {"properties": properties, "summary": summary(properties)},
            "late_relation": late_relation if plan.config.late_data is LateData.TABLE else None,
        }


def _stream_session(creds: Any, model: str) -> Any:
    """The SparkSession a stream runs on; other connection methods have none."""
    if creds.method != SparkConnectionMethod.SESSION:
        raise ModelConfigError(
            model,
            "execution",
            f"= 'streaming' drives a Structured Streaming query through a SparkSession, which "
            f"`method: {creds.method}` does not give",
            "fix: use method: session (in-process, spark.master for a cluster, or spark.remote for Spark "
            "Connect), or execution='batch'",
        )
    return spark_session(creds.server_side_parameters)


_UTC = frozenset({"UTC", "Z", "+00:00", "ETC/UTC", "GMT", "ETC/GMT", "UTC+0", "GMT+0"})


def _utc_checked(adapter: Any, plan: WindowViewPlan) -> WindowViewPlan:
    """A time bucket read as its TUMBLE cuts UTC days and hours, as the windows do; a session in
    another time zone labels and cuts them locally (date_format, to_date), so the two would disagree."""
    if not plan.time_bucket:
        return plan
    _, table = adapter.execute(ddl.show_setting(TIME_ZONE), fetch=True)
    zone = str(table.rows[0][1]) if table.rows else "UTC"
    if zone.upper() in _UTC:
        return plan
    raise ModelSqlError(
        plan.model,
        f"it groups by a time bucket, which the plugin computes as a window of UTC days and hours, and this "
        f"Spark session's {TIME_ZONE} is '{zone}', in which Spark cuts and labels the bucket by local time",
        f"remove {TIME_ZONE} from the profile's server_side_parameters (the plugin's Spark runs in UTC), or "
        "window the rows yourself: window_views.tumble(..., offset=...) with your zone's offset (docs/macros.md)",
    )
