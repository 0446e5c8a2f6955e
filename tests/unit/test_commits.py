"""The commit log's repairs (no Spark): a damaged READY record is dropped, a damaged last commit
is rebuilt from its READY record, anything else is named."""

from dataclasses import replace
from pathlib import Path

import pytest

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.records import Arrival, BatchRecord, RunTotals
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.storage import paths
from dbt.adapters.window_views.streaming.commit.commits import CommitLog, Locations

READY = BatchRecord(
    watermark=5, state_batch="1", rows_in=3, late=0, rows_out=2, state_rows=0, clocks=Arrival(None, None)
)


def log(tmp_path: Path, fs, run_id: str = "run-a") -> CommitLog:
    return CommitLog("m", Locations(tmp_path / "t", tmp_path / "t__late", tmp_path / "cp"), run_id, fs)


def test_commit_then_clean_keeps_the_last_ready_record(tmp_path, fs):
    commits = log(tmp_path, fs)
    for batch in (0, 1):
        commits.mark_ready(batch, READY)
        commits.commit(batch, commits.ready(batch))
        commits.clean(batch, (), ("1",))
    assert commits.ready(0) is None and commits.ready(1) is not None
    assert commits.last().batch == 1 and commits.run_totals() == RunTotals(batches=2, rows_in=6, rows_out=4, late=0)


def test_clean_drops_the_state_folders_a_commit_no_longer_names(tmp_path, fs):
    commits = log(tmp_path, fs)
    where = commits.where
    for folder in ("0", "1", "2"):
        fs.write_bytes(paths.join(where.state_rows(folder), "part.parquet"), b"x")
    commits.clean(2, ("0", "1"), ("0", "1", "2"))  # a part added: every folder stays
    assert sorted(e.name for e in fs.list(paths.join(where.state, "state"))) == ["0", "1", "2"]
    commits.clean(3, ("0", "1", "2"), ("3",))  # written whole: the parts before it go
    assert fs.list(paths.join(where.state, "state")) == []


def test_a_damaged_ready_record_is_dropped(tmp_path, fs):
    commits = log(tmp_path, fs)
    commits.mark_ready(3, READY)
    path = tmp_path / "cp" / "window_views" / "ready" / "3.json"
    path.write_text('{"state": ')
    assert commits.ready(3) is None and not path.exists()


def test_a_damaged_last_commit_is_rebuilt_from_its_ready_record(tmp_path, fs):
    commits = log(tmp_path, fs)
    commits.mark_ready(0, READY)
    commits.commit(0, commits.ready(0))
    path = tmp_path / "cp" / "window_views" / "commits" / "0.json"
    path.write_text(path.read_text()[:10])
    later = log(tmp_path, fs, "run-b")
    rebuilt = replace(READY, batch=0, run_id="run-a")
    assert later.last() == rebuilt
    assert storage.read_json(fs, str(path)) == rebuilt.to_json()


def test_a_damaged_commit_without_its_record_is_named(tmp_path, fs):
    commits = log(tmp_path, fs)
    for batch in (0, 1):
        commits.mark_ready(batch, READY)
        commits.commit(batch, READY)
        commits.clean(batch, (), ("1",))
    path = tmp_path / "cp" / "window_views" / "commits" / "0.json"
    path.write_text("{")
    with pytest.raises(StreamFailure) as info:
        commits.last(before=1)
    assert info.value.msg.startswith(
        f"window_view model 'm' (micro-batch 0) at {path}: a file of its streaming checkpoint is damaged"
    )
    assert "--full-refresh -s m" in info.value.msg


def test_damaged_run_totals_restart(tmp_path, fs):
    commits = log(tmp_path, fs)
    (tmp_path / "cp" / "window_views" / "runs").mkdir(parents=True)
    (tmp_path / "cp" / "window_views" / "runs" / "run-a.json").write_text("[")
    commits.commit(0, READY)
    assert commits.run_totals().batches == 1


def test_the_previous_commit_is_found_by_name_when_a_listing_lags(tmp_path, fs, monkeypatch):
    commits = log(tmp_path, fs)
    for batch in (0, 1):
        commits.mark_ready(batch, READY)
        commits.commit(batch, READY)
    monkeypatch.setattr(CommitLog, "ids", lambda self: [0])  # batch 1's commit not listed yet
    assert commits.last(before=2).batch == 1


