"""The adapter: dbt-spark's, plus the methods the window macros and materialization call."""

from __future__ import annotations

import re
from importlib import import_module
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from dbt.adapters.base import available
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.base.impl import AdapterTrackingRelationInfo
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.exceptions import CompilationError

from dbt.adapters.window_views import analysis, emit, overwindows, panes, storage, streaming
from dbt.adapters.window_views.__version__ import version
from dbt.adapters.window_views.config import ConfigError, WindowViewConfig, WindowViewsConfig
from dbt.adapters.window_views.connections import WindowViewsConnectionManager
from dbt.adapters.window_views.session import embedded_defaults, remote_url, spark_session
from dbt.adapters.window_views.watermark import batch_watermark

logger = AdapterLogger("WindowViews")
_TABLE_COMMENT = re.compile(r"^Comment: (.*)$", re.MULTILINE)


@dataclass
class StreamingAdapterResponse(AdapterResponse):
    """A streaming run's counts; dbt prints the message and keeps the fields in run_results.json."""

    batches: int = 0
    rows_in: int = 0
    rows_out: int = 0
    late_rows: int = 0
    watermark: Optional[str] = None


class WindowViewsAdapter(SparkAdapter):
    ConnectionManager = WindowViewsConnectionManager
    AdapterSpecificConfigs = WindowViewsConfig

    def __init__(self, config: Any, mp_context: Any) -> None:
        creds = config.credentials
        if creds.method == SparkConnectionMethod.SESSION and not remote_url(creds.server_side_parameters):
            # the embedded default: settings the profile leaves out go under the project's target/
            target = Path(config.project_root) / config.target_path
            creds.server_side_parameters = {**embedded_defaults(target), **creds.server_side_parameters}
        super().__init__(config, mp_context)

    @classmethod
    def type(cls) -> str:
        return "window_views"

    @classmethod
    def get_adapter_run_info(cls, config: Any) -> AdapterTrackingRelationInfo:
        # the base class derives the module from the class name ("windowviews")
        return AdapterTrackingRelationInfo(
            adapter_name="window_views",
            base_adapter_version=import_module("dbt.adapters.__about__").version,
            adapter_version=version,
            model_adapter_details=cls._get_adapter_specific_run_info(config),
        )

    @available
    def validate_window_view(self, model_name: str, config: Mapping[str, Any]) -> None:
        """Check a window_view's config; a bad key or value is a compilation error."""
        try:
            WindowViewConfig.from_model(model_name, dict(config))
        except ConfigError as exc:
            raise CompilationError(str(exc)) from exc

    @available
    def plan_window_aggregate(self, relation_sql: str, window: Any, measures: Any, group_by: Any) -> Dict[str, Any]:
        """A pane plan for window_views.window_aggregate, or the reason to use the TVF form."""
        try:
            plan = panes.plan_from_config(relation_sql, window, measures, group_by)
        except panes.PlanError as exc:
            raise CompilationError(str(exc)) from exc
        if plan["fallback_reason"]:
            logger.debug(f"window_aggregate falls back to row expansion: {plan['fallback_reason']}")
        return plan

    @available
    def plan_window_view(self, model_name: str, compiled_sql: str, config: Mapping[str, Any]) -> Dict[str, Any]:
        """The statement that builds a batch window view, and the metadata to record with it."""
        parsed = WindowViewConfig.from_model(model_name, dict(config))
        properties = parsed.properties()
        windows = analysis.tvf_markers(compiled_sql)
        try:
            tree = analysis.parse(compiled_sql)
            over = [call.sql for call in analysis.over_calls(tree) if not call.generated]
        except analysis.AnalysisError:
            tree, over = None, []  # Spark parses what sqlglot cannot; batch on_update does not need it
        if windows:
            properties["window_views.windows"] = "; ".join(windows)
        if over:
            properties["window_views.over_windows"] = "; ".join(over)
        sql = compiled_sql
        if parsed.emit == "on_window_close":
            assert parsed.watermark is not None
            try:
                tree = tree if tree is not None else analysis.parse(compiled_sql)
                reached = batch_watermark(self, tree, parsed.watermark)
                # descending frames over the watermark column close once mirrored to ascending ones
                ascending = tree.sql("spark") if overwindows.ascending(tree, parsed.watermark.column) else compiled_sql
                sql = emit.close_filter(ascending, parsed.watermark.column, reached.micros, self._output_columns(compiled_sql))
            except analysis.AnalysisError as exc:
                raise CompilationError(f"window_view model '{model_name}': {exc}") from exc
            properties["window_views.watermark_reached"] = reached.describe()
        summary = ", ".join(f"{k.split('.', 1)[1]}: {v}" for k, v in properties.items())
        return {"sql": sql, "properties": properties, "summary": f"Window view ({summary})"}

    def _output_columns(self, sql: str) -> List[str]:
        _, table = self.execute(f"describe query {sql}", fetch=True)
        return [row[0] for row in table.rows]

    def _get_columns_for_catalog(self, relation: Any) -> Iterable[Dict[str, Any]]:
        """dbt-spark's catalog rows, plus the table comment, where window views keep their
        window summary, so `dbt docs` shows it."""
        match = _TABLE_COMMENT.search(getattr(relation, "information", None) or "")
        comment = match.group(1).strip() if match else None
        for column in super()._get_columns_for_catalog(relation):
            if comment:
                column["table_comment"] = comment
                if "Window view (" in comment:
                    column.update({
                        "stats:window_view:label": "Window view",
                        "stats:window_view:value": comment[comment.index("Window view (") + 13:-1],
                        "stats:window_view:description": "window kinds, emit mode and watermark",
                        "stats:window_view:include": True,
                    })
            yield column

    @available
    def table_location(self, relation: Any) -> Optional[str]:
        """Where a table's files live (external tables keep them after DROP)."""
        _, table = self.execute(f"describe table extended {relation}", fetch=True)
        for row in table.rows:
            if row[0] == "Location":
                return row[1]
        return None

    @available
    def remove_location(self, location: Optional[str]) -> None:
        """Delete an old external table's files, which DROP TABLE leaves behind."""
        creds = self.config.credentials
        if not location or creds.method != SparkConnectionMethod.SESSION or remote_url(creds.server_side_parameters):
            logger.debug(f"leaving {location} in place: only an in-process session can remove files")
            return
        spark = spark_session(creds.server_side_parameters)
        jvm = spark.sparkContext._jvm
        path = jvm.org.apache.hadoop.fs.Path(location)
        path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).delete(path, True)

    @available
    def run_streaming_window_view(
        self,
        model_name: str,
        compiled_sql: str,
        config: Mapping[str, Any],
        relation: Any,
        upstream: Sequence[Mapping[str, Any]],
        full_refresh: bool,
        run_id: str,
    ) -> Dict[str, Any]:
        """Run an execution='streaming' window view as a Structured Streaming query (see streaming.py)."""
        parsed = WindowViewConfig.from_model(model_name, dict(config))
        creds = self.config.credentials
        if creds.method != SparkConnectionMethod.SESSION:
            raise CompilationError(
                f"window_view model '{model_name}': execution='streaming' drives a Structured Streaming query "
                f"through a SparkSession, which `method: {creds.method}` does not give; fix: use method: session "
                "(in-process, spark.master for a cluster, or spark.remote for Spark Connect), or execution='batch'"
            )
        spark = spark_session(creds.server_side_parameters)
        late_relation = relation.incorporate(path={"identifier": relation.identifier + "__late"})
        try:
            streaming.check_layout(model_name, config)
            streaming.check_upstream(model_name, upstream)
            plan = streaming.plan(model_name, compiled_sql, parsed)
            if plan.over and plan.over.unbounded:
                logger.warning(
                    f"window_view model '{model_name}': {'; '.join(plan.over.unbounded)} read(s) the whole partition "
                    "in a way no per-partition summary serves, so its streaming state keeps every row of it; "
                    "SUM/COUNT/AVG/MIN/MAX/FIRST_VALUE from UNBOUNDED PRECEDING and ranking functions keep a summary"
                )
            table = self._streaming_location(spark, relation, config)
            where = streaming.Locations(
                table=table,
                late=table.with_name(table.name + "__late"),
                checkpoint=storage.local_path(parsed.checkpoint_location) if parsed.checkpoint_location else table / "_wv_checkpoint",
            )
            result = streaming.run(spark, plan, str(relation), str(late_relation), where, run_id, bool(full_refresh))
        except (streaming.StreamingError, storage.StorageError) as exc:
            raise CompilationError(str(exc)) from exc
        kind = "window_views.windows" if plan.window else "window_views.over_windows"
        properties = {**parsed.properties(), **result.properties, kind: plan.describe()}
        summary = ", ".join(f"{k.split('.', 1)[1]}: {v}" for k, v in properties.items())
        response = StreamingAdapterResponse(
            _message=result.message(),
            code="STREAM",
            rows_affected=result.rows_out,
            batches=result.batches,
            rows_in=result.rows_in,
            rows_out=result.rows_out,
            late_rows=result.late,
            watermark=streaming.describe_micros(result.watermark),
        )
        return {
            "response": response,
            "plan": {"properties": properties, "summary": f"Window view ({summary})"},
            "late_relation": late_relation if parsed.late_data == "table" else None,
        }

    def _streaming_location(self, spark: Any, relation: Any, config: Mapping[str, Any]) -> Path:
        """Where the table's files go: location_root/<alias>, else the schema's directory."""
        root = config.get("location_root")
        if root:
            return storage.local_path(root.rstrip("/")) / relation.identifier
        database = spark.catalog.getDatabase(relation.schema)
        return storage.local_path(database.locationUri) / relation.identifier
