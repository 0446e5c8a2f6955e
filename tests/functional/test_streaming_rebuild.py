"""Changes and full refreshes of a streaming window view without downtime (streaming/rebuild.py):
the new version is streamed from all input beside the live one and swapped in once it has
caught up; readers see the old table until then, and a rebuild that fails or dies leaves the old
table, late table and checkpoint as they were."""

import subprocess
from pathlib import Path
from typing import Dict, List

import pytest
from test_streaming import DELIVERIES, TUMBLE_SUM, deliver, make_source, run, t, window_view
from test_streaming_failures import assert_clean, checkpoint, schema_dir

from tests.support.dbt_projects import errors
from tests.support.readers import Reader

WITH_TOP = TUMBLE_SUM.replace("count(*) as bids", "count(*) as bids, max(price) as top")
REBUILD = "{{ config(on_change='rebuild') }}\n"
# what the stream keeps after DELIVERIES[0] and [1] in two runs, then [2] in a third (08:08 is late)
STREAMED = [(t("8:00"), t("8:10"), 11, 3), (t("8:10"), t("8:20"), 10, 3), (t("8:20"), t("8:30"), 1, 1)]


def batch_result(project, columns: str = "sum(price), count(*)") -> List[tuple]:
    """The model over all input, as a batch query computes it (nothing is late to it)."""
    return [
        tuple(r)
        for r in project.spark.sql(
            f"""select timestamp_seconds(div(unix_seconds(bidtime), 600) * 600) as s,
                   timestamp_seconds(div(unix_seconds(bidtime), 600) * 600 + 600), {columns}
            from {project.schema}.bid group by 1, 2 order by all"""
        ).collect()
    ]


def snapshot(folder: Path) -> Dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def streamed_twice(project, name: str, select: str = TUMBLE_SUM) -> List[tuple]:
    make_source(project)
    window_view(project, name, "on_update", select)
    deliver(project, DELIVERIES[0])
    run(project, name)
    deliver(project, DELIVERIES[1])
    run(project, name)
    return project.rows(name)


def held_lock(project, name: str, fs) -> subprocess.Popen:
    """The model's run lock, held by a live process of this host (another run)."""
    from dbt.adapters.window_views.spark import processes
    from dbt.adapters.window_views.streaming.commit import lock as run_lock

    holder = subprocess.Popen(["sleep", "120"])
    lock = run_lock.RunLock(fs, str(checkpoint(project, name) / "run.lock"), "other-run-id")
    lock.me = run_lock.Holder(lock.me.run_id, lock.me.host, holder.pid, processes.started(holder.pid))
    assert lock._create()
    return holder


def release(holder: subprocess.Popen) -> None:
    holder.kill()
    holder.wait()


def test_readers_see_the_old_table_until_a_full_refresh_swaps_in_the_new_one(project):
    from dbt.adapters.window_views.storage import filesystems

    old = streamed_twice(project, "steady")
    deliver(project, DELIVERIES[2])
    new = batch_result(project)
    assert old != new
    # a rebuild takes the run's lock: not while another run holds it
    holder = held_lock(project, "steady", filesystems.LOCAL)
    try:
        message = errors(project.dbt("run", "-s", "steady", "--full-refresh", ok=False))
        assert "another run of this model holds its checkpoint: run other-run-id" in message
        assert not list(schema_dir(project).glob("steady__v2*"))
    finally:
        release(holder)
    readers = [Reader(project, "steady"), Reader(project, "steady", project.spark.newSession())]
    for reader in readers:
        reader.start()
    try:
        result = project.dbt("run", "-s", "steady", "--full-refresh")
    finally:
        for reader in readers:
            reader.stop()
    assert result.result[0].message.startswith("STREAM 1 batch, 8 in, 3 out, 0 late")
    for reader in readers:
        assert reader.failures == []
        assert len(reader.seen) > 3 and all(rows in (old, new) for rows in reader.seen), reader.seen
        assert reader.seen[0] == old and set(reader.counts) <= {len(old), len(new)}
    assert readers[0].seen[-1] == new
    assert project.rows("steady") == new
    home = schema_dir(project)
    location = (
        project.spark.sql(f"describe table extended {project.schema}.steady").where("col_name = 'Location'").first()[1]
    )
    assert location.endswith("/steady__v2")
    # the old version stays for readers that planned their query before the swap; the next run removes it
    assert (home / "steady" / "_spark_metadata").is_dir()
    # the new version's runs take the same lock, in the first slot's checkpoint
    holder = held_lock(project, "steady", filesystems.LOCAL)
    try:
        assert "another run of this model holds" in errors(project.dbt("run", "-s", "steady", ok=False))
    finally:
        release(holder)
    deliver(project, [("08:31", 7, "H")])
    node = run(project, "steady")
    assert node.adapter_response["rows_in"] == 1
    assert not (home / "steady").exists() and not (home / "steady__late").exists()
    assert not any(p.is_file() for p in checkpoint(project, "steady").rglob("*"))
    assert project.rows("steady") == batch_result(project)
    # and back: the next full refresh goes to the first slot again
    project.dbt("run", "-s", "steady", "--full-refresh")
    assert project.rows("steady") == batch_result(project)
    assert (home / "steady" / "_spark_metadata").is_dir() and (home / "steady__v2").is_dir()
    run(project, "steady")
    assert not (home / "steady__v2").exists() and not (home / "steady__v2__checkpoint").exists()


