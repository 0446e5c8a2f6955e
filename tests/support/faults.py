"""Crash points of the streaming commit protocol, for the crash tests: installed in a dbt
process, `DBT_WINDOW_VIEWS_FAULT=<point>` ends that process there with os._exit(137), as a
kill -9 would, leaving whatever the batch had written so far.

- staged: the batch staged its output, its READY record is not written;
- ready: READY is written, nothing is published;
- published: the table's files are published, the late table's are not, nothing is committed;
- copied (only with the object-store filesystem, objectstore.py): the first table file of the
  publish is copied to its final name, its staged source not yet deleted.

`DBT_WINDOW_VIEWS_FAULT=<model>=<point>,<model>=<point>,...` crashes several models in one
process (one dbt run with a thread for each): each stops at its own point and waits there, and
the last to arrive ends the process, so each one's files are as its own kill would leave them.

The plugin has no fault hook of its own: this wraps its commit steps from outside.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Dict

FAULT_ENV = "DBT_WINDOW_VIEWS_FAULT"
POINTS = ("staged", "ready", "published", "copied")
# a model whose point never comes (a failure before it) must not hang the test's process
WAIT = 300.0

_arrived: set = set()
_arrival = threading.Lock()


def plan() -> Dict[str, str]:
    """The models of a several-model fault and their points ({} for a single point)."""
    spec = os.environ.get(FAULT_ENV, "")
    return dict(item.split("=", 1) for item in spec.split(",")) if "=" in spec else {}


def model_in(location: str) -> str:
    """The planned model whose table `location` is in ("" for none: a late table, a checkpoint)."""
    planned = plan()
    return next((part for part in Path(location).parts if part in planned), "")


def crash_at(point: str, model: str) -> None:
    """Called by a model's batch at `point`: ends the process, or waits for the other models'."""
    spec = os.environ.get(FAULT_ENV)
    planned = plan()
    if not planned:
        if spec == point:
            os._exit(137)
        return
    if planned.get(model) != point:
        return
    with _arrival:
        _arrived.add(model)
        if _arrived == set(planned):
            os._exit(137)
    threading.Event().wait(WAIT)
    print(f"faults: only {sorted(_arrived)} of {sorted(planned)} reached their points", file=sys.stderr, flush=True)
    os._exit(3)


def install() -> None:
    """Wrap CommitLog.mark_ready and storage.publish (once per process)."""
    from dbt.adapters.window_views.storage import commit_files as storage
    from dbt.adapters.window_views.storage import paths
    from dbt.adapters.window_views.streaming.commit import commits

    if getattr(storage.publish, "_faulty", False):
        return
    mark_ready, publish = commits.CommitLog.mark_ready, storage.publish

    def faulty_mark_ready(self, batch_id, ready):
        crash_at("staged", self.model)
        mark_ready(self, batch_id, ready)

    def faulty_publish(fs, table, batch, planned):
        late = str(table).endswith("__late")
        if not late:
            crash_at("ready", paths.name(table))
        publish(fs, table, batch, planned)
        if not late:
            crash_at("published", paths.name(table))

    faulty_publish._faulty = True
    commits.CommitLog.mark_ready = faulty_mark_ready
    storage.publish = faulty_publish
