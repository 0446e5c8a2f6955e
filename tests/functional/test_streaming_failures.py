"""What a user can do to a streaming window view's state, and what the plugin says and keeps
(docs/failure-modes.md): a moved location, `--empty`, a reformatted model, two runs at once, a
damaged checkpoint file, an unwritable checkpoint. Each error names the model, the file or
location and the fix, and shows no traceback; nothing the table had is lost."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_streaming import TUMBLE_SUM, deliver, make_source, run, t, window_view

from tests.support.dbt_projects import errors

DAY1 = [("08:07", 2, "A"), ("08:05", 4, "C"), ("08:11", 3, "B")]
DAY2 = [("08:13", 1, "E"), ("08:17", 6, "F"), ("08:21", 5, "G")]
EXPECTED_AFTER_2 = [(t("8:00"), t("8:10"), 6, 2), (t("8:10"), t("8:20"), 10, 3)]


def schema_dir(project) -> Path:
    return Path(project.spark.catalog.getDatabase(project.schema).locationUri.removeprefix("file:"))


def checkpoint(project, name: str) -> Path:
    return schema_dir(project) / f"{name}__checkpoint"


def assert_clean(message: str) -> None:
    for internal in ("Traceback", "py4j", "at org.apache", "_wv_", "JSONDecodeError"):
        assert internal not in message, message


def two_runs(project, name: str) -> None:
    make_source(project)
    window_view(project, name, "on_window_close", TUMBLE_SUM)
    deliver(project, DAY1)
    run(project, name)
    deliver(project, DAY2)
    run(project, name)
    assert project.rows(name) == EXPECTED_AFTER_2


def test_a_moved_location_is_refused_before_anything_is_processed(project, tmp_path):
    two_runs(project, "moving")
    root = tmp_path / "elsewhere"
    window_view(
        project,
        "moving",
        "on_window_close",
        TUMBLE_SUM.replace("select", f"{{{{ config(location_root='{root}') }}}} select", 1),
    )
    deliver(project, [("08:31", 7, "H")])
    result = project.dbt("run", "-s", "moving", ok=False)
    message = errors(result)
    assert (
        f"its table is at {schema_dir(project) / 'moving'} but the config now puts it at {root / 'moving'}" in message
    )
    assert "set location_root / checkpoint_location back" in message and "--full-refresh -s moving" in message
    assert_clean(message)
    assert not root.exists()  # nothing written at the new location
    assert project.rows("moving") == EXPECTED_AFTER_2
    # the fix that moves: a full refresh rebuilds everything at the new location from all input
    result = project.dbt("run", "-s", "moving", "--full-refresh")
    assert result.result[0].message.startswith("STREAM 1 batch, 7 in")
    assert (root / "moving__checkpoint").is_dir()


def test_empty_leaves_streaming_state_untouched(project):
    make_source(project)
    window_view(project, "emptied", "on_window_close", TUMBLE_SUM)
    deliver(project, DAY1)
    # before any real run: an empty table for downstream nodes, no checkpoint
    result = project.dbt("run", "-s", "emptied", "--empty")
    assert result.result[0].message.startswith("EMPTY: --empty leaves the streaming table")
    assert project.rows("emptied") == []
    assert not checkpoint(project, "emptied").exists()
    run(project, "emptied")
    deliver(project, DAY2)
    files = sorted(str(p) for p in checkpoint(project, "emptied").rglob("*"))
    before = project.rows("emptied")
    result = project.dbt("build", "-s", "emptied", "--empty")
    assert result.result[0].message.startswith("EMPTY")
    assert sorted(str(p) for p in checkpoint(project, "emptied").rglob("*")) == files
    assert project.rows("emptied") == before
    # the next real run carries on where the last one stopped
    node = run(project, "emptied")
    assert node.adapter_response["rows_in"] == 3
    assert project.rows("emptied") == EXPECTED_AFTER_2


def test_comments_and_formatting_do_not_change_the_model(project):
    make_source(project)
    window_view(project, "reformatted", "on_window_close", TUMBLE_SUM)
    deliver(project, DAY1)
    run(project, "reformatted")
    window_view(
        project,
        "reformatted",
        "on_window_close",
        "-- revenue per window\n"
        + TUMBLE_SUM.replace("select", "SELECT /* each window */", 1).replace(", ", ",\n    "),
    )
    deliver(project, DAY2)
    node = run(project, "reformatted")
    assert node.adapter_response["rows_in"] == 3
    assert project.rows("reformatted") == EXPECTED_AFTER_2


def went_through(fs) -> None:
    """With the object-store filesystem, the runner's files really went through it."""
    calls = getattr(fs, "calls", None)
    if calls is not None:
        assert calls["put"] and calls["copy"] and calls["conditional_put"], calls


