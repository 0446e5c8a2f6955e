"""Every FileSystem implementation keeps the contract the commit protocol relies on
(filesystems.py): whole-file writes, create only when absent, listing of direct children, a
missing file as FileNotFoundError, deletes of trees, moves whose target appears whole. Run on
the local disk through each of them: os (LocalFileSystem), Hadoop's FileSystem through the
shared session's JVM (`file:` URIs), pyarrow.fs, and the object-store test filesystem."""

from pathlib import Path

import pytest

from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.storage import paths
from dbt.adapters.window_views.storage.filesystems import ArrowFileSystem, HadoopFileSystem, LocalFileSystem
from tests.support import objectstore


@pytest.fixture(params=["local", "hadoop", "arrow", "objectstore"])
def store(request, tmp_path):
    """(the filesystem, how it spells a location under tmp_path)"""
    if request.param == "hadoop":
        spark = request.getfixturevalue("spark")
        return HadoopFileSystem(spark), lambda *names: paths.join(Path(tmp_path).as_uri(), *names)
    made = {"local": LocalFileSystem, "arrow": ArrowFileSystem, "objectstore": objectstore.ObjectStoreFileSystem}
    return made[request.param](), lambda *names: paths.join(str(tmp_path), *names)


def visible(entries):
    return [(e.name, e.is_dir) for e in entries if not e.name.startswith(".")]  # Hadoop's .crc files


def test_the_contract(store, tmp_path):
    fs, at = store
    with pytest.raises(FileNotFoundError):
        fs.read_bytes(at("cp", "model.json"))
    assert fs.list(at("cp")) == [] and not fs.exists(at("cp", "model.json")) and not fs.is_dir(at("cp"))

    fs.write_bytes(at("cp", "state", "model.json"), b'{"a": 1}')
    fs.write_bytes(at("cp", "state", "model.json"), b'{"a": 2}')  # replaced whole
    assert fs.read_bytes(at("cp", "state", "model.json")) == b'{"a": 2}'
    assert fs.exists(at("cp", "state", "model.json")) and fs.is_dir(at("cp", "state"))
    assert not fs.is_dir(at("cp", "state", "model.json"))

    assert fs.create_new(at("cp", "run.lock"), b"first")
    assert not fs.create_new(at("cp", "run.lock"), b"second")
    assert fs.read_bytes(at("cp", "run.lock")) == b"first"
    assert visible(fs.list(at("cp"))) == [("run.lock", False), ("state", True)]

    fs.mkdirs(at("t"))
    fs.write_bytes(at("t", "_wv_staging", "1", "_wv_bucket=b1", "p0.parquet"), b"rows")
    fs.move(at("t", "_wv_staging", "1", "_wv_bucket=b1", "p0.parquet"), at("t", "b1-n1-p0.parquet"))
    assert fs.read_bytes(at("t", "b1-n1-p0.parquet")) == b"rows"
    assert not fs.exists(at("t", "_wv_staging", "1", "_wv_bucket=b1", "p0.parquet"))

    fs.delete(at("cp"))
    fs.delete(at("cp"))  # nothing there: no error
    fs.delete(at("t", "_wv_staging"))
    assert not fs.exists(at("cp", "state", "model.json")) and fs.list(at("cp")) == []
    assert visible(fs.list(at("t"))) == [("b1-n1-p0.parquet", False)]
    # no temporary file is left beside what was written
    assert sorted(p.name for p in (tmp_path / "t").iterdir() if not p.name.endswith(".crc")) == ["b1-n1-p0.parquet"]


def test_hadoop_errors_are_os_errors(spark, tmp_path):
    """A Java error reaches the runner as the OSError it reports (no py4j traceback): a store
    Spark has no jars for names the scheme (gs: the tests' session has hadoop-aws when fetched)."""
    fs = HadoopFileSystem(spark)
    with pytest.raises(
        OSError, match="no Hadoop filesystem for scheme 'gs' in this Spark session .*GoogleHadoopFileSystem not found"
    ):
        fs.write_bytes("gs://bucket/cp/model.json", b"{}")


def test_the_file_log_spells_files_as_spark_lists_them(spark, tmp_path):
    """Spark's streaming file source remembers the files it read by their URI: the file log
    (storage.log_files) must spell a file as Hadoop's listing does, or a stream reading the table
    would read it again once the table has a log."""
    folder = tmp_path / "it's here=1,2;x@y+z"
    folder.mkdir()
    (folder / "b1-n0-part.parquet").write_text("x")
    path = spark._jvm.org.apache.hadoop.fs.Path(str(folder))
    listed = [
        s.getPath().toUri().toString() for s in path.getFileSystem(spark._jsc.hadoopConfiguration()).listStatus(path)
    ]
    assert listed == [paths.listed_uri(str(folder / "b1-n0-part.parquet"))]


def test_spark_reads_the_file_log_across_deltas_and_compactions(spark, tmp_path):
    """Spark's readers of a table read its file log as storage.log_files writes it: deltas of
    appending batches on top of the last compaction, and a compaction after a batch that
    replaced files (a delta's deletes would not be applied)."""
    fs = LocalFileSystem()
    table = tmp_path / "t"
    for batch in range(12):
        spark.range(batch * 10, batch * 10 + 3).repartition(1).write.parquet(
            str(table / "_wv_staging" / str(batch) / "_wv_bucket=e")
        )
        storage.publish(fs, str(table), batch, storage.plan_publish(fs, str(table), batch))
    read = lambda: sorted(r[0] for r in spark.read.parquet(str(table)).collect())  # noqa: E731
    assert read() == [b * 10 + i for b in range(12) for i in range(3)]
    assert sorted(p.name for p in (table / "_spark_metadata").iterdir() if not p.name.startswith("."))[-3:] == [
        "19.compact",
        "20",
        "9.compact",
    ]
    spark.range(1000, 1002).repartition(1).write.parquet(str(table / "_wv_staging" / "12" / "_wv_bucket=e"))
    storage.publish(fs, str(table), 12, storage.plan_publish(fs, str(table), 12, ["e"]))
    assert read() == [1000, 1001]
