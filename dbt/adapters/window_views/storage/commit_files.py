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

from dbt.adapters.window_views.errors import StorageError
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.records import BatchId, Json, Move, PublishPlan
from dbt.adapters.window_views.storage import paths
from dbt.adapters.window_views.storage.filesystems import FileSystem

STAGING = internal("staging")
BUCKET = internal("bucket")  # the partition column of staged files: the bucket they publish to
# Spark's file-sink log: Spark's readers of a folder that has one (a table over it,
# spark.read.parquet, a stream reading it) read the files its latest entry lists, not a listing
FILE_LOG = "_spark_metadata"
LOG_INTERVAL = 10  # Spark's default compact interval: ids 10n+9 are compactions (a whole list), others deltas


def write_json(fs: FileSystem, location: str, data: Json) -> None:
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


def read_json(fs: FileSystem, location: str) -> Optional[Json]:
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


def staging_dir(table: str, batch: BatchId) -> str:
    return paths.join(table, STAGING, str(batch))


def _bucket_folders(fs: FileSystem, staging: str) -> List[str]:
    return [e.name for e in fs.list(staging) if e.is_dir and e.name.startswith(f"{BUCKET}=")]


def staged_buckets(fs: FileSystem, staging: str) -> List[str]:
    return sorted(folder.split("=", 1)[1] for folder in _bucket_folders(fs, staging))


def bucket_of(name: str) -> str:
    """The bucket a table file's name (`<bucket>-n<batch>-<part>`) starts with."""
    return name.split("-n", 1)[0]


def _batch_of(name: str) -> Optional[int]:
    try:
        return int(name.split("-n", 1)[1].split("-", 1)[0])
    except (IndexError, ValueError):
        return None


def live_file_names(fs: FileSystem, table: str) -> List[str]:
    """The table's files after its last committed batch: its file log's list (one small read,
    however many files the folder holds), or a listing for a table without a log yet."""
    logged = _logged(fs, table)
    return sorted(logged) if logged is not None else data_file_names(fs, table)


def live_file_sizes(fs: FileSystem, table: str) -> Dict[str, int]:
    """`live_file_names` with each file's size in bytes."""
    logged = _logged(fs, table)
    if logged is not None:
        return {name: int(line["size"]) for name, line in logged.items()}
    return {e.name: e.size for e in fs.list(table) if not e.is_dir and _visible(e.name)}


def plan_publish(fs: FileSystem, table: str, batch: BatchId, replaced_buckets: Iterable[str] = ()) -> PublishPlan:
    """What publishing batch `batch` into `table` will do, decided from the staged files and
    the table's files before anything is published (the READY record keeps it): `move`, a
    staged file (relative to the staging folder), its table file name, size and mtime; `delete`,
    the table files of the buckets the batch rewrote (not its own); `log`, the id of the file-log
    entry it writes: the next delta (its new files only) when it deletes nothing, else the next
    compaction (the whole list), since Spark's readers do not apply deletes of a delta."""
    staging = staging_dir(table, batch)
    moves = []
    for folder in _bucket_folders(fs, staging):
        bucket = folder.split("=", 1)[1]
        for entry in fs.list(paths.join(staging, folder)):
            if not entry.is_dir and _visible(entry.name):
                moves.append(Move(f"{folder}/{entry.name}", f"{bucket}-n{batch}-{entry.name}", entry.size, entry.mtime))
    replaced = sorted(set(replaced_buckets))
    delete = [
        name
        for name in (live_file_names(fs, table) if replaced else [])
        for bucket in replaced
        if name.startswith(f"{bucket}-n") and _batch_of(name[len(bucket) :]) != batch
    ]
    ids = _log_ids(fs, table)
    following = ids[-1] + 1 if ids else 0
    if delete or not ids or _is_compaction(following):
        following += (LOG_INTERVAL - 1 - following) % LOG_INTERVAL
    return PublishPlan(tuple(moves), tuple(delete), following)


