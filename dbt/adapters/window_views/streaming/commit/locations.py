"""Where a streaming window view keeps its files: every folder and record of its checkpoint is
a member here, so no other module spells a checkpoint's subpath."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Dict

from dbt.adapters.window_views.records import BatchId
from dbt.adapters.window_views.storage import paths

LOCK = "run.lock"


@dataclass(frozen=True)
class Locations:
    """A version's table, late table and checkpoint: locations (paths.py), local or not."""

    table: str
    late: str
    checkpoint: str

    def __post_init__(self) -> None:
        for key in ("table", "late", "checkpoint"):
            object.__setattr__(self, key, paths.normalize(getattr(self, key)))

    def to_json(self) -> Dict[str, str]:
        return asdict(self)

    @property
    def state(self) -> str:
        """The plugin's part of the checkpoint (Spark's is `spark_checkpoint`)."""
        return paths.join(self.checkpoint, "window_views")

    @property
    def spark_checkpoint(self) -> str:
        return paths.join(self.checkpoint, "spark")

    @property
    def spark_offsets(self) -> str:
        return paths.join(self.spark_checkpoint, "offsets")

    @property
    def spark_commits(self) -> str:
        return paths.join(self.spark_checkpoint, "commits")

    @property
    def model_file(self) -> str:
        return paths.join(self.state, "model.json")

    @property
    def inputs_file(self) -> str:
        return paths.join(self.state, "inputs.json")

    @property
    def spark_sources(self) -> str:
        """Spark's log of the files each source read, a folder per source."""
        return paths.join(self.spark_checkpoint, "sources")

    @property
    def commits(self) -> str:
        return paths.join(self.state, "commits")

    @property
    def ready(self) -> str:
        return paths.join(self.state, "ready")

    @property
    def runs(self) -> str:
        return paths.join(self.state, "runs")

    @property
    def lock(self) -> str:
        return paths.join(self.checkpoint, LOCK)

    @property
    def intent(self) -> str:
        """A rebuild's intent record (rebuild.py), in the checkpoint of the version it builds."""
        return paths.join(self.checkpoint, "rebuild.json")

    def commit_file(self, batch: BatchId) -> str:
        return paths.join(self.commits, f"{batch}.json")

    def ready_file(self, batch: BatchId) -> str:
        return paths.join(self.ready, f"{batch}.json")

    def run_file(self, run_id: str) -> str:
        return paths.join(self.runs, f"{run_id}.json")

    def state_rows(self, batch: BatchId) -> str:
        """The state a batch wrote: its kept rows and prefix summaries (state.py)."""
        return paths.join(self.state, "state", str(batch))
