"""Spark's part of a streaming checkpoint (offsets/, commits/ under `spark/`), checked before the
query starts so that a damaged file is named, or repaired where that is provably safe.

Spark writes offsets/N (what batch N reads) before the batch and commits/N after it. The last
of each may be torn only by damage from outside (Spark writes them whole). Repairs:
- a damaged last commits/N is removed: Spark then replays batch N, which the batch writer skips
  (its own commit exists) or finishes (from its READY record), so nothing is lost or doubled;
- a damaged last offsets/N is removed, with batch N's staged files, while nothing of N can have
  been published (no commit, Spark's or the plugin's, and no READY record): Spark plans N again.
Any other damaged file fails the run, naming it.
"""

from __future__ import annotations

import json
from typing import List, Optional

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.storage import paths
from dbt.adapters.window_views.storage.filesystems import FileSystem
from dbt.adapters.window_views.streaming.commit.locations import Locations


def _readable(fs: FileSystem, path: str) -> bool:
    """Spark's log files: a version line ("v1"), then one JSON value per line ("-": a source of
    several that had no offset yet)."""
    try:
        lines = fs.read_bytes(path).decode().splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    if len(lines) < 2 or not lines[0].startswith("v"):
        return False
    try:
        for line in lines[1:]:
            if line != "-":
                json.loads(line)
    except ValueError:
        return False
    return True


def _remove(fs: FileSystem, entry: str) -> None:
    """An entry and its checksum file (Hadoop's local filesystem keeps `.N.crc` beside `N`, and
    refuses to write N again while it is there)."""
    fs.delete(entry)
    fs.delete(paths.join(paths.parent(entry), f".{paths.name(entry)}.crc"))


def _entries(fs: FileSystem, folder: str) -> List[int]:
    return sorted(int(e.name) for e in fs.list(folder) if e.name.isdigit())


def check(model: str, where: Locations, fs: FileSystem) -> List[str]:
    """Repair what is provably safe to repair; returns what was repaired, raises for the rest.
    Runs where the files are (`FileSystem.run`: one Spark task for a Spark Connect client)."""
    return fs.run(_check, model, where)


def _check(fs: FileSystem, model: str, where: Locations) -> List[str]:
    repaired: List[str] = []
    offsets, commits = _entries(fs, where.spark_offsets), _entries(fs, where.spark_commits)
    last_commit: Optional[int] = commits[-1] if commits else None
    if last_commit is not None and not _readable(fs, paths.join(where.spark_commits, str(last_commit))):
        entry = paths.join(where.spark_commits, str(last_commit))
        _remove(fs, entry)
        repaired.append(f"removed the damaged {entry} (batch {last_commit} is replayed)")
        commits.pop()
    last_offset: Optional[int] = offsets[-1] if offsets else None
    if last_offset is not None and not _readable(fs, paths.join(where.spark_offsets, str(last_offset))):
        # safe only while nothing of the batch may have been published: no commit (Spark's or the
        # plugin's) and no READY record (publishing starts after it); a re-planned batch may read
        # more rows than the first attempt
        entry = paths.join(where.spark_offsets, str(last_offset))
        if (commits and commits[-1] >= last_offset) or any(
            fs.exists(record) for record in (where.commit_file(last_offset), where.ready_file(last_offset))
        ):
            raise _damaged(model, entry, last_offset)
        _remove(fs, entry)
        fs.delete(storage.staging_dir(where.table, last_offset))
        fs.delete(storage.staging_dir(where.late, last_offset))
        repaired.append(f"removed the damaged {entry} (batch {last_offset} is planned again)")
        offsets.pop()
    for folder, ids in ((where.spark_offsets, offsets), (where.spark_commits, commits)):
        for batch in ids[-2:-1]:  # the entry Spark reads besides the last
            if not _readable(fs, paths.join(folder, str(batch))):
                raise _damaged(model, paths.join(folder, str(batch)), batch)
    return repaired


def _damaged(model: str, path: str, batch: int) -> StreamFailure:
    return StreamFailure(
        model,
        "a file of Spark's streaming checkpoint is damaged and cannot be repaired safely",
        f"restore it from a backup of the checkpoint, or run `dbt run --full-refresh -s {model}` to rebuild the "
        "table and the checkpoint from all input",
        batch=batch,
        path=str(path),
    )