def test_an_added_column_fails_by_default_and_rebuilds_with_on_change_rebuild(project):
    before = streamed_twice(project, "evolving")
    files = snapshot(checkpoint(project, "evolving"))
    window_view(project, "evolving", "on_update", WITH_TOP)
    message = errors(project.dbt("run", "-s", "evolving", ok=False))
    assert "its SQL or window config changed since the checkpoint" in message
    assert "run `dbt run --full-refresh -s evolving`" in message and "set on_change='rebuild'" in message
    assert_clean(message)
    assert project.rows("evolving") == before and project.columns("evolving") == [
        "window_start",
        "window_end",
        "price",
        "bids",
    ]
    assert snapshot(checkpoint(project, "evolving")) == files
    window_view(project, "evolving", "on_update", REBUILD + WITH_TOP)
    node = run(project, "evolving")
    assert node.message.startswith("STREAM 1 batch, 4 in, 2 out, 0 late")
    assert project.columns("evolving") == ["window_start", "window_end", "price", "bids", "top"]
    assert project.rows("evolving") == batch_result(project, "sum(price), count(*), max(price)")
    # the new version streams on incrementally
    deliver(project, DELIVERIES[2])
    node = run(project, "evolving")
    assert node.adapter_response["rows_in"] == 4 and node.adapter_response["late_rows"] == 1
    assert project.rows("evolving") == [(*w, top) for w, top in zip(STREAMED, (5, 6, 1))]
    # a column removed: the table is created again over the new version, and streams on
    window_view(project, "evolving", "on_update", REBUILD + TUMBLE_SUM)
    node = run(project, "evolving")
    assert node.message.startswith("STREAM 1 batch, 8 in, 3 out, 0 late")
    assert project.columns("evolving") == ["window_start", "window_end", "price", "bids"]
    assert project.rows("evolving") == batch_result(project)
    assert run(project, "evolving").message.startswith("STREAM 0 batches")
    properties = dict(project.spark.sql(f"show tblproperties {project.schema}.evolving").collect())
    assert (properties["window_views.execution"], properties["window_views.version"]) == ("streaming", "1")


FAILS_ON_LATER_ROWS = TUMBLE_SUM.replace(
    "sum(price)", "sum(case when price = 9 then cast(raise_error('price 9 (injected)') as int) else price end)"
)


def test_a_failed_rebuild_leaves_the_old_version_running(project):
    old = streamed_twice(project, "fragile")
    files = snapshot(checkpoint(project, "fragile"))
    deliver(project, DELIVERIES[2])  # holds the row the new SQL fails on
    window_view(project, "fragile", "on_update", FAILS_ON_LATER_ROWS)
    reader = Reader(project, "fragile")
    reader.start()
    try:
        project.dbt("run", "-s", "fragile", "--full-refresh", ok=False)
    finally:
        reader.stop()
    assert reader.failures == [] and all(rows == old for rows in reader.seen), reader.failures
    assert project.rows("fragile") == old
    assert snapshot(checkpoint(project, "fragile")) == files
    assert not list(schema_dir(project).glob("fragile__v2*"))  # the failed version is gone
    # the old model carries on from its checkpoint
    window_view(project, "fragile", "on_update", TUMBLE_SUM)
    node = run(project, "fragile")
    assert node.adapter_response["rows_in"] == 4
    assert project.rows("fragile") == STREAMED
    # and a later rebuild succeeds
    project.dbt("run", "-s", "fragile", "--full-refresh")
    assert project.rows("fragile") == batch_result(project)


class Crash(Exception):
    pass


def test_a_rebuild_that_died_is_discarded_by_the_next_run(project, monkeypatch):
    from dbt.adapters.window_views.streaming import runner
    from dbt.adapters.window_views.streaming.commit import rebuild

    old = streamed_twice(project, "killed")
    files = snapshot(checkpoint(project, "killed"))
    stream = runner._stream

    def dies_after_the_first_batch(run, out_schema, catch_up):
        stream(run, out_schema, catch_up)
        raise Crash("killed (injected)")

    with monkeypatch.context() as patched:
        # a process that dies cleans nothing up: the half-built version stays as it was
        patched.setattr(runner, "_stream", dies_after_the_first_batch)
        patched.setattr(rebuild, "discard", lambda *args: None)
        project.dbt("run", "-s", "killed", "--full-refresh", ok=False)
    v2 = schema_dir(project) / "killed__v2"
    assert (v2 / "_spark_metadata").is_dir()
    assert '"step": "building"' in (schema_dir(project) / "killed__v2__checkpoint" / "rebuild.json").read_text()
    assert project.rows("killed") == old and snapshot(checkpoint(project, "killed")) == files
    deliver(project, DELIVERIES[2])
    node = run(project, "killed")
    assert node.adapter_response["rows_in"] == 4
    assert project.rows("killed") == STREAMED
    assert not list(schema_dir(project).glob("killed__v2*"))


