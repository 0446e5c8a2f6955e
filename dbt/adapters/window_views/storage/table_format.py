"""How a batch window view's table is replaced by a new build, one part per file format: the
batch engine (batch/swap.py) looks the format up by the model's `file_format` and never asks
which one it holds. Parquet (and every format without transactions) builds beside the table and
swaps it in by renames (batch/swap.py); Delta Lake replaces the table in one commit of its log
(delta.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Protocol


@dataclass(frozen=True)
class Build:
    """Where one build writes: `relation`, the name the CREATE gives; `replace`, whether the
    CREATE replaces that table itself (CREATE OR REPLACE, the format's own transaction);
    `location`, the external folder (location_root), None for a managed table."""

    relation: Any
    replace: bool
    location: Optional[str]


class TableFormat(Protocol):
    """A file format's way to replace a batch window view's table whole, so readers see the old
    table or the new one, and a failed build leaves the old one."""

    def build(self, adapter: Any, relation: Any, existing: Any, location_root: Optional[str]) -> Build:
        """Where to write `relation`'s new table (`existing`: its table now, or None); a killed
        run's leftovers are dropped first."""
        ...

    def into_place(self, adapter: Any, build: Build, relation: Any, existing: Any) -> None:
        """After the CREATE: the new table takes `relation`'s name, the replaced one's files go."""
        ...


def run_location(location_root: Optional[str], alias: str, invocation_id: str) -> Optional[str]:
    """A build's own folder under location_root (`<root>/<alias>/run=<invocation id>`), so the
    table it replaces keeps its files until the swap."""
    if location_root is None:
        return None
    return f"{location_root.rstrip('/')}/{alias}/run={invocation_id}"
