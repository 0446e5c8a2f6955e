"""A Delta table as a streaming window view's input: the rows its versions append stream as a
folder's files do (stream = batch - late, the late rows in the late table); a version that deletes
rows is named with the rebuild, which reads the table as it is now and streams on from there."""

from __future__ import annotations

import re

from tests.support.dbt_projects import errors
from tests.support.lakehouse_streaming import DELTA, input_scenario, insert, rerun_batch_twin


def test_a_delta_input_streams_its_appends_and_names_a_delete(project):
    before = input_scenario(project, DELTA)
    schema = project.schema
    # a version that deletes rows: named, with the rebuild; the table is as it was
    project.spark.sql(f"delete from {schema}.bid where price = 3")
    text = errors(project.dbt("run", "-s", "rev", ok=False))
    assert re.search(
        r"the Delta table at \S+/bid deleted rows in its version \d+; a stream reads the rows an input", text
    )
    assert "`dbt run --full-refresh -s rev`" in text and "DELTA_SOURCE_IGNORE_DELETE" not in text, text
    assert project.rows("rev") == before
    # which reads the table as it is now, and streams on from there
    project.dbt("run", "-s", "rev", "--full-refresh")
    insert(project, "bid", ("08:52", 5))
    project.dbt("run", "-s", "rev")
    rerun_batch_twin(project, DELTA)
    assert project.rows("rev") == project.rows("rev_batch")
    # 08:05 is in its window now, 08:11's window is gone with its one row, 08:52's is open
    assert [r[2] for r in project.rows("rev")] == [2, 1], project.rows("rev")
