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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional

from dbt.adapters.window_views import paths, storage
from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.filesystems import FileSystem

KEEP_COMMITS = 100  # commits kept for inspection; only the last one is read
KEEP_RUNS = 20


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

    def _record(self, folder: str, batch_id: int) -> str:
        return paths.join(folder, f"{batch_id}.json")

    def _ids(self, folder: str) -> list:
        names = (e.name.removesuffix(".json") for e in self.fs.list(folder) if e.name.endswith(".json"))
        return sorted(int(n) for n in names if n.isdigit())

    def ids(self) -> list:
        return self._ids(self._commits)

    def last(self, before: Optional[int] = None) -> Optional[Dict[str, Any]]:
        """The latest commit (before batch `before`)."""
        every = self.ids()
        if before is not None and self.committed(before - 1) and before - 1 not in every:
            every = sorted([*every, before - 1])  # a listing that lags behind a read by name
        ids = [i for i in every if before is None or i < before]
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

    def committed(self, batch_id: int) -> bool:
        return self.fs.exists(self._record(self._commits, batch_id))

    def _read_ready(self, batch_id: int) -> Optional[Dict[str, Any]]:
        try:
            return storage.read_json(self.fs, self._record(self._ready, batch_id))
        except storage.CorruptFile:
            return None

    def ready(self, batch_id: int) -> Optional[Dict[str, Any]]:
        """What a staged batch will publish, once recorded (a damaged record: none, so the
        batch stages again; nothing was published from it)."""
        ready = self._read_ready(batch_id)
        if ready is None:
            self.fs.delete(self._record(self._ready, batch_id))
        return ready

    def mark_ready(self, batch_id: int, ready: Dict[str, Any]) -> None:
        storage.write_json(self.fs, self._record(self._ready, batch_id), {**ready, "run_id": self.run_id})

    def commit(self, batch_id: int, ready: Dict[str, Any]) -> None:
        """The batch is done: record it last, then add it to its run's totals."""
        storage.write_json(self.fs, self._record(self._commits, batch_id), {**ready, "batch": batch_id, "run_id": self.run_id})
        path = self._run_file()
        totals = self.run_totals() or {"batches": 0, "rows_in": 0, "rows_out": 0, "late": 0}
        for key in ("rows_in", "rows_out", "late"):
            totals[key] += ready[key]
        totals["batches"] += 1
        storage.write_json(self.fs, path, totals)

    def run_totals(self) -> Dict[str, int]:
        try:
            return storage.read_json(self.fs, self._run_file()) or {}
        except storage.CorruptFile:
            return {}

    def clean(self, batch_id: int, previous_state: Optional[str], state: Optional[str]) -> None:
        """Forget what a committed batch made obsolete: older READY records (its own stays until
        the next commit, to rebuild a damaged commit from), the state it replaced, and old
        commits and run totals."""
        for old in self._ids(self._ready):
            if old < batch_id:
                self.fs.delete(self._record(self._ready, old))
        if previous_state and previous_state != state:
            self.fs.delete(paths.join(self.where.state, "state", previous_state))
            self.fs.delete(paths.join(self.where.state, "prefix", previous_state))
        for old in self._ids(self._commits):
            if old < batch_id - KEEP_COMMITS:
                self.fs.delete(self._record(self._commits, old))
        folder = paths.join(self.where.state, "runs")
        runs = sorted((e for e in self.fs.list(folder) if e.name.endswith(".json")), key=lambda e: e.mtime)
        for old in runs[:-KEEP_RUNS]:
            self.fs.delete(paths.join(folder, old.name))

    def _run_file(self) -> str:
        return paths.join(self.where.state, "runs", f"{self.run_id}.json")
