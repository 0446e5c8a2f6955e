"""Whether a stream's inputs are still the tables it read. Spark's checkpoint knows the files a
stream read by name, so an input whose rows were written anew (an upstream model's
`--full-refresh`: its table created again, with new files) would be read again as new rows and
counted twice, and an input at another location (a streaming upstream rebuilt beside itself) no
longer holds the files the checkpoint names. Either refuses the run before anything is read.

A table created again over the files the stream read (a source declared again) is the same
input: the run goes on. A Kafka source's location is its topic: a source declared again on
another topic is another input, whose offsets the checkpoint does not have."""

from __future__ import annotations

import json
from typing import Iterator, List, Optional, Tuple

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.query import ddl
from dbt.adapters.window_views.records import InputIdentity, InputsRecord
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.storage import paths
from dbt.adapters.window_views.streaming.commit.commits import read_record
from dbt.adapters.window_views.streaming.commit.run_context import StreamRun
from dbt.adapters.window_views.streaming.inputs import kafka

# Spark's file-source log files read back from the newest, looking for the files one input gave
LOG_FILES_READ = 20


def identities(run: StreamRun) -> InputsRecord:
    """Each input table's location and creation time, as Spark's catalog has them now."""
    found = []
    for table in dict.fromkeys(i.source for i in run.plan.inputs):
        described = {r[0]: r[1] for r in run.spark.sql(ddl.describe_extended(table)).collect()}
        location = paths.normalize(described["Location"]) if described.get("Location") else ""
        if described.get("Type") == "VIEW":  # a Kafka source's view: where it reads is its topic
            source = kafka.declared(run.spark, table)
            location = kafka.location(source) if source is not None else location
        found.append(InputIdentity(table, location, str(described.get("Created Time") or "")))
    return InputsRecord(tuple(found))


def check(run: StreamRun, now: InputsRecord) -> None:
    """Refuse a run whose checkpoint read inputs that are no longer what it read; else record
    the inputs as they are (for the next run to compare with)."""
    try:
        before = read_record(run.fs, run.where.inputs_file, InputsRecord, run.model)
    except storage.CorruptFile:
        before = None  # written again below: it only ever compares one run with the next
    current = {i.table: i for i in now.inputs}
    for old in before.inputs if before is not None else ():
        new = current.get(old.table)
        if new is None:
            continue  # no longer an input: the model's own checks decide about the change
        if new.location != old.location:
            raise _rebuilt(
                run,
                old.table,
                f"is at another location than when this stream last read it ({old.location}, now {new.location})",
            )
        if new.created != old.created and not _read_files_remain(run, old.location):
            raise _rebuilt(
                run,
                old.table,
                f"was created again since this stream last read it (created {old.created}, now {new.created}) and "
                "the files the stream read are gone: its rows were written anew",
            )
    if before != now:
        storage.write_json(run.fs, run.where.inputs_file, now.to_json())


def record(run: StreamRun, now: InputsRecord) -> None:
    """The inputs a new checkpoint starts from (a rebuild's)."""
    storage.write_json(run.fs, run.where.inputs_file, now.to_json())


def _rebuilt(run: StreamRun, table: str, what: str) -> StreamFailure:
    return StreamFailure(
        run.model,
        f"its input {table} {what}, so the stream would read rows it already counted as new ones",
        f"run `dbt run --full-refresh -s {run.model}` to rebuild it from that input as it is now (after a "
        "--full-refresh of an upstream model, rebuild the streaming window views after it too: `dbt run "
        "--full-refresh -s <upstream>+`)",
        path=run.where.checkpoint,
    )


def _read_files_remain(run: StreamRun, location: str) -> bool:
    """Whether a file this stream read last from under `location` is still there (True when Spark's
    log names none: the stream read nothing there, so nothing could be read twice)."""
    for names in _latest_files(run):
        mine = [f for f in names if paths.within(f, location)]
        if mine:
            return any(run.fs.exists(paths.shown(f)) for f in mine)
    return True


def _latest_files(run: StreamRun) -> Iterator[List[str]]:
    """The files of Spark's file-source log entries, newest first, each log file's at once (a
    compacted one holds every file before it)."""
    logs: List[Tuple[int, str]] = []
    for source in run.fs.list(run.where.spark_sources):
        folder = paths.join(run.where.spark_sources, source.name)
        for entry in run.fs.list(folder):
            batch = _batch_of(entry.name)
            if batch is not None:
                logs.append((batch, paths.join(folder, entry.name)))
    for _, log in sorted(logs, reverse=True)[:LOG_FILES_READ]:
        yield _paths_in(run.fs.read_bytes(log))


def _batch_of(name: str) -> Optional[int]:
    """The batch of a log file's name (`7`, `9.compact`); None for Spark's other files (`.crc`)."""
    head = name[: -len(".compact")] if name.endswith(".compact") else name
    return int(head) if head.isdigit() else None


def _paths_in(log: bytes) -> List[str]:
    """The files a log file names, as Spark names them (percent-encoded URIs); its first line is
    the log's version."""
    entries = [json.loads(line) for line in log.decode().splitlines()[1:] if line.strip()]
    return [str(e["path"]) for e in entries if "path" in e]
