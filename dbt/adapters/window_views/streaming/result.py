"""What a streaming run sums up once its query has stopped: the counts from the commit log, the
watermark reached, and the table properties that record where the live version's files are;
a run whose every row had no time is refused here, since only the counts tell."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional

from sqlglot import exp

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.kinds import model_kind
from dbt.adapters.window_views.model.config import LateData
from dbt.adapters.window_views.query import time_nulls
from dbt.adapters.window_views.query.intervals import describe_epoch_micros
from dbt.adapters.window_views.streaming.commit import rebuild
from dbt.adapters.window_views.streaming.commit.commits import CommitLog
from dbt.adapters.window_views.streaming.commit.run_context import StreamRun


@dataclass
class StreamResult:
    batches: int = 0
    rows_in: int = 0
    rows_out: int = 0
    late: int = 0
    watermark: Optional[int] = None
    properties: Dict[str, str] = field(default_factory=dict)
    empty: bool = False  # a `--empty` run: nothing streamed
    idle: int = 0  # idle steps among the batches (streaming/inputs/idle.py)
    state_rows: int = 0  # input rows the state keeps for windows and frames still open
    untimed: int = 0  # of `late`, the rows with a NULL time

    def message(self) -> str:
        if self.empty:
            return "EMPTY: --empty leaves the streaming table, late table and checkpoint untouched"
        idle_steps = f" ({self.idle} idle)" if self.idle else ""
        untimed = f" ({self.untimed:,} with a NULL time)" if self.untimed else ""
        return (
            f"STREAM {self.batches} batch{'es' if self.batches != 1 else ''}{idle_steps}, {self.rows_in:,} in, "
            f"{self.rows_out:,} out, {self.late:,} late{untimed}, watermark {describe_epoch_micros(self.watermark)}"
        )


def result_of(run: StreamRun) -> StreamResult:
    """The run's totals from its commit log, checked, with the table properties to set."""
    plan, where = run.plan, run.where
    log = CommitLog(plan.model, where, run.run_id, run.fs)
    totals = log.run_totals()
    last = log.last()
    result = StreamResult(
        batches=totals.batches,
        rows_in=totals.rows_in,
        rows_out=totals.rows_out,
        late=totals.late,
        untimed=totals.untimed,
        watermark=last.watermark if last is not None else None,
        idle=totals.idle,
        state_rows=last.state_rows if last is not None else 0,
    )
    _check_times(run, result)
    keeps_late = plan.config.late_data == LateData.TABLE
    result.properties = {
        "window_views.watermark_reached": describe_epoch_micros(result.watermark),
        "window_views.state_rows": str(result.state_rows),
        rebuild.CHECKPOINT_PROPERTY: where.checkpoint,
        rebuild.LOCATION_PROPERTY["table"]: where.table,
        rebuild.VERSION_PROPERTY: str(run.version),
        "window_views.late_table": run.late_target if keeps_late else "none (late_data=drop)",
    }
    if keeps_late:
        result.properties[rebuild.LOCATION_PROPERTY["late table"]] = where.late
    return result


def _check_times(run: StreamRun, result: StreamResult) -> None:
    """Rows came in and every one had a NULL time (late_rows.py keeps them aside): the model's
    time column is NULL on every new row, a parse without a format upstream, and the table
    gets none of them however long it streams."""
    if not result.rows_in or result.untimed != result.rows_in:
        return
    plan = run.plan
    read = time_nulls.TimeRead(
        plan.watermark.column,
        " and ".join(i.source for i in plan.inputs),
        model_kind.window_of(plan.kind) is not None,
        exp.null(),
    )
    problem, fix = time_nulls.every_null(read, result.rows_in, None)
    kept = f"its late table {run.late_target} keeps them" if plan.config.late_data == LateData.TABLE else "dropped"
    raise StreamFailure(
        plan.model,
        f"{problem} (the stream counted them late: {kept})",
        f"{fix}; then run `dbt run --full-refresh -s {plan.model}` to stream its rows again",
        path=run.where.checkpoint,
    )
