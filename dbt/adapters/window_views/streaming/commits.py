"""The streaming state's log: one commit record per micro-batch, written last.

A batch first stages its output, then records in a READY file what it will publish, then
publishes (storage.publish) and writes its commit. A batch whose commit exists is skipped; one
with a READY file only finishes publishing; one with neither starts over. The run totals dbt
reports are summed from the commits of the run.

Files are written whole (storage.write_json), so only damage from outside tears one. What can be
repaired provably is: a READY record that does not parse is dropped (nothing was published from
it, the batch stages again); the last commit is rebuilt from its batch's READY record, which is
kept until the next commit (a commit is that record plus the batch id and run id); unreadable
run totals restart (they only feed the run message). Anything else fails naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional

from dbt.adapters.window_views import storage
from dbt.adapters.window_views.errors import StreamFailure

KEEP_COMMITS = 100  # commits kept for inspection; only the last one is read
KEEP_RUNS = 20


@dataclass(frozen=True)
class Locations:
    """Where a streaming window view keeps its files."""

    table: Path
    late: Path
    checkpoint: Path

    @property
    def state(self) -> Path:
        return self.checkpoint / "window_views"

    @property
    def spark_checkpoint(self) -> Path:
        return self.checkpoint / "spark"

    @property
    def model_file(self) -> Path:
        return self.state / "model.json"


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
    def __init__(self, model: str, where: Locations, run_id: str) -> None:
        self.model = model
        self.where = where
        self.run_id = run_id
        self._commits = where.state / "commits"
        self._ready = where.state / "ready"

    def ids(self) -> list:
        return sorted(int(p.stem) for p in self._commits.glob("*.json") if p.stem.isdigit())

    def last(self, before: Optional[int] = None) -> Optional[Dict[str, Any]]:
        """The latest commit (before batch `before`)."""
        ids = [i for i in self.ids() if before is None or i < before]
        if not ids:
            return None
        batch = ids[-1]
        try:
            return storage.read_json(self._commits / f"{batch}.json")
        except storage.CorruptFile as exc:
            ready = self._read_ready(batch)
            if batch != self.ids()[-1] or ready is None:
                raise unreadable(self.model, exc, batch) from None
            commit = {**ready, "batch": batch, "run_id": ready.get("run_id", self.run_id)}
            storage.write_json(self._commits / f"{batch}.json", commit)
            return commit

    def committed(self, batch_id: int) -> bool:
        return (self._commits / f"{batch_id}.json").exists()

    def _read_ready(self, batch_id: int) -> Optional[Dict[str, Any]]:
        try:
            return storage.read_json(self._ready / f"{batch_id}.json")
        except storage.CorruptFile:
            return None

    def ready(self, batch_id: int) -> Optional[Dict[str, Any]]:
        """What a staged batch will publish, once recorded (a damaged record: none, so the
        batch stages again; nothing was published from it)."""
        ready = self._read_ready(batch_id)
        if ready is None:
            storage.remove(self._ready / f"{batch_id}.json")
        return ready

    def mark_ready(self, batch_id: int, ready: Dict[str, Any]) -> None:
        storage.write_json(self._ready / f"{batch_id}.json", {**ready, "run_id": self.run_id})

    def commit(self, batch_id: int, ready: Dict[str, Any]) -> None:
        """The batch is done: record it last, then add it to its run's totals."""
        storage.write_json(self._commits / f"{batch_id}.json", {**ready, "batch": batch_id, "run_id": self.run_id})
        path = self._run_file()
        totals = self.run_totals() or {"batches": 0, "rows_in": 0, "rows_out": 0, "late": 0}
        for key in ("rows_in", "rows_out", "late"):
            totals[key] += ready[key]
        totals["batches"] += 1
        storage.write_json(path, totals)

    def run_totals(self) -> Dict[str, int]:
        try:
            return storage.read_json(self._run_file()) or {}
        except storage.CorruptFile:
            return {}

    def clean(self, batch_id: int, previous_state: Optional[str], state: Optional[str]) -> None:
        """Forget what a committed batch made obsolete: older READY records (its own stays until
        the next commit, to rebuild a damaged commit from), the state it replaced, and old
        commits and run totals."""
        for old in self._ready.glob("*.json"):
            if old.stem.isdigit() and int(old.stem) < batch_id:
                old.unlink()
        if previous_state and previous_state != state:
            storage.remove(self.where.state / "state" / previous_state)
            storage.remove(self.where.state / "prefix" / previous_state)
        for old in self._commits.glob("*.json"):
            if old.stem.isdigit() and int(old.stem) < batch_id - KEEP_COMMITS:
                old.unlink()
        runs = sorted((self.where.state / "runs").glob("*.json"), key=lambda p: p.stat().st_mtime)
        for old in runs[:-KEEP_RUNS]:
            old.unlink()

    def _run_file(self) -> Path:
        return self.where.state / "runs" / f"{self.run_id}.json"
