"""The streaming state's log: one commit record per micro-batch, written last.

A batch first stages its output, then records in a READY file what it will publish, then
publishes (storage.publish) and writes its commit. A batch whose commit exists is skipped; one
with a READY file only finishes publishing; one with neither starts over. The run totals dbt
reports are summed from the commits of the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional

from dbt.adapters.window_views import storage

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


class CommitLog:
    def __init__(self, where: Locations, run_id: str) -> None:
        self.where = where
        self.run_id = run_id
        self._commits = where.state / "commits"
        self._ready = where.state / "ready"

    def last(self, before: Optional[int] = None) -> Optional[Dict[str, Any]]:
        """The latest commit (before batch `before`)."""
        ids = [int(p.stem) for p in self._commits.glob("*.json") if p.stem.isdigit()]
        ids = [i for i in ids if before is None or i < before]
        return storage.read_json(self._commits / f"{max(ids)}.json") if ids else None

    def committed(self, batch_id: int) -> bool:
        return (self._commits / f"{batch_id}.json").exists()

    def ready(self, batch_id: int) -> Optional[Dict[str, Any]]:
        """What a staged batch will publish, once recorded."""
        return storage.read_json(self._ready / f"{batch_id}.json")

    def mark_ready(self, batch_id: int, ready: Dict[str, Any]) -> None:
        storage.write_json(self._ready / f"{batch_id}.json", ready)

    def commit(self, batch_id: int, ready: Dict[str, Any]) -> None:
        """The batch is done: record it last, then add it to its run's totals."""
        storage.write_json(self._commits / f"{batch_id}.json", {**ready, "batch": batch_id, "run_id": self.run_id})
        path = self._run_file()
        totals = storage.read_json(path) or {"batches": 0, "rows_in": 0, "rows_out": 0, "late": 0}
        for key in ("rows_in", "rows_out", "late"):
            totals[key] += ready[key]
        totals["batches"] += 1
        storage.write_json(path, totals)

    def run_totals(self) -> Dict[str, int]:
        return storage.read_json(self._run_file()) or {}

    def clean(self, batch_id: int, previous_state: Optional[str], state: Optional[str]) -> None:
        """Forget what a committed batch made obsolete: its READY file, the state it replaced,
        and old commits and run totals."""
        storage.remove(self._ready / f"{batch_id}.json")
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
