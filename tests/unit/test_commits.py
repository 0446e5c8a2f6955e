"""The commit log's repairs (no Spark): a damaged READY record is dropped, a damaged last commit
is rebuilt from its READY record, anything else is named."""

from pathlib import Path

import pytest

from dbt.adapters.window_views import storage
from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.streaming.commits import CommitLog, Locations

READY = {"watermark": 5, "state": "1", "rows_in": 3, "late": 0, "rows_out": 2, "replaced_buckets": []}


def log(tmp_path: Path, run_id: str = "run-a") -> CommitLog:
    return CommitLog("m", Locations(tmp_path / "t", tmp_path / "t__late", tmp_path / "cp"), run_id)


def test_commit_then_clean_keeps_the_last_ready_record(tmp_path):
    commits = log(tmp_path)
    for batch in (0, 1):
        commits.mark_ready(batch, READY)
        commits.commit(batch, commits.ready(batch))
        commits.clean(batch, None, "1")
    assert commits.ready(0) is None and commits.ready(1) is not None
    assert commits.last()["batch"] == 1 and commits.run_totals() == {"batches": 2, "rows_in": 6, "rows_out": 4, "late": 0}


def test_a_damaged_ready_record_is_dropped(tmp_path):
    commits = log(tmp_path)
    commits.mark_ready(3, READY)
    path = tmp_path / "cp" / "window_views" / "ready" / "3.json"
    path.write_text('{"state": ')
    assert commits.ready(3) is None and not path.exists()


def test_a_damaged_last_commit_is_rebuilt_from_its_ready_record(tmp_path):
    commits = log(tmp_path)
    commits.mark_ready(0, READY)
    commits.commit(0, commits.ready(0))
    path = tmp_path / "cp" / "window_views" / "commits" / "0.json"
    path.write_text(path.read_text()[:10])
    later = log(tmp_path, "run-b")
    assert later.last() == {**READY, "batch": 0, "run_id": "run-a"}
    assert storage.read_json(path) == {**READY, "batch": 0, "run_id": "run-a"}


def test_a_damaged_commit_without_its_record_is_named(tmp_path):
    commits = log(tmp_path)
    for batch in (0, 1):
        commits.mark_ready(batch, READY)
        commits.commit(batch, READY)
        commits.clean(batch, None, "1")
    path = tmp_path / "cp" / "window_views" / "commits" / "0.json"
    path.write_text("{")
    with pytest.raises(StreamFailure) as info:
        commits.last(before=1)
    assert info.value.msg.startswith(f"window_view model 'm' (micro-batch 0) at {path}: a file of its streaming checkpoint is damaged")
    assert "--full-refresh -s m" in info.value.msg


def test_damaged_run_totals_restart(tmp_path):
    commits = log(tmp_path)
    (tmp_path / "cp" / "window_views" / "runs").mkdir(parents=True)
    (tmp_path / "cp" / "window_views" / "runs" / "run-a.json").write_text("[")
    commits.commit(0, READY)
    assert commits.run_totals()["batches"] == 1