def test_a_replayed_publish_does_what_its_ready_record_says(tmp_path, fs):
    """A crash between a copy and the delete of its source (an object store's move) and a crash
    after some deletes: the replay skips what is done and finishes the rest, whatever a listing
    shows by then."""
    table = tmp_path / "t"
    table.mkdir()
    for name in ("b1-n0-a.parquet", "b1-n0-b.parquet", "b2-n0-c.parquet"):
        (table / name).write_text(name)
    staged = table / "_wv_staging" / "1" / "_wv_bucket=b1"
    staged.mkdir(parents=True)
    for name in ("p0.parquet", "p1.parquet"):
        (staged / name).write_text(f"new {name}")
    planned = storage.plan_publish(fs, str(table), 1, ["b1"])
    assert [move[:3] for move in planned.move] == [
        ("_wv_bucket=b1/p0.parquet", "b1-n1-p0.parquet", 14),
        ("_wv_bucket=b1/p1.parquet", "b1-n1-p1.parquet", 14),
    ]
    assert planned.delete == ("b1-n0-a.parquet", "b1-n0-b.parquet")
    assert planned.log == 9  # a table without a log starts with a whole list
    # the first move was a copy whose source was not deleted yet; one replaced file is gone
    (table / "b1-n1-p0.parquet").write_text("new p0.parquet")
    (table / "b1-n0-a.parquet").unlink()
    storage.publish(fs, str(table), 1, planned)
    assert sorted(p.name for p in table.iterdir()) == [
        "_spark_metadata",
        "b1-n1-p0.parquet",
        "b1-n1-p1.parquet",
        "b2-n0-c.parquet",
    ]
    assert (table / "b1-n1-p1.parquet").read_text() == "new p1.parquet"
    storage.publish(fs, str(table), 1, planned)  # once more: nothing changes
    assert sorted(p.name for p in table.iterdir()) == [
        "_spark_metadata",
        "b1-n1-p0.parquet",
        "b1-n1-p1.parquet",
        "b2-n0-c.parquet",
    ]
    # Spark's readers read the file log: the table's files after the batch, whole
    assert storage.logged_files(fs, str(table)) == ["b1-n1-p0.parquet", "b1-n1-p1.parquet", "b2-n0-c.parquet"]


def test_the_file_log_switches_readers_at_once_and_replays_the_same(tmp_path, fs):
    """Batch 2 replaces bucket b1 again; its log entry is built from batch 1's entry (not from a
    listing, which shows the half-published folder), before anything is deleted."""
    table = tmp_path / "t"
    table.mkdir()
    for batch, names in ((1, ["p0.parquet"]), (2, ["q0.parquet"])):
        staged = table / "_wv_staging" / str(batch) / "_wv_bucket=b1"
        staged.mkdir(parents=True)
        for name in names:
            (staged / name).write_text(f"{batch} {name}")
        planned = storage.plan_publish(fs, str(table), batch, ["b1"])
        if batch == 2:
            # crash after the copy, before the log: readers still see batch 1's file only
            (table / "b1-n2-q0.parquet").write_text("2 q0.parquet")
            assert storage.logged_files(fs, str(table)) == ["b1-n1-p0.parquet"]
        storage.publish(fs, str(table), batch, planned)
    assert storage.logged_files(fs, str(table)) == ["b1-n2-q0.parquet"]
    # each batch replaced files, which only a compaction (a whole list) can say to Spark's readers
    assert log_entries(table) == ["19.compact", "9.compact"]


def log_entries(table: Path) -> list:
    return sorted(p.name for p in (table / "_spark_metadata").iterdir() if not p.name.startswith("."))


def stage(table: Path, batch: int, bucket: str, names: list) -> None:
    staged = table / "_wv_staging" / str(batch) / f"_wv_bucket={bucket}"
    staged.mkdir(parents=True)
    for name in names:
        (staged / name).write_text(f"{batch} {name}")


def test_appending_batches_log_deltas_and_compact_every_tenth(tmp_path, fs):
    """A batch that only adds files writes a delta naming them (its cost does not grow with the
    table); every tenth entry, and every batch that replaces files, writes the whole list; a
    replayed delta writes the same entry; entries before the previous compaction go."""
    table = tmp_path / "t"
    table.mkdir()
    for batch in range(23):
        stage(table, batch, "e", [f"p{batch}.parquet"])
        planned = storage.plan_publish(fs, str(table), batch)
        assert planned.log == (9 if batch == 0 else 9 + batch)
        storage.publish(fs, str(table), batch, planned)
        if batch == 12:
            storage.publish(fs, str(table), batch, planned)  # a replay
    assert log_entries(table) == [
        "19.compact",
        "20",
        "21",
        "22",
        "23",
        "24",
        "25",
        "26",
        "27",
        "28",
        "29.compact",
        "30",
        "31",
    ]
    assert (table / "_spark_metadata" / "31").read_text().count("\n") == 2  # v1 and its one file
    assert storage.logged_files(fs, str(table)) == sorted(f"e-n{b}-p{b}.parquet" for b in range(23))
    # a batch that replaces files jumps to the next compaction id
    stage(table, 23, "e", ["q.parquet"])
    planned = storage.plan_publish(fs, str(table), 23, ["e"])
    assert planned.log == 39 and len(planned.delete) == 23
    storage.publish(fs, str(table), 23, planned)
    assert storage.logged_files(fs, str(table)) == ["e-n23-q.parquet"] == storage.live_file_names(fs, str(table))
    assert log_entries(table) == ["29.compact", "30", "31", "39.compact"]


def test_a_damaged_file_named_in_a_spark_task_keeps_its_name_on_the_client():
    import pickle

    exc = pickle.loads(pickle.dumps(storage.CorruptFile("s3a://b/cp/window_views/model.json", "3 bytes")))
    assert (
        exc.path == "s3a://b/cp/window_views/model.json"
        and str(exc) == "s3a://b/cp/window_views/model.json is not valid JSON (3 bytes)"
    )