def test_a_second_run_fails_fast_and_a_dead_holder_is_taken_over(project, fs):
    from dbt.adapters.window_views.spark.processes import started
    from dbt.adapters.window_views.streaming.commit.lock import Holder, RunLock

    two_runs(project, "locked")
    holder = subprocess.Popen(["sleep", "120"])
    lock = checkpoint(project, "locked") / "run.lock"
    try:
        # another live run holds the lock (here: a process of this host that is still running)
        held = RunLock(fs, str(lock), "other-run-id")
        held.me = Holder(held.me.run_id, held.me.host, holder.pid, started(holder.pid))
        held._create()
        result = project.dbt("run", "-s", "locked", ok=False)
        message = errors(result)
        assert "another run of this model holds its checkpoint: run other-run-id (host" in message
        assert f"pid {holder.pid}" in message and "wait for that run to end" in message
        assert_clean(message)
    finally:
        holder.kill()
        holder.wait()
    # its process is gone: the next run takes the lock over without manual steps
    deliver(project, [("08:31", 7, "H")])
    node = run(project, "locked")
    assert node.adapter_response["rows_in"] == 1
    assert not lock.exists()
    went_through(fs)


def test_damaged_files_are_repaired_when_provably_safe_else_named(project, fs):
    two_runs(project, "damaged")
    state = checkpoint(project, "damaged") / "window_views"
    spark_dir = checkpoint(project, "damaged") / "spark"
    last = max(int(p.stem) for p in (state / "commits").glob("*.json"))
    # a torn last commit: rebuilt from its batch's READY record
    commit = state / "commits" / f"{last}.json"
    good = json.loads(commit.read_text())
    commit.write_text(commit.read_text()[:20])
    # and a torn last Spark commit: removed, so Spark replays the batch, which the writer skips
    (spark_dir / "commits" / str(last)).write_text("v1\n{")
    deliver(project, [("08:31", 7, "H")])
    node = run(project, "damaged")
    assert node.adapter_response["rows_in"] == 1
    assert json.loads(commit.read_text()) | {"run_id": good["run_id"]} == good
    assert project.rows("damaged") == EXPECTED_AFTER_2 + [(t("8:20"), t("8:30"), 5, 1)]

    # model.json: cannot be rebuilt, so the run fails naming it, and the table stays
    model_file = state / "model.json"
    text = model_file.read_text()
    model_file.write_text(text[: len(text) // 2])
    message = errors(project.dbt("run", "-s", "damaged", ok=False))
    assert f"a file of its streaming checkpoint is damaged: {model_file} is not valid JSON" in message
    assert "--full-refresh -s damaged" in message
    assert_clean(message)
    model_file.write_text(text)

    # Spark's offsets of a committed batch: named, not guessed
    offsets = (
        spark_dir / "offsets" / str(max(int(p.name) for p in (spark_dir / "offsets").iterdir() if p.name.isdigit()))
    )
    saved = offsets.read_text()
    offsets.write_text('v1\n{"batchWatermarkMs"')
    message = errors(project.dbt("run", "-s", "damaged", ok=False))
    assert "a file of Spark's streaming checkpoint is damaged and cannot be repaired safely" in message
    assert str(offsets) in message
    assert_clean(message)
    offsets.write_text(saved)
    assert project.rows("damaged") == EXPECTED_AFTER_2 + [(t("8:20"), t("8:30"), 5, 1)]
    went_through(fs)

    # a torn file of the state's rows: the window view's own, named with the full refresh (not as
    # a file of its input)
    latest = max((state / "commits").glob("*.json"), key=lambda p: int(p.stem))
    kept = next((state / "state" / json.loads(latest.read_text())["state_batch"]).glob("*.parquet"))
    whole = kept.read_bytes()
    kept.write_bytes(whole[: len(whole) // 2])
    deliver(project, [("08:32", 8, "I")])
    message = errors(project.dbt("run", "-s", "damaged", ok=False))
    assert f"at {kept}: a file of its checkpoint, which the window view wrote, cannot be read" in message
    assert (
        "fix: run `dbt run --full-refresh -s damaged` to rebuild the table" in message and "of its input" not in message
    )
    assert_clean(message)
    kept.write_bytes(whole)
    assert run(project, "damaged").adapter_response["rows_in"] == 1


@pytest.mark.parametrize("record", ["model.json", "commit"])
def test_a_checkpoint_of_another_plugin_version_is_named_and_full_refresh_rebuilds_it(project, record):
    """A checkpoint record written by another version of the plugin (here: one without a record
    version) fails the run naming the file and `--full-refresh`, and leaves the table as it was;
    the full refresh rebuilds it from all input."""
    two_runs(project, "other")
    state = checkpoint(project, "other") / "window_views"
    if record == "model.json":
        path = state / "model.json"
    else:
        path = max((state / "commits").glob("*.json"), key=lambda p: int(p.stem))
    written = json.loads(path.read_text())
    del written["version"]
    path.write_text(json.dumps(written))
    message = errors(project.dbt("run", "-s", "other", ok=False))
    assert (
        f"window_view model 'other' at {path}: its checkpoint was written by a different version of the plugin"
    ) in message, message
    assert "run `dbt run --full-refresh -s other`" in message
    assert_clean(message)
    assert project.rows("other") == EXPECTED_AFTER_2
    project.dbt("run", "-s", "other", "--full-refresh")
    assert project.rows("other") == EXPECTED_AFTER_2


def test_an_unwritable_checkpoint_is_named(project):
    make_source(project)
    deliver(project, DAY1)
    if os.geteuid() == 0:  # root writes through permissions; /sys refuses everyone
        folder = Path("/sys/window_views_checkpoint")
        config = f"{{{{ config(checkpoint_location='{folder}') }}}} select"
        window_view(project, "readonly", "on_window_close", TUMBLE_SUM.replace("select", config, 1))
        message = errors(project.dbt("run", "-s", "readonly", ok=False))
    else:
        window_view(project, "readonly", "on_window_close", TUMBLE_SUM)
        run(project, "readonly")
        folder = checkpoint(project, "readonly")
        folder.chmod(0o555)
        try:
            message = errors(project.dbt("run", "-s", "readonly", ok=False))
        finally:
            folder.chmod(0o755)
    assert "cannot write its checkpoint (" in message and str(folder) in message
    assert "make the checkpoint directory writable" in message
    assert_clean(message)


def _set_writable(folder: Path, writable: bool) -> None:
    """Every file and folder under `folder` made writable or not, for root too (immutable)."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-R", "-i" if writable else "+i", str(folder)], check=True)
        return
    for path in [folder, *folder.rglob("*")]:
        path.chmod((0o755 if path.is_dir() else 0o644) if writable else (0o555 if path.is_dir() else 0o444))


def test_a_checkpoint_spark_cannot_write_is_named(project):
    # the run's lock and records can be written, Spark's own part of the checkpoint cannot
    make_source(project)
    deliver(project, DAY1)
    window_view(project, "sparkreadonly", "on_window_close", TUMBLE_SUM)
    run(project, "sparkreadonly")
    deliver(project, DAY2)
    folder = checkpoint(project, "sparkreadonly")
    _set_writable(folder / "spark", False)
    try:
        message = errors(project.dbt("run", "-s", "sparkreadonly", ok=False))
    finally:
        _set_writable(folder / "spark", True)
    assert f"window_view model 'sparkreadonly' at {folder}: cannot write its checkpoint (" in message, message
    assert "make the checkpoint directory and everything under it writable" in message
    assert "STREAM_FAILED" not in message and "runId" not in message and ".tmp" not in message
    assert_clean(message)
    run(project, "sparkreadonly")  # once writable, the stream carries on
    assert project.rows("sparkreadonly") == EXPECTED_AFTER_2


def test_paths_are_quoted_and_relative_ones_refused(project, tmp_path):
    make_source(project)
    deliver(project, DAY1)
    root = tmp_path / "it's here"
    project.model(
        "quoted",
        f"{{{{ config(materialized='window_view', location_root=\"{root}\") }}}}\n" + TUMBLE_SUM,
    )
    project.dbt("run", "-s", "quoted")
    assert len(project.rows("quoted")) == 2
    assert any(root.joinpath("quoted").iterdir())
    window_view(
        project,
        "relative",
        "on_window_close",
        TUMBLE_SUM.replace("select", "{{ config(location_root='data/wv') }} select", 1),
    )
    message = errors(project.dbt("compile", "-s", "relative", ok=False))
    assert (
        "config 'location_root' = 'data/wv' is a relative path" in message
        and "give an absolute directory path" in message
    )


@pytest.mark.parametrize("emit", ["on_update", "on_window_close"])
def test_every_row_reaches_a_window_or_the_late_table(project, emit):
    """Row conservation: rows in = rows counted in windows + late rows, rows without event time
    among the late ones, for window TVFs as for over windows."""
    make_source(project)
    name = f"conserved_{emit}"
    window_view(project, name, emit, TUMBLE_SUM)
    deliver(project, DAY1)
    project.spark.sql(f"insert into {project.schema}.bid values (null, 9, 'N'), (null, 8, 'M')")
    first = run(project, name)
    deliver(project, DAY2 + [("08:01", 7, "L")])  # 08:01 arrives after its window closed
    project.spark.sql(f"insert into {project.schema}.bid values (null, 1, 'O')")
    second = run(project, name)
    rows_in = first.adapter_response["rows_in"] + second.adapter_response["rows_in"]
    late = first.adapter_response["late_rows"] + second.adapter_response["late_rows"]
    assert rows_in == 10 and late == 4
    late_items = sorted(r[2] for r in project.rows(f"{name}__late"))
    assert late_items == ["L", "M", "N", "O"]
    in_windows = sum(r[3] for r in project.rows(name))
    if emit == "on_update":
        assert in_windows == rows_in - late
    else:  # the last window is still open
        assert in_windows == rows_in - late - 1


def test_readers_never_see_a_half_published_batch(project, monkeypatch):
    """On an object store a publish is copies, then deletes: a run that dies between them leaves
    a batch's new files beside the ones they replace. Spark's readers of the table read the file
    log the commit protocol writes (storage.log_files), so they see the last committed batch
    until the next run finishes this one."""
    from dbt.adapters.window_views.storage import filesystems
    from tests.support import objectstore

    store = objectstore.ObjectStoreFileSystem()
    monkeypatch.setattr(filesystems, "LOCAL", store)
    make_source(project)
    window_view(project, "halfway", "on_update", TUMBLE_SUM)
    deliver(project, DAY1)
    run(project, "halfway")
    committed = project.rows("halfway")
    deliver(project, DAY2)  # revises the window 08:10-08:20, whose file the batch replaces
    move = store.move

    def dies_after_the_first_copy(source, target):
        store.write_bytes(target, Path(source).read_bytes())
        raise OSError(5, "connection reset (injected)", target)

    monkeypatch.setattr(store, "move", dies_after_the_first_copy)
    message = errors(project.dbt("run", "-s", "halfway", ok=False))
    assert "window_view model 'halfway' (micro-batch 1) at " in message
    assert "cannot read or write its files (connection reset (injected))" in message and "run again" in message
    assert_clean(message)
    table = schema_dir(project) / "halfway"
    files = sorted(p.name for p in table.glob("*.parquet"))
    assert any("-n1-" in f for f in files) and any("-n0-" in f for f in files), files  # both versions there
    assert project.rows("halfway") == committed
    monkeypatch.setattr(store, "move", move)
    run(project, "halfway")
    assert project.rows("halfway") == EXPECTED_AFTER_2 + [(t("8:20"), t("8:30"), 5, 1)]
    # the replaced file is gone: the folder holds exactly what the log lists
    from dbt.adapters.window_views.storage import commit_files as storage

    assert sorted(p.name for p in table.glob("*.parquet")) == sorted(storage.logged_files(store, str(table)))


# gs: the tests' session has hadoop-aws (s3a) when it is fetched, and no store's jars but that
@pytest.mark.parametrize("setting", ["location_root='gs://bucket/wv'", "checkpoint_location='gs://bucket/cp'"])
def test_a_store_the_session_has_no_jars_for_is_named_before_anything_is_written(project, setting):
    """Object-store locations are accepted (no refusal at compile time); a session without the
    store's Hadoop jars (pip's pyspark has none) fails the run naming the model, the location and
    the jars to add, and writes nothing."""
    make_source(project)
    deliver(project, DAY1)
    window_view(
        project, "remote", "on_window_close", TUMBLE_SUM.replace("select", f"{{{{ config({setting}) }}}} select", 1)
    )
    project.dbt("compile", "-s", "remote")
    message = errors(project.dbt("run", "-s", "remote", ok=False))
    assert "window_view model 'remote' at gs://bucket/" in message, message
    assert (
        "no Hadoop filesystem for scheme 'gs' in this Spark session" in message
        and "GoogleHadoopFileSystem not found" in message
    )
    assert "give the Spark session the store's Hadoop jars (s3a: hadoop-aws" in message
    assert_clean(message)
    assert not project.spark.catalog.tableExists(f"{project.schema}.remote")


def test_the_models_sql_failing_on_a_batchs_rows_names_sparks_error(project):
    """A runtime SQL error of the model on a micro-batch's rows (here raise_error on a price out of
    range; dbt-spark turns ANSI mode off, so casts and divisions by zero return NULL instead)
    reaches dbt as Spark's error class and message, naming the model and the micro-batch: not
    Spark's foreachBatch wrapper, no stack, no query context, no internal names. Nothing of the
    batch is committed, and the next run redoes it rather than skipping it."""
    make_source(project)
    checked = "sum(if(price < 100, price, raise_error(concat('price ', price, ' is out of range')))) as checked"
    window_view(
        project, "failing", "on_window_close", TUMBLE_SUM.replace("count(*) as bids", f"count(*) as bids, {checked}")
    )
    deliver(project, [("08:07", 2, "A"), ("08:12", 3, "B")])
    run(project, "failing")
    committed = project.rows("failing")
    assert committed == [(t("8:00"), t("8:10"), 2, 1, 2)]
    deliver(project, [("08:13", 400, "X"), ("08:21", 5, "C")])
    state = checkpoint(project, "failing") / "window_views"
    for _ in range(2):  # redone by the next run, not skipped
        message = errors(project.dbt("run", "-s", "failing", ok=False))
        assert (
            "window_view model 'failing' (micro-batch 1): Spark failed the micro-batch: [USER_RAISED_EXCEPTION] "
            "price 400 is out of range SQLSTATE: P0001; fix: fix the model's SQL or the input rows it fails on, "
            "and run again: committed micro-batches are kept, this one is redone"
        ) in message, message
        assert_clean(message)
        for noise in ("FOREACH_BATCH_USER_FUNCTION_ERROR", "Python Proxy", "==", "streaming query failed"):
            assert noise not in message, message
        assert sorted(p.name for p in (state / "commits").iterdir()) == ["0.json"]
        assert not (state / "ready" / "1.json").exists()
        assert project.rows("failing") == committed


def test_a_stray_file_in_a_table_without_a_file_log_is_named(project):
    """A table whose file log was removed by hand has only its folder's listing for its files: a
    file put there by hand belongs to no bucket. An on_update batch, which rewrites buckets, names it
    instead of guessing, publishes nothing, and carries on once it is moved out."""
    make_source(project)
    window_view(project, "stray", "on_update", TUMBLE_SUM)
    deliver(project, DAY1)
    run(project, "stray")
    table = schema_dir(project) / "stray"
    shutil.rmtree(table / "_spark_metadata")  # removed from outside
    mine = sorted(p for p in table.iterdir() if p.suffix == ".parquet")
    stray = table / "copy.parquet"
    shutil.copy(mine[0], stray)
    before = sorted(p.name for p in table.iterdir())
    deliver(project, DAY2)
    message = errors(project.dbt("run", "-s", "stray", ok=False))
    assert (
        f"window_view model 'stray' at {table}: its table's folder holds `copy.parquet`, a file the window "
        "view did not write; fix: move that file out of the folder"
    ) in message, message
    assert_clean(message)
    assert sorted(p.name for p in table.iterdir()) == before
    stray.rename(schema_dir(project) / "copy.parquet")
    node = run(project, "stray")
    assert node.adapter_response["rows_in"] == 3
    assert project.rows("stray") == EXPECTED_AFTER_2 + [(t("8:20"), t("8:30"), 5, 1)]


def test_a_landed_file_whose_column_has_another_type_is_named(project):
    """A file in an input's folder with a column of another type than the table's (price STRING,
    the table says INT) fails the batch naming the file, the input, the column, both types and
    the fix; committed micro-batches are kept and, the file moved out, the next run redoes the
    batch with the rows of the input's other new files. A file without a column is read with
    NULLs in it (Spark's schema evolution for Parquet), not refused."""
    two_runs(project, "mistyped")
    state = checkpoint(project, "mistyped") / "window_views"
    deliver(project, [("08:31", 7, "H")])
    landed = project.land(
        "bid", "amounts", "select timestamp'2020-04-15 08:32:00' as bidtime, '8' as price, 'I' as item"
    )
    source = f"{project.schema}.bid"
    message = errors(project.dbt("run", "-s", "mistyped", ok=False))
    assert (
        f"window_view model 'mistyped' (micro-batch 2) at {landed}: a file of its input {source} has the column "
        f"`price` as STRING, where {source} declares INT, and Spark cannot read one as the other; fix: move the "
        f"file out of the folder of {source}, or rewrite it under the same name with `price` as INT; then run "
        "again: committed micro-batches are kept, this one is redone. If the file's type is the right one, give "
        f"{source} a type Spark reads every file as and run `dbt run --full-refresh -s mistyped`"
    ) in message, message
    assert_clean(message)
    for noise in ("FOREACH_BATCH_USER_FUNCTION_ERROR", "Python Proxy", "streaming query failed", "Traceback"):
        assert noise not in message, message
    assert sorted(p.name for p in (state / "commits").iterdir()) == ["0.json", "1.json"]
    assert project.rows("mistyped") == EXPECTED_AFTER_2
    landed.rename(schema_dir(project) / "amounts.parquet")
    node = run(project, "mistyped")
    assert node.adapter_response["rows_in"] == 1  # 08:31, delivered beside the file of another type
    assert project.rows("mistyped") == EXPECTED_AFTER_2 + [(t("8:20"), t("8:30"), 5, 1)]
    # a file without `price`: its rows have price NULL (a sum skips them, a count counts them)
    project.land("bid", "no_price", "select timestamp'2020-04-15 08:41:00' as bidtime, 'J' as item")
    run(project, "mistyped")
    assert project.rows("mistyped")[-1] == (t("8:30"), t("8:40"), 7, 1)
    deliver(project, [("08:51", 1, "K")])
    run(project, "mistyped")
    assert project.rows("mistyped")[-1] == (t("8:40"), t("8:50"), None, 1)


QUIET_DRIVER = """
import datetime as dt, glob, os, sys
import pyarrow as pa, pyarrow.parquet as pq
from dbt.cli.main import dbtRunner

project = sys.argv[1]
args = ["run", "--project-dir", project, "--profiles-dir", project]
assert dbtRunner().invoke(args).success
(folder,) = glob.glob(os.path.join(project, "target", "**", "landing.db", "bid"), recursive=True)
bad = {"bidtime": [dt.datetime(2020, 4, 15, 8, 1)], "price": ["8"], "item": ["A"]}
pq.write_table(pa.table(bad), os.path.join(folder, "bad.parquet"))
print("SECOND RUN OK" if dbtRunner().invoke(args).success else "SECOND RUN FAILED")
"""


def test_a_failed_micro_batch_is_one_message_without_spark_s_stacks(tmp_path):
    """In a dbt process of its own (the JVM's stderr is the process's): a micro-batch that fails
    (a landed file of another type) prints the plugin's message and none of Spark's task,
    scheduler and streaming-query ERROR logs with their Java stacks, nor py4j's Python traceback
    of the foreachBatch call."""
    project = tmp_path / "quiet"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(
        "name: quiet\nversion: '1.0'\nprofile: quiet\non-run-start:\n"
        "  - create database if not exists landing\n"
        "  - create table if not exists landing.bid (bidtime timestamp, price int, item string) using parquet\n"
    )
    (project / "profiles.yml").write_text(
        "quiet:\n  target: dev\n  outputs:\n    dev: {type: window_views, schema: quiet}\n"
    )
    (project / "models" / "sources.yml").write_text(
        "version: 2\nsources:\n  - {name: landing, schema: landing, tables: [{name: bid}]}\n"
    )
    (project / "models" / "s.sql").write_text(
        "{{ config(materialized='window_view', execution='streaming', emit='on_window_close', "
        "watermark={'column': 'bidtime', 'delay': '1 minute'}) }}\n"
        "select window_start, window_end, sum(price) as price\n"
        "from {{ window_views.tumble(source('landing', 'bid'), 'bidtime', '10 minutes') }}\n"
        "group by window_start, window_end\n"
    )
    driver = tmp_path / "driver.py"
    driver.write_text(QUIET_DRIVER)
    env = {k: v for k, v in os.environ.items() if k != "WINDOW_VIEWS_SPARK_LOGS"}
    proc = subprocess.run(
        [sys.executable, str(driver), str(project)], capture_output=True, text=True, env=env, timeout=600
    )
    assert "SECOND RUN FAILED" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "has the column `price` as STRING, where landing.bid declares INT" in proc.stdout
    for noise in ("ERROR Executor", "ERROR TaskSetManager", "ERROR MicroBatchExecution", "Traceback", "\tat org."):
        assert noise not in proc.stderr, proc.stderr[-3000:]
