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

Besides Spark's micro-batches (ids N) the log holds idle steps (ids "N.k", the k-th after batch
N; streaming/idle.py): batches without input rows that Spark's checkpoint does not know, run by
the runner when the watermark advances with processing time. They order between N and N + 1
and follow the same protocol, so a replay neither repeats nor loses one.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import List, Optional, Tuple, Type, TypeVar

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.records import (
    BatchId,
    BatchRecord,
    CheckpointVersionMismatch,
    InputsRecord,
    ModelRecord,
    OtherVersion,
    RebuildIntent,
    RunTotals,
)
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.storage import paths
from dbt.adapters.window_views.storage.filesystems import FileSystem
from dbt.adapters.window_views.streaming.commit.locations import Locations

__all__ = ["BatchId", "CommitLog", "Locations", "next_idle_step", "order", "read_record", "unreadable"]

KEEP_COMMITS = 100  # commits kept for inspection; only the last one is read
KEEP_RUNS = 20
_RECORD = re.compile(r"^(\d+)(?:\.(\d+))?\.json$")
Record = TypeVar("Record", BatchRecord, RunTotals, ModelRecord, RebuildIntent, InputsRecord)


def order(batch: BatchId) -> Tuple[int, int]:
    """Where a record falls in the log: Spark batch N is (N, 0), its k-th idle step (N, k)."""
    spark, _, step = str(batch).partition(".")
    return int(spark), int(step or 0)


def next_idle_step(after: BatchId) -> str:
    spark, step = order(after)
    return f"{spark}.{step + 1}"


def unreadable(model: str, exc: storage.CorruptFile, batch: Optional[BatchId] = None) -> StreamFailure:
    return StreamFailure(
        model,
        f"a file of its streaming checkpoint is damaged: {exc}",
        f"restore the file from a backup of the checkpoint, or run `dbt run --full-refresh -s {model}` to "
        "rebuild the table and the checkpoint from all input",
        batch=batch,
        path=str(exc.path),
    )


def read_record(fs: FileSystem, path: str, kind: Type[Record], model: str) -> Optional[Record]:
    """The record at `path` (None: no file); CorruptFile when it does not parse, and
    CheckpointVersionMismatch when another version of the plugin wrote it."""
    data = storage.read_json(fs, path)
    if data is None:
        return None
    try:
        return kind.from_json(data)
    except OtherVersion as exc:
        raise CheckpointVersionMismatch(model, path, exc.found) from None


class CommitLog:
    def __init__(self, model: str, where: Locations, run_id: str, fs: FileSystem) -> None:
        self.model = model
        self.where = where
        self.run_id = run_id
        self.fs = fs

    def _ids(self, folder: str) -> List[BatchId]:
        """The records' ids in log order: Spark batches as ints, idle steps as "N.k"."""
        found = (_RECORD.match(e.name) for e in self.fs.list(folder))
        ids: List[BatchId] = [int(m[1]) if m[2] is None else f"{m[1]}.{m[2]}" for m in found if m]
        return sorted(ids, key=order)

    def ids(self) -> List[BatchId]:
        return self._ids(self.where.commits)

    def last(self, before: Optional[BatchId] = None) -> Optional[BatchRecord]:
        """The latest commit (before batch `before`, in log order: batch N's idle steps come
        after N and before N + 1)."""
        every = self.ids()
        if isinstance(before, int) and self.committed(before - 1) and before - 1 not in every:
            every = sorted([*every, before - 1], key=order)  # a listing that lags behind a read by name
        while every and self.committed(next_idle_step(every[-1])):  # the same, for idle steps
            every = [*every, next_idle_step(every[-1])]
        ids = [i for i in every if before is None or order(i) < order(before)]
        if not ids:
            return None
        batch = ids[-1]
        try:
            return read_record(self.fs, self.where.commit_file(batch), BatchRecord, self.model)
        except storage.CorruptFile as exc:
            ready = self._read_ready(batch)
            if batch != every[-1] or ready is None:
                raise unreadable(self.model, exc, batch) from None
            commit = replace(ready, batch=batch)
            storage.write_json(self.fs, self.where.commit_file(batch), commit.to_json())
            return commit

    def committed(self, batch_id: BatchId) -> bool:
        return self.fs.exists(self.where.commit_file(batch_id))

    def _read_ready(self, batch_id: BatchId) -> Optional[BatchRecord]:
        try:
            return read_record(self.fs, self.where.ready_file(batch_id), BatchRecord, self.model)
        except storage.CorruptFile:
            return None

    def ready(self, batch_id: BatchId) -> Optional[BatchRecord]:
        """What a staged batch will publish, once recorded (a damaged record: none, so the
        batch stages again; nothing was published from it)."""
        ready = self._read_ready(batch_id)
        if ready is None:
            self.fs.delete(self.where.ready_file(batch_id))
        return ready

    def mark_ready(self, batch_id: BatchId, ready: BatchRecord) -> None:
        storage.write_json(self.fs, self.where.ready_file(batch_id), replace(ready, run_id=self.run_id).to_json())

    def commit(self, batch_id: BatchId, ready: BatchRecord) -> None:
        """The batch is done: record it last, then add it to its run's totals."""
        commit = replace(ready, batch=batch_id, run_id=self.run_id)
        storage.write_json(self.fs, self.where.commit_file(batch_id), commit.to_json())
        totals = self.run_totals().added(commit)
        storage.write_json(self.fs, self.where.run_file(self.run_id), totals.to_json())

    def run_totals(self) -> RunTotals:
        try:
            return read_record(self.fs, self.where.run_file(self.run_id), RunTotals, self.model) or RunTotals()
        except storage.CorruptFile:
            return RunTotals()

    def clean(self, batch_id: BatchId, previous_state: Tuple[str, ...], state: Tuple[str, ...]) -> None:
        """Forget what a committed batch made obsolete: older READY records (its own stays until
        the next commit, to rebuild a damaged commit from), the state it replaced, and old
        commits (the last KEEP_COMMITS stay, idle steps included) and run totals."""
        for old in self._ids(self.where.ready):
            if order(old) < order(batch_id):
                self.fs.delete(self.where.ready_file(old))
        for folder in previous_state:
            if folder not in state:
                self.fs.delete(self.where.state_rows(folder))
        for old in self._ids(self.where.commits)[:-KEEP_COMMITS]:
            self.fs.delete(self.where.commit_file(old))
        runs = sorted((e for e in self.fs.list(self.where.runs) if e.name.endswith(".json")), key=lambda e: e.mtime)
        for run in runs[:-KEEP_RUNS]:
            self.fs.delete(paths.join(self.where.runs, run.name))