def publish(fs: FileSystem, table: str, batch: BatchId, planned: PublishPlan) -> None:
    """Carry out `planned` (plan_publish's, from the READY record): move the staged files into
    the table unless already there, record them in the file log, delete the files the batch
    replaced, drop the staging folder. Repeatable after a crash at any step."""
    staging = staging_dir(table, batch)
    for move in planned.move:
        final = paths.join(table, move.target)
        if not fs.exists(final):  # a move that was a copy may have left its source: skipped
            fs.move(paths.join(staging, move.source), final)
    log_files(fs, table, planned)  # Spark's readers switch to the new files here, at once
    for name in planned.delete:
        fs.delete(paths.join(table, name))
    fs.delete(staging)
    root = paths.join(table, STAGING)
    if not fs.list(root):
        fs.delete(root)


def _is_compaction(log_id: int) -> bool:
    return log_id % LOG_INTERVAL == LOG_INTERVAL - 1


def _entry_name(log_id: int) -> str:
    return f"{log_id}.compact" if _is_compaction(log_id) else str(log_id)


def _log_ids(fs: FileSystem, table: str) -> List[int]:
    names = (e.name.removesuffix(".compact") for e in fs.list(paths.join(table, FILE_LOG)))
    return sorted(int(n) for n in names if n.isdigit())


def _read_entry(fs: FileSystem, table: str, log_id: int) -> Dict[str, Json]:
    lines = fs.read_bytes(paths.join(table, FILE_LOG, _entry_name(log_id))).decode().splitlines()[1:]
    files = (json.loads(line) for line in lines if line.strip())
    return {paths.name(f["path"]): f for f in files}


def _logged(fs: FileSystem, table: str, before: Optional[int] = None) -> Optional[Dict[str, Json]]:
    """The files Spark's readers see (name -> its log line) from the entries before log id
    `before`: the latest compaction and the deltas after it, as Spark reads them; None when
    there is no entry."""
    ids = [i for i in _log_ids(fs, table) if before is None or i < before]
    if not ids:
        return None
    compactions = [i for i in ids if _is_compaction(i)]
    first = compactions[-1] if compactions else ids[0]
    files: Dict[str, Json] = {}
    for log_id in (i for i in ids if i >= first):
        files.update(_read_entry(fs, table, log_id))
    return files


def logged_files(fs: FileSystem, table: str, before: Optional[int] = None) -> Optional[List[str]]:
    """The file names Spark's readers see (from the entries before log id `before`); None when
    the table has no file log."""
    logged = _logged(fs, table, before)
    return None if logged is None else sorted(logged)


def _line(table: str, name: str, size: int, mtime: float) -> Json:
    return {
        "path": paths.listed_uri(paths.join(table, name)),
        "size": size,
        "isDir": False,
        "modificationTime": int(mtime * 1000),
        "blockReplication": 1,
        "blockSize": 134217728,
        "action": "add",
    }


def log_files(fs: FileSystem, table: str, planned: PublishPlan) -> None:
    """Record the batch's files in Spark's file-sink log, one whole-file write, so a reader
    through Spark switches from the previous batch's files to these at once and never sees a
    batch half published. A delta lists the files the batch published; a compaction the whole
    list: the previous entries' (for a table without a log, the listing's) minus the files the
    batch replaces, plus those it published. A replay writes the same entry. Entries older than
    the previous compaction go (the replay of a compaction reads from it)."""
    added = {m.target: _line(table, m.target, m.size, m.mtime) for m in planned.move}
    live = added
    if _is_compaction(planned.log):
        previous = _logged(fs, table, before=planned.log)
        if previous is None:
            found = (e for e in fs.list(table) if not e.is_dir and _visible(e.name))
            previous = {e.name: _line(table, e.name, e.size, e.mtime) for e in found}
        replaced = set(planned.delete)
        live = {name: line for name, line in previous.items() if name not in replaced} | added
    lines = ["v1"] + [json.dumps(live[name]) for name in sorted(live)]
    fs.write_bytes(paths.join(table, FILE_LOG, _entry_name(planned.log)), ("\n".join(lines) + "\n").encode())
    ids = _log_ids(fs, table)
    compactions = [i for i in ids if _is_compaction(i)]
    if len(compactions) >= 2:
        for old in (i for i in ids if i < compactions[-2]):
            fs.delete(paths.join(table, FILE_LOG, _entry_name(old)))
