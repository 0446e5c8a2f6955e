"""A streaming window view's Delta commits, without Spark: the txn version of each entry of the
commit log, the app id from Spark's checkpoint, and the staged commit a replay carries out."""

import json
from types import SimpleNamespace

import pytest

from dbt.adapters.window_views.errors import StorageError, StreamFailure
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.records import OtherVersion
from dbt.adapters.window_views.spark.lakehouse import DELTA_EXTENSION, EXTENSIONS
from dbt.adapters.window_views.storage import delta_stream
from dbt.adapters.window_views.storage.delta_stream import StagedCommit, Txn
from dbt.adapters.window_views.storage.filesystems import LOCAL
from dbt.adapters.window_views.streaming.commit.commits import order
from dbt.adapters.window_views.streaming.output_store import DeltaTables, ParquetFolders


def test_txn_versions_increase_as_the_commit_log_orders_batches_and_idle_steps():
    # Delta skips a version at or below the last one of the app id: the log's order must be theirs
    log = [0, "0.1", "0.2", 1, 2, "2.1", 10, "10.3", 11]
    assert sorted(log, key=delta_stream.txn_version) == sorted(log, key=order) == log
    assert len({delta_stream.txn_version(b) for b in log}) == len(log)
    with pytest.raises(ValueError, match="idle step 3.1048576 is past"):
        delta_stream.txn_version(f"3.{delta_stream.IDLE_STEPS}")


def test_the_app_id_is_the_streaming_query_id_in_sparks_checkpoint(tmp_path):
    (tmp_path / "metadata").write_text(json.dumps({"id": "5f0c7a1e-query"}))
    txn = delta_stream.txn(LOCAL, str(tmp_path), "4.2")
    assert txn == Txn("5f0c7a1e-query", 4 * delta_stream.IDLE_STEPS + 2)
    assert txn.options() == {"txnAppId": "5f0c7a1e-query", "txnVersion": str(4 * delta_stream.IDLE_STEPS + 2)}
    with pytest.raises(StorageError, match="has no streaming query id"):
        delta_stream.query_id(LOCAL, str(tmp_path / "none"))


def test_a_staged_commit_reads_back_as_written(tmp_path):
    key = sqlexpr.epoch_micros(sqlexpr.column("window_end"))
    replacing = StagedCommit.replacing(key, 3_600_000_000, [7, 5, 7])
    delta_stream.stage_commit(LOCAL, str(tmp_path), replacing)
    read = StagedCommit.from_json(json.loads((tmp_path / delta_stream.COMMIT_FILE).read_text()))
    assert read == replacing and read.indices == (5, 7)
    assert read.replace_where == delta_stream.hours_replaced(key, 3_600_000_000, [5, 7])
    assert StagedCommit.from_json(StagedCommit().to_json()).replace_where is None  # an append
    with pytest.raises(OtherVersion):
        StagedCommit.from_json({**replacing.to_json(), "version": 0})


class FakeSpark:
    """What the stores ask a session: its settings and a table's DESCRIBE EXTENDED rows."""

    def __init__(self, extensions: str, provider: str) -> None:
        self.conf = {EXTENSIONS: extensions}
        self.provider = provider

    def sql(self, text):
        return SimpleNamespace(collect=lambda: [("Provider", self.provider, "")])


def test_a_streaming_delta_model_needs_delta_in_the_session_and_a_delta_table():
    stores = ParquetFolders(), DeltaTables()
    without, with_delta = FakeSpark("", "parquet"), FakeSpark(DELTA_EXTENSION, "parquet")
    with pytest.raises(StreamFailure, match="file_format='delta' needs Delta Lake in the Spark this dbt command"):
        stores[1].check_session(without, "m")
    stores[0].check_session(without, "m")
    stores[1].check_session(with_delta, "m")
    # a streaming table built as parquet, the model now file_format='delta'
    stores[0].check_table(with_delta, "m", "s.m")
    with pytest.raises(StreamFailure) as info:
        stores[1].check_table(with_delta, "m", "s.m")
    assert info.value.msg == (
        "window_view model 'm': its table s.m is a parquet table and the model now writes delta (file_format); "
        "fix: run `dbt run --full-refresh -s m` to rebuild it as delta from all input, or set file_format back "
        "to 'parquet'"
    )


def test_a_top_n_batchs_staged_commit_names_the_keys_whose_rows_it_replaces(tmp_path):
    commit = StagedCommit(keys=("auction", "bidder"))
    assert StagedCommit.from_json(json.loads(json.dumps(commit.to_json()))) == commit
    assert commit.replace_where is None  # its keys' rows are replaced by a MERGE, not a replaceWhere
    # a record written before Top-N batches reached Delta: no keys
    older = {k: v for k, v in StagedCommit().to_json().items() if k != "keys"}
    assert StagedCommit.from_json(older) == StagedCommit()
    # neither rows nor keys staged: no MERGE (Spark is not asked)
    delta_stream.merge_keys(LOCAL, None, str(tmp_path), "s.m", commit.keys)
