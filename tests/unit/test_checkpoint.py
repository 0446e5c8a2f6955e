"""Spark's checkpoint files checked before a streaming run (no Spark): the torn last entry is
repaired only while that is provably safe; every other damaged file is named."""

from pathlib import Path

import pytest

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.streaming.commit import checkpoint
from dbt.adapters.window_views.streaming.commit.commits import Locations

OFFSETS = 'v1\n{"batchWatermarkMs":0,"batchTimestampMs":1,"conf":{}}\n{"logOffset":%d}\n'
COMMIT = 'v1\n{"nextBatchWatermarkMs":0}\n'


class Where:
    """Locations, with the checkpoint's folders as paths to damage files in."""

    def __init__(self, tmp_path: Path) -> None:
        self.locations = Locations(tmp_path / "t", tmp_path / "t__late", tmp_path / "cp")
        self.table = Path(self.locations.table)
        self.spark_checkpoint = Path(self.locations.spark_checkpoint)
        self.state = Path(self.locations.state)


def where(tmp_path: Path, offsets: int, commits: int) -> Where:
    loc = Where(tmp_path)
    for folder, n, text in (("offsets", offsets, OFFSETS), ("commits", commits, COMMIT)):
        (loc.spark_checkpoint / folder).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            (loc.spark_checkpoint / folder / str(i)).write_text(text % i if "%" in text else text)
    return loc


def test_an_intact_checkpoint_needs_nothing(tmp_path, fs):
    assert checkpoint.check("m", where(tmp_path, 3, 3).locations, fs) == []


def test_a_torn_last_spark_commit_is_removed(tmp_path, fs):
    loc = where(tmp_path, 3, 3)
    (loc.spark_checkpoint / "commits" / "2").write_text("v1\n{")
    assert checkpoint.check("m", loc.locations, fs) == [
        f"removed the damaged {loc.spark_checkpoint / 'commits' / '2'} (batch 2 is replayed)"
    ]
    assert not (loc.spark_checkpoint / "commits" / "2").exists()


def test_torn_offsets_of_an_unpublished_batch_are_planned_again(tmp_path, fs):
    loc = where(tmp_path, 3, 2)
    (loc.spark_checkpoint / "offsets" / "2").write_text('v1\n{"batchWat')
    staged = loc.table / "_wv_staging" / "2"
    staged.mkdir(parents=True)
    assert len(checkpoint.check("m", loc.locations, fs)) == 1
    assert not (loc.spark_checkpoint / "offsets" / "2").exists() and not staged.exists()


@pytest.mark.parametrize("record", ["commits", "ready"])
def test_torn_offsets_of_a_batch_that_may_be_published_are_named(tmp_path, record, fs):
    loc = where(tmp_path, 3, 2)
    (loc.spark_checkpoint / "offsets" / "2").write_text("v1\n{")
    (loc.state / record).mkdir(parents=True)
    (loc.state / record / "2.json").write_text("{}")
    with pytest.raises(
        StreamFailure, match=r"\(micro-batch 2\) at .*offsets/2: a file of Spark's streaming checkpoint is damaged"
    ):
        checkpoint.check("m", loc.locations, fs)
    assert (loc.spark_checkpoint / "offsets" / "2").exists()


def test_torn_offsets_of_a_committed_batch_are_named(tmp_path, fs):
    loc = where(tmp_path, 3, 3)
    (loc.spark_checkpoint / "offsets" / "2").write_text("")
    with pytest.raises(StreamFailure, match="cannot be repaired safely"):
        checkpoint.check("m", loc.locations, fs)


def test_an_earlier_torn_entry_is_named(tmp_path, fs):
    loc = where(tmp_path, 3, 3)
    (loc.spark_checkpoint / "commits" / "1").write_text("v1\n{")
    with pytest.raises(StreamFailure, match=r"commits/1"):
        checkpoint.check("m", loc.locations, fs)


def test_a_check_shipped_to_a_spark_task_comes_back_as_the_same_failure(tmp_path):
    """A Spark Connect client runs the check in a task on the cluster (TaskFileSystem.run): its
    result and its failure, named as here, come back pickled."""
    import pickle

    from dbt.adapters.window_views.storage import filesystems

    loc = where(tmp_path, 3, 3)
    ok = pickle.loads(filesystems._run_in_task(pickle.dumps(("run", (checkpoint._check, "m", loc.locations)))))
    assert ok == ("ok", [])
    (loc.spark_checkpoint / "commits" / "1").write_text("v1\n{")
    status, error = pickle.loads(
        filesystems._run_in_task(pickle.dumps(("run", (checkpoint._check, "m", loc.locations))))
    )
    assert status == "error" and isinstance(error, StreamFailure)
    assert error.msg.startswith(
        f"window_view model 'm' (micro-batch 1) at {loc.spark_checkpoint / 'commits' / '1'}: a file"
    )
    status, error = pickle.loads(filesystems._run_in_task(pickle.dumps(("read_bytes", (str(tmp_path / "none"),)))))
    assert status == "error" and isinstance(error, FileNotFoundError)


def test_offsets_of_several_sources_one_without_an_offset_yet_are_intact(tmp_path, fs):
    # a query over several inputs (a window join): Spark writes "-" for a source with no offset
    loc = where(tmp_path, 2, 2)
    for i in range(2):
        (loc.spark_checkpoint / "offsets" / str(i)).write_text(OFFSETS % i + "-\n")
    assert checkpoint.check("m", loc.locations, fs) == []
