"""execution='batch': the statement that builds the table from all input, and the metadata to
record with it. on_window_close keeps what the watermark, computed from the inputs, has closed;
HOP and CUMULATE window aggregations are computed from panes where that is exact (tvf_panes.py)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError
from sqlglot import exp

from dbt.adapters.window_views.batch.watermark import batch_watermark
from dbt.adapters.window_views.errors import AnalysisError, ModelDataError, ModelSqlError
from dbt.adapters.window_views.kinds import emit
from dbt.adapters.window_views.kinds.partials import tvf_panes
from dbt.adapters.window_views.plans.window_view import ColumnsOf, WindowViewPlan, summary
from dbt.adapters.window_views.query import ddl, over_orders, sqlexpr, time_nulls, tvf

logger = AdapterLogger("WindowViews")


def _output_columns(adapter: Any, plan: WindowViewPlan) -> List[Tuple[str, str]]:
    """The plan's output columns and their types (Spark's DESCRIBE QUERY: nothing runs)."""
    _, table = adapter.execute(ddl.describe_query(plan.sql), fetch=True)
    return [(row[0], row[1]) for row in table.rows]


class InputColumns:
    """The inputs' columns and types, each input looked up once in the catalog: for the column
    checks and for the pane rewrite (tvf_panes.py)."""

    def __init__(self, adapter: Any) -> None:
        self._adapter = adapter
        self._known: Dict[tvf_panes.Relation, Optional[List[Tuple[str, str]]]] = {}

    def columns_of(self, relation: tvf_panes.Relation) -> Optional[List[Tuple[str, str]]]:
        if relation not in self._known:
            self._known[relation] = self._lookup(relation)
        return self._known[relation]

    def types_of(self, relation: tvf_panes.Relation) -> Optional[Dict[str, str]]:
        columns = self.columns_of(relation)
        return None if columns is None else {name.lower(): kind for name, kind in columns}

    def _lookup(self, relation: tvf_panes.Relation) -> Optional[List[Tuple[str, str]]]:
        schema, name = relation
        found = self._adapter.get_relation(database=None, schema=schema, identifier=name) if schema else None
        if found is None:
            return None  # not a table dbt can look up (Spark reports what it cannot read)
        return [(c.name, c.dtype) for c in self._adapter.get_columns_in_relation(found)]


def checked_output(adapter: Any, plan: WindowViewPlan, inputs: InputColumns) -> List[Tuple[str, str]]:
    """An incremental batch window view's output columns and types, its columns checked first and
    its event_time after (incremental.py partitions the table by event_time's batch)."""
    return _checked(adapter, plan, inputs.columns_of, describe=True)


def _checked(adapter: Any, plan: WindowViewPlan, columns_of: ColumnsOf, describe: bool) -> List[Tuple[str, str]]:
    """The plan's columns checked against its inputs; with `describe`, its output columns (one
    DESCRIBE QUERY) and its event_time checked against them."""
    plan.check_columns(columns_of)
    check_orders(plan, columns_of, lambda query: _first_value(adapter, query))
    if not describe:
        return []
    output = _output_columns(adapter, plan)
    if plan.config.event_time is not None:
        plan.config.check_event_time(plan.model, output)
    return output


def _first_value(adapter: Any, query: exp.Expression) -> Optional[str]:
    _, table = adapter.execute(sqlexpr.to_sql(query), fetch=True)
    return None if not table.rows or table.rows[0][0] is None else str(table.rows[0][0])


def check_orders(plan: WindowViewPlan, columns_of: ColumnsOf, first_value: over_orders.FirstValue) -> None:
    """Over windows ordered by a STRING column (over_orders.py): a RANGE offset frame refused,
    dates sorted as text warned of, once a model per run."""
    if plan.query is None:
        return  # SQL beyond sqlglot: Spark alone reads it
    refused, warnings = over_orders.string_orders(plan.query.copy(), columns_of, first_value)
    if refused is not None:
        raise ModelSqlError(plan.model, *refused)
    for warning in warnings:
        logger.warning(f"window_view model '{plan.model}': {warning}")


def null_times(adapter: Any, plan: WindowViewPlan) -> Optional[str]:
    """The rows whose time column is NULL, counted in one query over what the windows read:
    NULL on every row (a parse without a format) fails the build before it writes; on some, what
    the run's message says of them (None: none, or no time column the tree shows)."""
    if plan.query is None:
        return None  # SQL beyond sqlglot: Spark alone reads it
    tree = plan.query.copy()
    reads = time_nulls.reads(tree, [use.column for use in plan.columns if use.time])
    if not reads:
        return None
    try:
        _, table = adapter.execute(sqlexpr.to_sql(time_nulls.count_query(tree, reads)), fetch=True)
    except DbtRuntimeError:
        return None  # a read the count cannot reach alone (its SQL Spark's to refuse): the build says
    said = []
    for index, rows, nulls, sample in sorted(tuple(row) for row in table.rows):
        read = reads[int(index)]
        if rows and nulls == rows:
            raise ModelDataError(plan.model, *time_nulls.every_null(read, int(rows), sample))
        if nulls:
            said.append(time_nulls.some_null(read, int(nulls)))
    return "; ".join(said) or None


def statement(adapter: Any, plan: WindowViewPlan) -> Dict[str, Any]:
    """{'sql': the SELECT to build the table with, 'properties': ..., 'summary': ..., 'nulls':
    what the run's message says of NULL times, or None}"""
    inputs = InputColumns(adapter)
    # one DESCRIBE QUERY serves both of its readers: event_time's check and the close filter
    output = _checked(
        adapter, plan, inputs.columns_of, describe=plan.config.event_time is not None or plan.close_sql is not None
    )
    nulls = null_times(adapter, plan)  # after the column checks: a misspelled column is theirs to name
    properties = plan.properties()
    closed: Optional[exp.Expression] = None
    if plan.close_sql is not None:
        closed, reached = _closed(adapter, plan, output)
        properties["window_views.watermark_reached"] = reached
    # after the close filter, which follows window_end to its TVF by the TVF's marker
    query = closed if closed is not None else (plan.query if tvf.MARKER.search(plan.sql) else None)
    paned = None if query is None else tvf_panes.paned(query, inputs.types_of)
    built = paned if paned is not None else closed
    sql = plan.sql if built is None else sqlexpr.to_sql(built)
    return {"sql": sql, "properties": properties, "summary": summary(properties), "nulls": nulls}


def _closed(adapter: Any, plan: WindowViewPlan, output: List[Tuple[str, str]]) -> Tuple[exp.Expression, str]:
    """on_window_close: the query keeping what the watermark the inputs reach has closed, and
    that watermark as the table's property says it."""
    watermark = plan.config.required_watermark
    assert plan.close_query is not None
    try:
        reached = batch_watermark(adapter, plan.inputs, watermark)
        closed = emit.close_filter(plan.close_query, watermark.column, reached.micros, [c for c, _ in output])
    except AnalysisError as exc:
        raise ModelSqlError.from_analysis(
            plan.model, exc, "see docs/configuration.md on emit='on_window_close' in batch"
        ) from exc
    return closed, reached.describe()


def shown(adapter: Any, plan: WindowViewPlan) -> str:
    """What `dbt show` previews of a window view: what its table would hold, so with
    on_window_close only the windows (rows) the watermark has closed."""
    if plan.close_sql is None:
        return plan.sql
    closed, _ = _closed(adapter, plan, _output_columns(adapter, plan))
    return sqlexpr.to_sql(closed)
