"""Checkpoint records are versioned: each reads back as written, and one written by another
version of the plugin (or without a version) fails naming the file and `--full-refresh`."""

import json

import pytest

from dbt.adapters.window_views.records import (
    RECORD_VERSION,
    Arrival,
    BatchRecord,
    CheckpointVersionMismatch,
    InputClocks,
    ModelRecord,
    Move,
    OtherVersion,
    PendingBatches,
    Publish,
    PublishPlan,
    RebuildIntent,
    RebuildStep,
    RecomputeRecord,
    RunTotals,
)
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.streaming.commit.commits import CommitLog, Locations

PLAN = PublishPlan((Move("_wv_bucket=h1/p.parquet", "h1-n3-p.parquet", 10, 1.5),), ("h1-n2-q.parquet",), 19)
RECORDS = [
    BatchRecord(
        5, "3", 4, 1, 2, 7, Arrival(100, 5), ("h1",), publish=Publish(PLAN, PLAN), batch=3, run_id="r", untimed=1
    ),
    BatchRecord(
        None, None, 0, 0, 0, 0, InputClocks({"a": 1}, {"a": 9}), recompute=RecomputeRecord(4), idle=True, batch="3.1"
    ),
    BatchRecord(
        9,
        "4",
        1,
        0,
        1,
        3,
        Arrival(),
        recompute=RecomputeRecord(2, ("stock",), 6, (12, 40), {"12": (1, 2), "40": (3,)}),
    ),
    BatchRecord(9, "4", 1, 0, 1, 3, Arrival(), recompute=RecomputeRecord(2, ("stock",), 6)),
    BatchRecord(9, "6", 1, 0, 1, 3, Arrival(), state_parts=("2", "4")),
    RunTotals(3, 10, 4, 1, 1, 1),
    ModelRecord("m", "abc", "select 1"),
    RebuildIntent(RebuildStep.SWAPPING, 2, {"table": "/t"}, {"table": "/t2"}, "{}", None),
    PendingBatches(("2024-01-02 00:00:00", "2024-01-03 00:00:00")),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_a_record_reads_back_as_written(record):
    data = json.loads(json.dumps(record.to_json()))
    assert data["version"] == RECORD_VERSION and type(record).from_json(data) == record


def test_records_before_the_null_time_count_count_none():
    batch, totals = RECORDS[0].to_json(), RunTotals(3, 10, 4, 1, 1, 1).to_json()
    del batch["untimed"], totals["untimed"]
    assert BatchRecord.from_json(batch).untimed == 0 and RunTotals.from_json(totals).untimed == 0
    assert RunTotals().added(RECORDS[0]).added(RECORDS[0]).untimed == 2


def test_a_commit_before_state_parts_has_its_state_in_one_folder():
    data = RECORDS[0].to_json()
    del data["state_parts"]
    assert BatchRecord.from_json(data).state_folders == ("3",)
    assert RECORDS[4].state_folders == ("2", "4", "6") and RECORDS[1].state_folders == ()


@pytest.mark.parametrize("version", [None, RECORD_VERSION + 1])
def test_a_commit_of_another_version_fails_naming_the_file_and_the_fix(tmp_path, fs, version):
    log = CommitLog("m", Locations(tmp_path / "t", tmp_path / "t__late", tmp_path / "cp"), "run-a", fs)
    data = RECORDS[0].to_json()
    if version is None:
        del data["version"]
    else:
        data["version"] = version
    path = tmp_path / "cp" / "window_views" / "commits" / "3.json"
    path.parent.mkdir(parents=True)
    storage.write_json(fs, str(path), data)
    with pytest.raises(CheckpointVersionMismatch) as info:
        log.last()
    message = info.value.msg
    assert message.startswith(f"window_view model 'm' at {path}: its checkpoint was written by a different version")
    assert "run `dbt run --full-refresh -s m`" in message


@pytest.mark.parametrize("data", [{"version": RECORD_VERSION + 1, "pending": []}, {"version": 0, "pending": []}])
def test_pending_batches_of_another_version_do_not_read(data):
    """incremental.py turns this into the run's failure naming `--full-refresh` (test_batches.py)."""
    with pytest.raises(OtherVersion):
        PendingBatches.from_json(data)
