"""Incremental batch window views on Iceberg (file_format='iceberg' with batch_size): the table is
made whole in one snapshot, partitioned by its batch column; a later run replaces its contiguous
batches in one snapshot by predicate (REPLACE WHERE), the other batches' files untouched; a run
after late input and a backfill each equal the full build; a run with nothing new writes nothing."""

from __future__ import annotations

import random

from tests.functional.test_microbatch_windows import events
from tests.lakehouse.test_delta_batches import INC, WINDOWS, assert_equal_full, batch_files


def snapshots(project) -> list:
    """The inc table's snapshots, oldest first: (operation, the batches it replaced)."""
    rows = project.spark.sql(
        f"select operation, summary['changed-partition-count'] as changed from {project.schema}.inc.snapshots "
        "order by committed_at"
    ).collect()
    return [(r.operation, r.changed) for r in rows]


def test_iceberg_batches_replace_by_predicate_and_equal_the_full_build(project):
    lake = project.root / "lake"
    project.seed("events", events(random.Random(11), 120))
    project.write(
        "seeds/events.yml",
        "seeds:\n  - name: events\n    config:\n      event_time: ts\n"
        "      column_types: {id: int, k: string, ts: timestamp, v: int}\n",
    )
    project.model("inc", INC.format(format="iceberg", lake=lake) + WINDOWS)
    project.model("full", "{{ config(materialized='window_view') }}\n" + WINDOWS)
    project.dbt("build")
    assert_equal_full(project)
    spec = project.spark.sql(f"select * from {project.schema}.inc.partitions").schema["partition"]
    assert [f.name for f in spec.dataType.fields] == ["window_time_day"]
    made = snapshots(project)
    assert len(made) == 1  # the table and all its batches, one snapshot

    # a new day and late input two days back: the late batches replaced together, one snapshot
    events_table = f"{project.schema}.events"
    project.spark.sql(
        f"insert into {events_table} values (9001, 'a', timestamp'2024-01-03 15:00:00', 7), "
        "(9002, 'b', timestamp'2024-01-05 02:00:00', 3)"
    )
    before = batch_files(project)
    project.dbt("run", "-s", "inc", "--vars", "{lookback: 2}")
    assert_equal_full_after(project)
    after = batch_files(project)
    assert [d for d in before if before[d] != after.get(d)] == ["2024-01-03", "2024-01-04"]
    assert snapshots(project)[1:] == [("overwrite", "3")]

    # a middle day's input beyond the lookback: a backfill of that day alone, one snapshot
    project.spark.sql(f"insert into {events_table} values (9004, 'b', timestamp'2024-01-02 12:00:00', 11)")
    project.dbt("run", "-s", "inc", "--event-time-start", "2024-01-02", "--event-time-end", "2024-01-03")
    assert_equal_full_after(project)
    backfilled = batch_files(project)
    assert [d for d in after if after[d] != backfilled[d]] == ["2024-01-02"]
    assert snapshots(project)[2:] == [("overwrite", "1")]

    # nothing new since: the run writes nothing (what it read is in the table's properties)
    (node,) = project.dbt("run", "-s", "inc").result
    assert node.adapter_response["_message"].startswith("0 batch(es) written: no new input since the last run")
    assert len(snapshots(project)) == 3


def assert_equal_full_after(project) -> None:
    project.dbt("run", "-s", "full")
    assert_equal_full(project)
