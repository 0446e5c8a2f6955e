"""The model's own SQL run over a micro-batch's rows: the rows go where the SQL reads its
upstream table (a temp view), with the prefix state of their partitions beside them."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Sequence, Tuple

from pyspark.sql import Observation
from pyspark.sql import functions as F
from sqlglot import exp

from dbt.adapters.window_views.kinds import prefix
from dbt.adapters.window_views.kinds.model_kind import ModelKind, OverWindows, PaneAggregate, SessionAggregate
from dbt.adapters.window_views.kinds.partials import tvf_panes
from dbt.adapters.window_views.names import is_reserved
from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.streaming.inputs import sides


def quoted(columns: Sequence[str]) -> List[str]:
    return [f"`{c}`" for c in columns]


def counted(rows: Any) -> Tuple[Any, Callable[[], int]]:
    """`rows`, counted by the job that writes them (no job of its own), and how to read the
    count once that job is done."""
    return counted_if(rows, F.lit(True))


def counted_if(rows: Any, condition: Any) -> Tuple[Any, Callable[[], int]]:
    """`counted`, of the rows where `condition` (a Column) holds."""
    observation = Observation()
    return rows.observe(observation, F.count_if(condition).alias("rows")), lambda: observation.get["rows"]


class ModelQuery:
    def __init__(self, plan: StreamPlan, schema: Any, columns: Sequence[str]) -> None:
        self.plan = plan
        self.schema = schema  # the model's output columns
        self.columns = list(columns)  # the upstream table's
        self.over = plan.kind.over if isinstance(plan.kind, OverWindows) else None
        self.prefix_groups = prefix.groups(self.over.prefix) if self.over is not None else []
        self.inputs = sides.inputs_of(plan)
        self._paned: Dict[Tuple[Tuple[str, str], ...], str] = {}

    @property
    def partitioned_by(self) -> Tuple[str, ...]:
        """Over windows `on_update`: the PARTITION BY columns by which each partition keeps and
        recomputes its rows from its own point (OverPlan.partitioned_by), when the output holds
        them too: an output row's partition tells whether a batch replaces it. Empty: one point
        in event time for every partition."""
        by = self.over.partitioned_by if self.over is not None and self.plan.recomputes_rows else ()
        names = {f.name.lower() for f in self.schema.fields}
        return by if all(c.lower() in names for c in by) else ()

    def as_input(self, rows: Any, *extra: str) -> None:
        """Put `rows` where the model SQL reads its upstream table (the temp view; several
        inputs: each input's rows in its view, sides.py)."""
        self.inputs.put(rows, [*quoted(self.columns), *extra])

    def _sql_over(self, spark: Any, rows: Any, states: Sequence[Any]) -> str:
        """Put `rows` (and the prefix states) in place; returns the SQL to run over them."""
        if not states:
            self.as_input(rows)
            return self.paned(rows)
        assert self.over is not None  # prefix states are over windows
        view = f"{self.plan.view}_rows"
        rows.select(*quoted(self.columns)).createOrReplaceTempView(view)
        for g, state in enumerate(states):
            state.createOrReplaceTempView(f"{view}_s{g}")
        joined = prefix.joined_sql(
            view,
            [f"{view}_s{g}" for g in range(len(states))],
            [p for p, _ in self.prefix_groups],
            self.over.prefix,
        )
        spark.sql(joined).createOrReplaceTempView(self.plan.view)
        return self.plan.output_sql

    def paned(self, rows: Any) -> str:
        """The model SQL with its HOP and CUMULATE aggregates over the rows computed from panes,
        as batch computes them (tvf_panes.py): by the rows' types, once per set of types."""
        types = tuple((f.name.lower(), f.dataType.simpleString()) for f in rows.schema.fields)
        if types not in self._paned:
            view = (None, self.plan.view)
            paned = tvf_panes.paned(self.plan.parsed(), lambda r: dict(types) if r == view else None)
            self._paned[types] = self.plan.sql if paned is None else sqlexpr.to_sql(paned)
        return self._paned[types]

    def conform(self, result: Any) -> Any:
        """The output of the rewritten SQL as the model's own: the state columns a `*` picked up
        dropped, and names and types as the original calls give them (a TVF aggregate kept as
        panes: as its aggregates over the rows give them)."""
        if not self.prefix_groups and not _kept_as_written(self.plan.kind):
            return result
        columns = [c for c in result.columns if not is_reserved(c)]
        fields = self.schema.fields
        assert len(columns) == len(fields), (columns, fields)
        renamed = result.select(*quoted(columns)).toDF(*[f.name for f in fields])
        return renamed.select(*[renamed[i].cast(f.dataType).alias(f.name) for i, f in enumerate(fields)])

    def rewritten(self, spark: Any, rows: Any, states: Sequence[Any], rewrite: Any) -> Any:
        """The model over `rows`, its SQL first passed through `rewrite` (e.g. emit.closing_rows)."""
        return self.conform(spark.sql(rewrite(self._sql_over(spark, rows, states))))

    def compute(self, spark: Any, rows: Any, where: exp.Expr, states: Sequence[Any] = ()) -> Any:
        """The model over `rows`, keeping the output rows `where` holds."""
        return self.conform(spark.sql(self._sql_over(spark, rows, states))).where(sqlexpr.to_sql(where))


def _kept_as_written(kind: ModelKind) -> bool:
    """A TVF aggregate kept as partials: its output columns are the model's as written."""
    return isinstance(kind, (PaneAggregate, SessionAggregate)) and kind.written is not None
