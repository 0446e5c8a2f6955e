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
from typing import Any, Dict, Optional, Sequence

from dbt.adapters.window_views import paths, storage
from dbt.adapters.window_views.filesystems import FileSystem
from dbt.adapters.window_views.streaming.commits import CommitLog, next_idle_step
from dbt.adapters.window_views.streaming.plan import StreamPlan
from dbt.adapters.window_views.tvf import WindowTvf

# what a commit keeps of the last micro-batch that had rows (an idle step carries it over; over
# several inputs it keeps `input_watermarks` and `input_arrivals` instead)
ARRIVAL = ("arrival", "arrival_watermark")


def now() -> int:
    """The wall clock, epoch micros (tests move it)."""
    return time.time_ns() // 1000


def arrival(watermark: Optional[int]) -> Dict[str, Optional[int]]:
    """A batch with rows restarts the idle clock at the W it reached."""
    return {"arrival": now(), "arrival_watermark": watermark}


def carried(plan: StreamPlan, last: Dict[str, Any]) -> Dict[str, Any]:
    """The idle clocks of the last commit, for a batch that brings no rows (an idle step)."""
    if plan.shape == "single":
        return {key: last.get(key) for key in ARRIVAL}
    return {"input_watermarks": last.get("input_watermarks"), "input_arrivals": input_arrivals(last)}


def input_arrivals(last: Dict[str, Any]) -> Dict[str, int]:
    """Each input's last arrival in a commit over several inputs. A commit of an earlier release
    has none per input: an input's clock then starts at the commit's last arrival of any input
    (its own was no later, so nothing closes earlier than the rule says); one from before
    idle_timeout existed has no arrival at all, and an input's W stays until its next rows."""
    if last.get("input_arrivals") is not None:
        return dict(last["input_arrivals"])
    since = last.get("arrival")
    return {source: since for source in last.get("input_watermarks") or {}} if since is not None else {}


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
    bases: Dict[str, int],
    arrivals: Dict[str, int],
    timeout: Optional[int],
    at: int,
    window: Optional[WindowTvf],
    inputs: Sequence[str],
) -> Optional[int]:
    """The model's W over several inputs at `at`: the least of theirs, each by its own clock;
    None while an input has had no rows (it holds every window back)."""
    if any(source not in bases for source in inputs):
        return None
    return min(own(bases[source], arrivals.get(source), timeout, at, window) for source in inputs)


def advanced(
    last: Dict[str, Any], timeout: int, at: int, window: Optional[WindowTvf] = None, inputs: Sequence[str] = ()
) -> Optional[int]:
    """The W that idling until `at` gives, when beyond the committed one; else None (rows came
    within the timeout, no batch with rows has recorded its arrival yet, or no W yet). `inputs`:
    the inputs of a model over several, each with its own clock."""
    if inputs:
        watermark = least(last.get("input_watermarks") or {}, input_arrivals(last), timeout, at, window, inputs)
    else:
        base = last.get("arrival_watermark")
        watermark = None if base is None else own(base, last.get("arrival"), timeout, at, window)
    committed = last.get("watermark")
    return watermark if watermark is not None and (committed is None or watermark > committed) else None


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
    """Run an idle step if the input (over several: the one holding W back) has been idle for
    longer than the timeout and W would move; returns what it committed. `writer` is the run's BatchWriter."""
    timeout = plan.config.watermark.idle_timeout
    if timeout is None:
        return None
    with writer.lock:  # decided on the last commit, which no Spark batch changes meanwhile
        last = log.last()
        inputs = [source.source for source in plan.inputs] if plan.shape != "single" else []
        watermark = advanced(last, timeout.micros, now(), plan.window, inputs) if last is not None else None
        if watermark is None:
            return None
        return writer.idle_step(spark, fs, next_idle_step(last["batch"]), watermark)
