"""Idle inputs: `watermark={'idle_timeout': ...}` lets W advance with processing time when no
input row arrives, so that on_window_close windows still close.

Spark calls foreachBatch only for new input, so W (max event time seen - delay) stands still
while the input is idle. With an idle timeout, once no row has arrived for that long (wall clock,
from the staging of the last micro-batch that had rows: its commit records the time and the W it
reached), W moves on at the clock's pace:

    W = W_arrival + (now - arrival - idle_timeout)

(for TUMBLE/HOP/CUMULATE: the last window end at or before that W, see `advanced`).

The runner checks after the query has processed what there was, and in a processing-time run at
each trigger interval; when the rule gives a W beyond the committed one it runs an idle step: a
batch without input rows, through the batch writer's own path (the windows the new W closes,
the state trimmed), committed with its own record "N.k" (the k-th after Spark's batch N,
commits.py), which Spark's checkpoint never sees. A step whose READY record exists is finished
before the query starts, like Spark's replay of a batch, so the next Spark batch reads its state
and W. Rows that arrive later with event times the advanced W closed are late, as any late row.

Over several inputs (a window join, a union: sides.py) each input has its own clock: its W at
its last rows and their time, in the commit (`input_watermarks`, `input_arrivals`). An input
idle for longer than the timeout moves on by the rule above and no longer holds the model's W
(the least of the inputs') back, in an idle step or in a batch that only other inputs brought
rows to, as Flink's `withIdleness` marks an input idle. An input that never had a row has no
clock: it holds every window back.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from typing import Any, Optional, Protocol, Sequence

from dbt.adapters.window_views.query.tvf import WindowTvf
from dbt.adapters.window_views.records import BatchRecord, InputClocks
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.storage.filesystems import FileSystem
from dbt.adapters.window_views.streaming.commit.commits import CommitLog, next_idle_step
from dbt.adapters.window_views.streaming.commit.locations import Locations
from dbt.adapters.window_views.streaming.commit.run_context import StreamRun


class IdleStepRunner(Protocol):
    """What runs an idle step: the run's batch writer (batch_writer.py), seen from here."""

    @property
    def where(self) -> Locations: ...

    @property
    def lock(self) -> AbstractContextManager[Any]: ...

    def idle_step(self, spark: Any, fs: FileSystem, step: str, watermark: int) -> Optional[BatchRecord]: ...


def now() -> int:
    """The wall clock, epoch micros (tests move it)."""
    return time.time_ns() // 1000


def own(base: int, since: Optional[int], timeout: Optional[int], at: int, window: Optional[WindowTvf] = None) -> int:
    """An input's W at `at`: `base`, its W when its last rows arrived (at `since`), moved on with
    the clock once it has been idle for longer than `timeout`. For a TUMBLE/HOP/CUMULATE
    `window` it moves to the last window end it reaches: that closes the same windows and makes
    the same rows late (both compare window ends with W), with one idle step per window end
    rather than one per check."""
    if since is None or timeout is None or at - since <= timeout:
        return base
    watermark = base + (at - since - timeout)
    end = window.end_at_or_before(watermark) if window is not None else None
    return max(base, watermark if end is None else end)


def least(
    clocks: InputClocks, timeout: Optional[int], at: int, window: Optional[WindowTvf], inputs: Sequence[str]
) -> Optional[int]:
    """The model's W over several inputs at `at`: the least of theirs, each by its own clock;
    None while an input has had no rows (it holds every window back)."""
    if any(source not in clocks.watermarks for source in inputs):
        return None
    return min(own(clocks.watermarks[source], clocks.arrivals.get(source), timeout, at, window) for source in inputs)


def advanced(
    last: BatchRecord, timeout: int, at: int, window: Optional[WindowTvf] = None, inputs: Sequence[str] = ()
) -> Optional[int]:
    """The W that idling until `at` gives, when beyond the committed one; else None (rows came
    within the timeout, no batch with rows has recorded its arrival yet, or no W yet). `inputs`:
    the inputs of a model over several, each with its own clock."""
    clocks = last.clocks
    if isinstance(clocks, InputClocks):
        watermark = least(clocks, timeout, at, window, inputs)
    else:
        base = clocks.watermark
        watermark = None if base is None else own(base, clocks.at, timeout, at, window)
    committed = last.watermark
    return watermark if watermark is not None and (committed is None or watermark > committed) else None


def finish(run: StreamRun, writer: IdleStepRunner, log: CommitLog) -> None:
    """Before the query starts: finish the idle step a crashed run recorded READY, or clear
    what one staged before its READY record (staged files, state), so Spark's next batch follows
    the last commit."""
    last = log.last()
    if last is None or last.batch is None:
        return
    step = next_idle_step(last.batch)
    pending = log.ready(step)
    if pending is not None and pending.watermark is not None:
        writer.idle_step(run.spark, run.fs, step, pending.watermark)
        return
    for leftover in (storage.staging_dir(writer.where.table, step), writer.where.state_rows(step)):
        run.fs.delete(leftover)


def catch_up(run: StreamRun, writer: IdleStepRunner, log: CommitLog) -> Optional[BatchRecord]:
    """Run an idle step if the input (over several: the one holding W back) has been idle for
    longer than the timeout and W would move; returns what it committed."""
    plan = run.plan
    timeout = plan.watermark.idle_timeout if plan.config.watermark is not None else None
    if timeout is None:
        return None
    with writer.lock:  # decided on the last commit, which no Spark batch changes meanwhile
        last = log.last()
        if last is None or last.batch is None:
            return None
        inputs = [source.source for source in plan.inputs]
        watermark = advanced(last, timeout.micros, now(), plan.window, inputs)
        if watermark is None:
            return None
        return writer.idle_step(run.spark, run.fs, next_idle_step(last.batch), watermark)
