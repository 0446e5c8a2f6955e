"""What one streaming run of a model works with, built once by the runner and handed to its
parts instead of a long list of arguments."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.storage.filesystems import FileSystem
from dbt.adapters.window_views.streaming.commit.locations import Locations


@dataclass(frozen=True)
class StreamRun:
    """A run: its Spark session and files, the model's plan, the catalog tables it writes and
    the locations of the version it streams into (`version`: the rebuild slot, rebuild.py)."""

    spark: Any  # the SparkSession of the dbt process (classic or Spark Connect)
    fs: FileSystem
    plan: StreamPlan
    where: Locations
    target: str
    late_target: str
    run_id: str
    version: int = 1
    full_refresh: bool = False

    @property
    def model(self) -> str:
        return self.plan.model

    def at(self, where: Locations, version: int, full_refresh: bool = False) -> "StreamRun":
        """The same run streaming into another version's locations."""
        return dataclasses.replace(self, where=where, version=version, full_refresh=full_refresh)
