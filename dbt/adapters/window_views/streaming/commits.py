"""The streaming state's log: one commit record per micro-batch, written last.

A batch first stages its output, then records in a READY file what it will publish, then
publishes (storage.publish) and writes its commit. A batch whose commit exists is skipped; one
with a READY file only finishes publishing; one with neither starts over. The run totals dbt
reports are summed from the commits of the run.

Files are written whole (storage.write_json: one PUT on an object store), so only damage from
outside tears one. A batch's own records are found by name (a listing may lag on an object
store; the previous batch's commit is looked up by name too). What can be
repaired provably is: a READY record that does not parse is dropped (nothing was published from
it, the batch stages again); the last commit is rebuilt from its batch's READY record, which is
kept until the next commit (a commit is that record plus the batch id and run id); unreadable
run totals restart (they only feed the run message). Anything else fails naming the file.

Besides Spark's micro-batches (ids N) the log holds idle steps (ids "N.k", the k-th after batch
N; streaming/idle.py): batches without input rows that Spark's checkpoint does not know, run by
the runner when the watermark advances with processing time. They order between N and N + 1
and follow the same protocol, so a replay neither repeats nor loses one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple, Union

from dbt.adapters.window_views import paths, storage
from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.filesystems import FileSystem

KEEP_COMMITS = 100  # commits kept for inspection; only the last one is read
KEEP_RUNS = 20
BatchId = Union[int, str]  # a Spark micro-batch N, or an idle step "N.k"
_RECORD = re.compile(r"^(\d+)(?:\.(\d+))?\.json$")


def order(batch: BatchId) -> Tuple[int, int]:
    """Where a record falls in the log: Spark batch N is (N, 0), its k-th idle step (N, k)."""
    spark, _, step = str(batch).partition(".")
    return int(spark), int(step or 0)


def next_idle_step(after: BatchId) -> str:
    spark, step = order(after)
    return f"{spark}.{step + 1}"


@dataclass(frozen=True)
class Locations:
    """Where a streaming window view keeps its files: locations (paths.py), local or not."""

    table: str
    late: str
    checkpoint: str

    def __post_init__(self) -> None:
        for key in ("table", "late", "checkpoint"):
            object.__setattr__(self, key, paths.normalize(getattr(self, key)))

    @property
    def state(self) -> str:
        return paths.join(self.checkpoint, "window_views")

    @property
    def spark_checkpoint(self) -> str:
        return paths.join(self.checkpoint, "spark")

    @property
    def model_file(self) -> str:
        return paths.join(self.state, "model.json")


def unreadable(model: str, exc: storage.CorruptFile, batch: Optional[int] = None) -> StreamFailure:
    return StreamFailure(
        model,
        f"a file of its streaming checkpoint is damaged: {exc}",
        f"restore the file from a backup of the checkpoint, or run `dbt run --full-refresh -s {model}` to "
        "rebuild the table and the checkpoint from all input",
        batch=batch,
        path=str(exc.path),
    )


class CommitLog:
    def __init__(self, model: str, where: Locations, run_id: str, fs: FileSystem) -> None:
        self.model = model
        self.where = where
        self.run_id = run_id
        self.fs = fs
        self._commits = paths.join(where.state, "commits")
        self._ready = paths.join(where.state, "ready")

    def _record(self, folder: str, batch_id: BatchId) -> str:
        return paths.join(folder, f"{batch_id}.json")

    def _ids(self, folder: str) -> List[BatchId]:
        """The records' ids in log order: Spark batches as ints, idle steps as "N.k"."""
        found = (_RECORD.match(e.name) for e in self.fs.list(folder))
        ids = [int(m[1]) if m[2] is None else f"{m[1]}.{m[2]}" for m in found if m]
        return sorted(ids, key=order)

    def ids(self) -> List[BatchId]:
        return self._ids(self._commits)

    def last(self, before: Optional[BatchId] = None) -> Optional[Dict[str, Any]]:
        """The latest commit (before batch `before`, in log order: batch N's idle steps come
        after N and before N + 1)."""
        every = self.ids()
        if isinstance(before, int) and self.committed(before - 1) and before - 1 not in every:
            every = sorted([*every, before - 1], key=order)  # a listing that lags behind a read by name
        while every and self.committed(next_idle_step(every[-1])):  # the same, for idle steps
            every = [*every, next_idle_step(every[-1])]
        ids = [i for i in every if before is None or order(i) < order(before)]
        if not ids:
            return None
        batch = ids[-1]
        try:
            return storage.read_json(self.fs, self._record(self._commits, batch))
        except storage.CorruptFile as exc:
            ready = self._read_ready(batch)
            if batch != every[-1] or ready is None:
                raise unreadable(self.model, exc, batch) from None
            commit = {**ready, "batch": batch, "run_id": ready.get("run_id", self.run_id)}
            storage.write_json(self.fs, self._record(self._commits, batch), commit)
            return commit

    def committed(self, batch_id: BatchId) -> bool:
        return self.fs.exists(self._record(self._commits, batch_id))

    def _read_ready(self, batch_id: BatchId) -> Optional[Dict[str, Any]]:
        try:
            return storage.read_json(self.fs, self._record(self._ready, batch_id))
        except storage.CorruptFile:
            return None

    def ready(self, batch_id: BatchId) -> Optional[Dict[str, Any]]:
        """What a staged batch will publish, once recorded (a damaged record: none, so the
        batch stages again; nothing was published from it)."""
        ready = self._read_ready(batch_id)
        if ready is None:
            self.fs.delete(self._record(self._ready, batch_id))
        return ready

    def mark_ready(self, batch_id: BatchId, ready: Dict[str, Any]) -> None:
        storage.write_json(self.fs, self._record(self._ready, batch_id), {**ready, "run_id": self.run_id})

    def commit(self, batch_id: BatchId, ready: Dict[str, Any]) -> None:
        """The batch is done: record it last, then add it to its run's totals."""
        storage.write_json(
            self.fs, self._record(self._commits, batch_id), {**ready, "batch": batch_id, "run_id": self.run_id}
        )
        path = self._run_file()
        totals = self.run_totals() or {"batches": 0, "rows_in": 0, "rows_out": 0, "late": 0}
        for key in ("rows_in", "rows_out", "late"):
            totals[key] += ready[key]
        totals["batches"] += 1
        if ready.get("idle"):
            totals["idle"] = totals.get("idle", 0) + 1
        storage.write_json(self.fs, path, totals)

    def run_totals(self) -> Dict[str, int]:
        try:
            return storage.read_json(self.fs, self._run_file()) or {}
        except storage.CorruptFile:
            return {}

    def clean(self, batch_id: BatchId, previous_state: Optional[str], state: Optional[str]) -> None:
        """Forget what a committed batch made obsolete: older READY records (its own stays until
        the next commit, to rebuild a damaged commit from), the state it replaced, and old
        commits (the last KEEP_COMMITS stay, idle steps included) and run totals."""
        for old in self._ids(self._ready):
            if order(old) < order(batch_id):
                self.fs.delete(self._record(self._ready, old))
        if previous_state and previous_state != state:
            self.fs.delete(paths.join(self.where.state, "state", previous_state))
            self.fs.delete(paths.join(self.where.state, "prefix", previous_state))
        for old in self._ids(self._commits)[:-KEEP_COMMITS]:
            self.fs.delete(self._record(self._commits, old))
        folder = paths.join(self.where.state, "runs")
        runs = sorted((e for e in self.fs.list(folder) if e.name.endswith(".json")), key=lambda e: e.mtime)
        for old in runs[:-KEEP_RUNS]:
            self.fs.delete(paths.join(folder, old.name))

    def _run_file(self) -> str:
        return paths.join(self.where.state, "runs", f"{self.run_id}.json")
