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
"""

from __future__ import annotations

import time
from typing import Any, Dict, Optional

from dbt.adapters.window_views import paths, storage
from dbt.adapters.window_views.tvf import WindowTvf
from dbt.adapters.window_views.filesystems import FileSystem
from dbt.adapters.window_views.streaming.commits import CommitLog, next_idle_step
from dbt.adapters.window_views.streaming.plan import StreamPlan

# what a commit keeps of the last micro-batch that had rows (an idle step carries it over)
ARRIVAL = ("arrival", "arrival_watermark")


def now() -> int:
    """The wall clock, epoch micros (tests move it)."""
    return time.time_ns() // 1000


def arrival(watermark: Optional[int]) -> Dict[str, Optional[int]]:
    """A batch with rows restarts the idle clock at the W it reached."""
    return {"arrival": now(), "arrival_watermark": watermark}


def advanced(last: Dict[str, Any], timeout: int, at: int, window: Optional[WindowTvf] = None) -> Optional[int]:
    """The W that idling until `at` gives, when beyond the committed one; else None (rows came
    within the timeout, no batch with rows has recorded its arrival yet, or no W yet). For a
    TUMBLE/HOP/CUMULATE `window` W moves to the last window end it reaches: that closes the same
    windows and makes the same rows late (both compare window ends with W), with one idle step
    per window end rather than one per check."""
    since, base = last.get("arrival"), last.get("arrival_watermark")
    if since is None or base is None or at - since <= timeout:
        return None
    watermark = base + (at - since - timeout)
    if window is not None and window.end_at_or_before(watermark) is not None:
        watermark = window.end_at_or_before(watermark)
    committed = last.get("watermark")
    return watermark if committed is None or watermark > committed else None


def finish(spark: Any, fs: FileSystem, plan: StreamPlan, writer: Any, log: CommitLog) -> None:
    """Before the query starts: finish the idle step a crashed run recorded READY, or clear
    what one staged before its READY record (staged files, state), so Spark's next batch follows
    the last commit."""
    last = log.last()
    if last is None:
        return
    step = next_idle_step(last["batch"])
    pending = log.ready(step)
    if pending is not None:
        writer.idle_step(spark, fs, step, pending["watermark"])
        return
    for leftover in (
        storage.staging_dir(writer.where.table, step),
        paths.join(writer.where.state, "state", step),
        paths.join(writer.where.state, "prefix", step),
    ):
        fs.delete(leftover)


def catch_up(spark: Any, fs: FileSystem, plan: StreamPlan, writer: Any, log: CommitLog) -> Optional[Dict[str, Any]]:
    """Run an idle step if the input has been idle for longer than the timeout and W would
    move; returns what it committed. `writer` is the run's BatchWriter."""
    timeout = plan.config.watermark.idle_timeout
    if timeout is None:
        return None
    with writer.lock:  # decided on the last commit, which no Spark batch changes meanwhile
        last = log.last()
        watermark = advanced(last, timeout.micros, now(), plan.window) if last is not None else None
        if watermark is None:
            return None
        return writer.idle_step(spark, fs, next_idle_step(last["batch"]), watermark)