def crash_at(monkeypatch, point: str) -> None:
    """End the swap at `point` as a crash would: the steps before it done, nothing undone."""
    from dbt.adapters.window_views.streaming.commit import rebuild

    if point in ("table", "late table"):
        calls, original = [], rebuild.point

        def point_fails(spark, table, location, schema):
            calls.append(table)
            if (point == "table") == (len(calls) == 1):
                raise Crash(f"crash before pointing the {point} (injected)")
            original(spark, table, location, schema)

        monkeypatch.setattr(rebuild, "point", point_fails)
    elif point == "properties":
        monkeypatch.setattr(rebuild, "record_live", lambda *a: (_ for _ in ()).throw(Crash("crash (injected)")))
    else:
        mark = rebuild.mark
        monkeypatch.setattr(
            rebuild,
            "mark",
            lambda fs, record, state: (
                (_ for _ in ()).throw(Crash("crash (injected)")) if state == "swapped" else mark(fs, record, state)
            ),
        )


@pytest.mark.parametrize("point", ["table", "late table", "properties", "swapped"])
def test_a_crash_inside_the_swap_is_finished_by_the_next_run(project, monkeypatch, point):
    old = streamed_twice(project, "swapping")
    new = batch_result(project, "sum(price), count(*), max(price)")
    window_view(project, "swapping", "on_update", REBUILD + WITH_TOP)
    with monkeypatch.context() as patched:
        crash_at(patched, point)
        project.dbt("run", "-s", "swapping", ok=False)
    # meanwhile readers see one version whole: the old one, or the new one (its added column may
    # not be in the catalog yet)
    seen = project.rows("swapping")
    assert seen == old or [r[:4] for r in seen] == [r[:4] for r in new], seen
    deliver(project, DELIVERIES[2])
    node = run(project, "swapping")
    assert node.adapter_response["rows_in"] == 4
    assert project.columns("swapping") == ["window_start", "window_end", "price", "bids", "top"]
    assert project.rows("swapping") == [(*w, top) for w, top in zip(STREAMED, (5, 6, 1))]
    properties = dict(project.spark.sql(f"show tblproperties {project.schema}.swapping").collect())
    assert properties["window_views.version"] == "2"
    assert properties["window_views.late_location"].endswith("/swapping__v2__late")
    late = (
        project.spark.sql(f"describe table extended {project.schema}.swapping__late")
        .where("col_name = 'Location'")
        .first()[1]
    )
    assert late.endswith("/swapping__v2__late")
    run(project, "swapping")
    assert not (schema_dir(project) / "swapping").exists()


def test_a_processing_time_trigger_catches_up_swaps_then_streams_on(project):
    make_source(project)
    ticking = TUMBLE_SUM.replace(
        "select", "{{ config(trigger={'processing_time': '1 second', 'max_duration': '3 seconds'}) }} select", 1
    )
    window_view(project, "ticking", "on_update", ticking)
    deliver(project, DELIVERIES[0])
    run(project, "ticking")
    deliver(project, DELIVERIES[1] + DELIVERIES[2])
    node = project.dbt("run", "-s", "ticking", "--full-refresh").result[0]
    assert node.adapter_response["rows_in"] == 8 and node.adapter_response["late_rows"] == 0
    assert project.rows("ticking") == batch_result(project)
    properties = dict(project.spark.sql(f"show tblproperties {project.schema}.ticking").collect())
    assert properties["window_views.version"] == "2" and properties["window_views.checkpoint"].endswith(
        "/ticking__v2__checkpoint"
    )


def test_a_batch_window_view_in_the_way_is_replaced_as_before(project, tmp_path):
    make_source(project)
    deliver(project, DELIVERIES[0] + DELIVERIES[1])
    project.model("switched", "{{ config(materialized='window_view', emit='on_update') }}\n" + TUMBLE_SUM)
    run(project, "switched")
    assert project.rows("switched") == batch_result(project)
    window_view(project, "switched", "on_update", TUMBLE_SUM)
    node = run(project, "switched")
    assert node.message.startswith("STREAM 1 batch, 4 in")
    assert project.rows("switched") == batch_result(project)
    properties = dict(project.spark.sql(f"show tblproperties {project.schema}.switched").collect())
    assert properties["window_views.execution"] == "streaming" and properties["window_views.version"] == "1"
    # and a table of another kind under the name, with --full-refresh too
    project.spark.sql(f"drop table {project.schema}.switched")
    project.spark.sql(f"create table {project.schema}.switched (x int) using parquet location '{tmp_path / 'other'}'")
    project.dbt("run", "-s", "switched", "--full-refresh")
    assert project.rows("switched") == batch_result(project)
