"""Files of a streaming window view: the commit protocol that makes each micro-batch's writes
idempotent for its batch id, so a batch replayed after a crash leaves the same files as one run.

A batch stages its files under `_wv_staging/<batch>/` (readers skip `_` paths), records what it
will publish in a READY file, then moves the staged files into place, named `<bucket>-n<batch>-...`,
and removes the files of the buckets it replaced. Every step can be repeated: a replay of a batch
with a READY file only finishes the moves; one without starts over, the tables untouched.
Paths are local (or mounted) directories: file: URIs or plain paths.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

from dbt.adapters.window_views.errors import StorageError
from dbt.adapters.window_views.paths import local_path  # noqa: F401  (storage speaks local paths)

STAGING = "_wv_staging"
BUCKET = "_wv_bucket"  # the partition column of staged files: the bucket they publish to


def write_json(path: Path, data: Dict[str, Any]) -> None:
    """Write all or nothing: a crash leaves the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_text(json.dumps(data, sort_keys=True))
    os.replace(tmp, path)


class CorruptFile(StorageError):
    """A state file that exists but does not parse (truncated or overwritten from outside)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path} is not valid JSON ({reason})")
        self.path = path


def read_json(path: Path) -> Optional[Dict[str, Any]]:
    """The file's JSON object; None when there is no file; CorruptFile when it does not parse."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CorruptFile(path, f"{len(text)} bytes, {exc}") from None
    if not isinstance(data, dict):
        raise CorruptFile(path, f"expected an object, found {type(data).__name__}")
    return data


def remove_children(path: Path, keep: Iterable[str] = ()) -> None:
    """Empty a folder, keeping the named entries (the run lock of a checkpoint)."""
    if path.is_dir():
        for child in path.iterdir():
            if child.name not in keep:
                remove(child)


def remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def data_files(table: Path, bucket: Optional[str] = None) -> List[Path]:
    """The parquet files readers see, optionally only one bucket's."""
    if not table.is_dir():
        return []
    prefix = f"{bucket}-n" if bucket is not None else ""
    return sorted(
        p for p in table.iterdir()
        if p.is_file() and p.name.endswith(".parquet") and p.name.startswith(prefix) and not p.name.startswith(("_", "."))
    )


def staging_dir(table: Path, batch: int) -> Path:
    return table / STAGING / str(batch)


def staged_files(staging: Path) -> List[Path]:
    return sorted(staging.glob(f"{BUCKET}=*/*.parquet"))


def staged_buckets(staging: Path) -> List[str]:
    return sorted(p.name.split("=", 1)[1] for p in staging.glob(f"{BUCKET}=*"))


def _batch_of(name: str) -> Optional[int]:
    try:
        return int(name.split("-n", 1)[1].split("-", 1)[0])
    except (IndexError, ValueError):
        return None


def publish(table: Path, batch: int, replaced_buckets: Iterable[str] = ()) -> None:
    """Move a batch's staged files into the table, then drop the older files of the buckets the
    batch rewrote. Staged files sit in `<bucket>=<name>/` folders (Spark's partitionBy layout)."""
    staged = staging_dir(table, batch)
    if staged.is_dir():
        for folder in sorted(p for p in staged.iterdir() if p.is_dir() and "=" in p.name):
            bucket = folder.name.split("=", 1)[1]
            for f in sorted(folder.glob("*.parquet")):
                os.replace(f, table / f"{bucket}-n{batch}-{f.name}")
    for bucket in replaced_buckets:
        for f in data_files(table, bucket):
            if _batch_of(f.name[len(bucket):]) != batch:
                f.unlink()
    remove(staged)
    if staged.parent.is_dir() and not any(staged.parent.iterdir()):
        staged.parent.rmdir()
