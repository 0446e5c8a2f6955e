"""Files of a streaming window view: the commit protocol that makes each micro-batch's writes
idempotent for its batch id, so a batch replayed after a crash leaves the same files as one run,
on a local disk as on an object store (no atomic rename, listings that may lag).

A batch stages its files under `_wv_staging/<batch>/` (readers skip `_` paths). Then, before
anything is published, its READY record (one whole-file write: a single PUT on an object store)
records the exact publish: which staged file becomes which table file, named
`<bucket>-n<batch>-<part>`, and which table files the batch replaces (`plan_publish`). Publishing
moves the named files, skipping those already in place, then deletes the replaced ones; the
commit record, written last, marks the batch done. So nothing is published without a READY
record, a replay of a batch with one does exactly what it records, whatever a listing shows by
then, and one without starts over with the tables untouched. No step needs an atomic rename: a
file move that is a copy then a delete (an object store) shows its target whole or not at all,
and a crash between the two leaves a source that the replay skips and removes with the staging.

Locations are strings (paths.py); every file operation goes through a `FileSystem`
(filesystems.py) chosen by the location's scheme.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Optional

from dbt.adapters.window_views import paths
from dbt.adapters.window_views.errors import StorageError
from dbt.adapters.window_views.filesystems import FileSystem

STAGING = "_wv_staging"
BUCKET = "_wv_bucket"  # the partition column of staged files: the bucket they publish to
# Spark's file-sink log: Spark's readers of a folder that has one (a table over it,
# spark.read.parquet, a stream reading it) read the files its latest entry lists, not a listing
FILE_LOG = "_spark_metadata"
LOG_INTERVAL = 10  # Spark's default compact interval: ids 10n+9 are compactions, each a whole list


def write_json(fs: FileSystem, location: str, data: Dict[str, Any]) -> None:
    """Write all or nothing: a crash leaves the old file or the new one, never half of one."""
    fs.write_bytes(location, json.dumps(data, sort_keys=True).encode())


class CorruptFile(StorageError):
    """A state file that exists but does not parse (truncated or overwritten from outside)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path} is not valid JSON ({reason})")
        self.path = path

    def __reduce__(self) -> Any:  # crosses from a Spark task to a Spark Connect client
        return _corrupt_file, (self.path, str(self))


def _corrupt_file(path: str, text: str) -> "CorruptFile":
    exc = CorruptFile(path, "")
    exc.args = (text,)
    return exc


def read_json(fs: FileSystem, location: str) -> Optional[Dict[str, Any]]:
    """The file's JSON object; None when there is no file; CorruptFile when it does not parse."""
    try:
        raw = fs.read_bytes(location)
    except FileNotFoundError:
        return None
    try:
        data = json.loads(raw.decode())
    except ValueError as exc:
        raise CorruptFile(location, f"{len(raw)} bytes, {exc}") from None
    if not isinstance(data, dict):
        raise CorruptFile(location, f"expected an object, found {type(data).__name__}")
    return data


def remove_children(fs: FileSystem, location: str, keep: Iterable[str] = ()) -> None:
    """Empty a folder, keeping the named entries (the run lock of a checkpoint)."""
    keep = set(keep)
    for child in fs.list(location):
        if child.name not in keep:
            fs.delete(paths.join(location, child.name))


def remove(fs: FileSystem, location: str) -> None:
    fs.delete(location)


def _visible(name: str) -> bool:
    return name.endswith(".parquet") and not name.startswith(("_", "."))


def data_file_names(fs: FileSystem, table: str, bucket: Optional[str] = None) -> List[str]:
    """The names of the parquet files readers see, optionally only one bucket's."""
    prefix = f"{bucket}-n" if bucket is not None else ""
    return [e.name for e in fs.list(table) if not e.is_dir and _visible(e.name) and e.name.startswith(prefix)]


def data_files(fs: FileSystem, table: str, bucket: Optional[str] = None) -> List[str]:
    """The parquet files readers see (locations), optionally only one bucket's."""
    return [paths.join(table, name) for name in data_file_names(fs, table, bucket)]


def staging_dir(table: str, batch: int) -> str:
    return paths.join(table, STAGING, str(batch))


def _bucket_folders(fs: FileSystem, staging: str) -> List[str]:
    return [e.name for e in fs.list(staging) if e.is_dir and e.name.startswith(f"{BUCKET}=")]


def staged_files(fs: FileSystem, staging: str) -> List[str]:
    return [
        paths.join(staging, folder, e.name)
        for folder in _bucket_folders(fs, staging)
        for e in fs.list(paths.join(staging, folder))
        if not e.is_dir and _visible(e.name)
    ]


