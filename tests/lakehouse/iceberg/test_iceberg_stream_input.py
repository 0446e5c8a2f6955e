"""An Iceberg table as a streaming window view's input: the rows its snapshots append stream as a
folder's files do (stream = batch - late, the late rows in the late table); a snapshot that
deletes or overwrites rows is named with the fix: a batch build, which reads the table as it is
now (a new stream of an Iceberg table replays its history from its oldest snapshot, the delete
too)."""

from __future__ import annotations

import re

from tests.support.dbt_projects import errors
from tests.support.lakehouse_streaming import ICEBERG, WINDOWS, input_scenario


def test_an_iceberg_input_streams_its_appends_and_names_a_delete(project):
    before = input_scenario(project, ICEBERG)
    schema = project.schema
    # a snapshot that deletes rows: named, with the rebuild; the table is as it was
    project.spark.sql(f"delete from {schema}.bid where price = 3")
    text = errors(project.dbt("run", "-s", "rev", ok=False))
    assert re.search(r"an Iceberg input deleted rows in its snapshot \d+; a stream reads the rows", text), text
    assert "fix: build the model in batch, which reads the table as it is now: execution='batch'" in text, text
    assert "Cannot process" not in text and "skip" not in text, text
    assert project.rows("rev") == before
    # a --full-refresh streams the table's history again from its oldest snapshot: the same snapshot
    text = errors(project.dbt("run", "-s", "rev", "--full-refresh", ok=False))
    assert re.search(r"an Iceberg input deleted rows in its snapshot \d+", text), text
    assert project.rows("rev") == before
    # the fix: the same model in batch reads the table as it is now
    project.model("rev", WINDOWS.format(emit="on_window_close", config="", source="bid"))
    project.dbt("run", "-s", "rev")
    # 08:05 and 08:07 in the first window, 08:11 deleted, 08:25's window not yet closed (W = 08:24)
    assert [r[2:] for r in project.rows("rev")] == [(2, 11)], project.rows("rev")
