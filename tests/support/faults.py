"""Crash points of the streaming commit protocol, for the crash tests: installed in a dbt
process, `DBT_WINDOW_VIEWS_FAULT=<point>` ends that process there with os._exit(137), as a
kill -9 would, leaving whatever the batch had written so far.

- staged: the batch staged its output, its READY record is not written;
- ready: READY is written, nothing is published;
- published: the table's files are published, the late table's are not, nothing is committed;
- copied (only with the object-store filesystem, objectstore.py): the first table file of the
  publish is copied to its final name, its staged source not yet deleted.

The plugin has no fault hook of its own: this wraps its commit steps from outside.
"""

from __future__ import annotations

import os

FAULT_ENV = "DBT_WINDOW_VIEWS_FAULT"
POINTS = ("staged", "ready", "published", "copied")


def _crash_at(point: str) -> None:
    if os.environ.get(FAULT_ENV) == point:
        os._exit(137)


def install() -> None:
    """Wrap CommitLog.mark_ready and storage.publish (once per process)."""
    from dbt.adapters.window_views import storage
    from dbt.adapters.window_views.streaming import commits

    if getattr(storage.publish, "_faulty", False):
        return
    mark_ready, publish = commits.CommitLog.mark_ready, storage.publish

    def faulty_mark_ready(self, batch_id, ready):
        _crash_at("staged")
        mark_ready(self, batch_id, ready)

    def faulty_publish(fs, table, batch, planned):
        late = str(table).endswith("__late")
        if not late:
            _crash_at("ready")
        publish(fs, table, batch, planned)
        if not late:
            _crash_at("published")

    faulty_publish._faulty = True
    commits.CommitLog.mark_ready = faulty_mark_ready
    storage.publish = faulty_publish