def staged_buckets(fs: FileSystem, staging: str) -> List[str]:
    return sorted(folder.split("=", 1)[1] for folder in _bucket_folders(fs, staging))


def _batch_of(name: str) -> Optional[int]:
    try:
        return int(name.split("-n", 1)[1].split("-", 1)[0])
    except (IndexError, ValueError):
        return None


def plan_publish(fs: FileSystem, table: str, batch: int, replaced_buckets: Iterable[str] = ()) -> Dict[str, list]:
    """What publishing batch `batch` into `table` will do, decided from the staged files and
    the table's files before anything is published (the READY record keeps it): `move`, pairs of
    a staged file (relative to the staging folder) and its table file name; `delete`, the table
    files of the buckets the batch rewrote (not its own)."""
    staging = staging_dir(table, batch)
    moves = []
    for folder in _bucket_folders(fs, staging):
        bucket = folder.split("=", 1)[1]
        for entry in fs.list(paths.join(staging, folder)):
            if not entry.is_dir and _visible(entry.name):
                moves.append([f"{folder}/{entry.name}", f"{bucket}-n{batch}-{entry.name}"])
    delete = [
        name for bucket in sorted(set(replaced_buckets)) for name in data_file_names(fs, table, bucket)
        if _batch_of(name[len(bucket):]) != batch
    ]
    return {"move": moves, "delete": delete}


def publish(
    fs: FileSystem, table: str, batch: int, replaced_buckets: Iterable[str] = (), planned: Optional[Dict[str, list]] = None
) -> None:
    """Carry out `planned` (plan_publish's, from the READY record; planned now for a READY record
    of an earlier release): move the staged files into the table unless already there, delete the
    files the batch replaced, drop the staging folder. Repeatable after a crash at any step."""
    if planned is None:
        planned = plan_publish(fs, table, batch, replaced_buckets)
    staging = staging_dir(table, batch)
    for source, target in planned["move"]:
        final = paths.join(table, target)
        if not fs.exists(final):  # a move that was a copy may have left its source: skipped
            fs.move(paths.join(staging, source), final)
    log_files(fs, table, batch, planned)  # Spark's readers switch to the new files here, at once
    for name in planned["delete"]:
        fs.delete(paths.join(table, name))
    fs.delete(staging)
    root = paths.join(table, STAGING)
    if not fs.list(root):
        fs.delete(root)


def _log_id(batch: int) -> int:
    return LOG_INTERVAL * batch + LOG_INTERVAL - 1


def _log_ids(fs: FileSystem, table: str) -> List[int]:
    names = (e.name.removesuffix(".compact") for e in fs.list(paths.join(table, FILE_LOG)) if e.name.endswith(".compact"))
    return sorted(int(n) for n in names if n.isdigit())


def logged_files(fs: FileSystem, table: str, before: Optional[int] = None) -> Optional[List[str]]:
    """The file names the latest entry of the table's file log lists (before log id `before`);
    None when there is no entry."""
    ids = [i for i in _log_ids(fs, table) if before is None or i < before]
    if not ids:
        return None
    lines = fs.read_bytes(paths.join(table, FILE_LOG, f"{ids[-1]}.compact")).decode().splitlines()[1:]
    return [paths.name(json.loads(line)["path"]) for line in lines if line.strip()]


def log_files(fs: FileSystem, table: str, batch: int, planned: Dict[str, list]) -> None:
    """Record the table's files after batch `batch` in Spark's file-sink log, one whole-file
    write: a reader through Spark switches from the previous batch's files to these at once, so
    it never sees a batch half published. The list is the previous entry's (for a table without
    one, the listing's) minus the files the batch replaces, plus those it published; a replay
    writes the same entry. The previous entry is kept for that replay, older ones go."""
    previous = logged_files(fs, table, before=_log_id(batch))
    if previous is None:
        previous = data_file_names(fs, table)
    live = (set(previous) - set(planned["delete"])) | {target for _, target in planned["move"]}
    found = {e.name: e for e in fs.list(table) if not e.is_dir}
    lines = ["v1"] + [
        json.dumps({
            "path": paths.listed_uri(paths.join(table, name)), "size": found[name].size, "isDir": False,
            "modificationTime": int(found[name].mtime * 1000), "blockReplication": 1, "blockSize": 134217728,
            "action": "add",
        })
        for name in sorted(live) if name in found  # a file gone from outside is not listed to readers
    ]
    fs.write_bytes(paths.join(table, FILE_LOG, f"{_log_id(batch)}.compact"), ("\n".join(lines) + "\n").encode())
    for old in _log_ids(fs, table)[:-2]:
        fs.delete(paths.join(table, FILE_LOG, f"{old}.compact"))
