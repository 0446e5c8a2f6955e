"""A streaming window view's Iceberg snapshots, without Spark: what a batch's snapshot carries,
which catalog table a folder's Iceberg table is written through, the build's own table, and the
store the model's file_format picks with its checks."""

import json
from types import SimpleNamespace

import pytest

from dbt.adapters.window_views.errors import StorageError, StreamFailure
from dbt.adapters.window_views.model.config import FileFormat
from dbt.adapters.window_views.spark.lakehouse import EXTENSIONS, ICEBERG
from dbt.adapters.window_views.storage import iceberg_stream
from dbt.adapters.window_views.storage.filesystems import LOCAL
from dbt.adapters.window_views.streaming.output_store import (
    DeltaOutput,
    DeltaTables,
    IcebergOutput,
    IcebergTables,
    ParquetFolders,
    store_of,
)


def metadata(folder, number: int, properties) -> None:
    """One of Iceberg's numbered metadata files, with its table properties."""
    (folder / "metadata").mkdir(parents=True, exist_ok=True)
    (folder / "metadata" / f"{number:05d}-a1b2.metadata.json").write_text(json.dumps({"properties": properties}))


def test_a_batch_snapshot_carries_the_stream_and_the_batch():
    assert iceberg_stream.commit_id("5f0c7a1e-query", "4.2") == "5f0c7a1e-query/4.2"
    assert iceberg_stream.commit_id("5f0c7a1e-query", 4) != iceberg_stream.commit_id("another-query", 4)
    assert iceberg_stream.SESSION_PROPERTY == "spark.sql.iceberg.snapshot-property.window_views.commit"


def test_the_newest_metadata_names_the_catalog_table(tmp_path):
    table = tmp_path / "m"
    assert iceberg_stream.newest_metadata(LOCAL, str(table)) is None
    assert not iceberg_stream.is_iceberg(LOCAL, str(table))
    metadata(table, 9, {iceberg_stream.TABLE_PROPERTY: "s.wv_build_0123"})
    metadata(table, 10, {iceberg_stream.TABLE_PROPERTY: "s.m"})  # after the swap: numbers, not names, order
    (table / "metadata" / ".00011-a1b2.metadata.json.crc").write_text("")
    assert iceberg_stream.newest_metadata(LOCAL, str(table)) == f"{table}/metadata/00010-a1b2.metadata.json"
    assert iceberg_stream.is_iceberg(LOCAL, str(table))
    assert iceberg_stream.table_of(LOCAL, str(table)) == "s.m"
    other = tmp_path / "other"
    metadata(other, 0, {})
    with pytest.raises(StorageError, match="holds no Iceberg table of a streaming window view"):
        iceberg_stream.table_of(LOCAL, str(other))


def test_a_rebuild_writes_through_a_table_of_its_own_named_by_its_folder():
    spark = SimpleNamespace(catalog=SimpleNamespace(currentDatabase=lambda: "s"))
    first = iceberg_stream.build_table(spark, "/wh/s.db/m__v2")
    assert first.startswith("s.wv_build_") and first == iceberg_stream.build_table(spark, "file:///wh/s.db/m__v2/")
    assert first != iceberg_stream.build_table(spark, "/wh/s.db/m__v2__late")


def test_file_format_iceberg_streams_into_iceberg_tables():
    def plan(file_format):
        return SimpleNamespace(config=SimpleNamespace(file_format=file_format))

    assert type(store_of(plan(FileFormat.ICEBERG))) is IcebergTables
    assert type(store_of(plan(FileFormat.DELTA))) is DeltaTables
    assert type(store_of(plan(FileFormat.PARQUET))) is ParquetFolders
    assert IcebergTables.source == "iceberg"


class FakeSpark:
    def __init__(self, extensions: str, provider: str) -> None:
        self.conf = {EXTENSIONS: extensions}
        self.provider = provider

    def sql(self, text):
        return SimpleNamespace(collect=lambda: [("Provider", self.provider, "")])


def test_a_streaming_iceberg_model_needs_iceberg_in_the_session_and_an_iceberg_table():
    store = IcebergTables()
    with pytest.raises(StreamFailure) as info:
        store.check_session(FakeSpark("", "parquet"), "m")
    assert info.value.msg.startswith(
        "window_view model 'm': file_format='iceberg' needs Apache Iceberg in the Spark this dbt command started"
    )
    assert "fix: set lakehouse: iceberg in the profile" in info.value.msg
    store.check_session(FakeSpark(ICEBERG.extension, "iceberg"), "m")
    store.check_table(FakeSpark(ICEBERG.extension, "iceberg"), "m", "s.m")
    with pytest.raises(StreamFailure, match="its table s.m is a parquet table and the model now writes iceberg"):
        store.check_table(FakeSpark(ICEBERG.extension, "parquet"), "m", "s.m")


def test_a_streaming_top_n_into_iceberg_stages_as_delta_does():
    # a Top-N's batch is an IcebergOutput's upsert_keys, Delta's: no refusal of its own
    assert IcebergOutput.upsert_keys is DeltaOutput.upsert_keys
