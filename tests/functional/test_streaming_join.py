"""Streaming window views over several append-only inputs: FLIP-145's window join (both sides
windowed by the same TVF, joined on window_start, window_end and keys) and a UNION ALL of streams.
The example is the Flink documentation's window join (LeftTable, RightTable, TUMBLE 5 minutes,
FULL JOIN on num); streaming is checked against batch and against its expected rows."""

from datetime import datetime

from conftest import errors, sources_yml


def t(hhmm: str) -> datetime:
    h, m = hhmm.split(":")
    return datetime(2020, 4, 15, int(h), int(m))


# Flink's window join example: (row_time, num, id)
LEFT = [("12:02", 1, "L1"), ("12:06", 2, "L2"), ("12:03", 3, "L3")]
RIGHT = [("12:01", 2, "R2"), ("12:04", 3, "R3"), ("12:05", 4, "R4")]
# its FULL JOIN result: (L_Num, L_Id, R_Num, R_Id, window_start, window_end)
EXPECTED = [
    (1, "L1", None, None, t("12:00"), t("12:05")),
    (None, None, 2, "R2", t("12:00"), t("12:05")),
    (3, "L3", 3, "R3", t("12:00"), t("12:05")),
    (2, "L2", None, None, t("12:05"), t("12:10")),
    (None, None, 4, "R4", t("12:05"), t("12:10")),
]

JOIN = """
select L.num as l_num, L.id as l_id, R.num as r_num, R.id as r_id,
  coalesce(L.window_start, R.window_start) as window_start, coalesce(L.window_end, R.window_end) as window_end
from {{ window_views.tumble(source('raw', 'lefttable'), 'row_time', '5 minutes') }} L
full join {{ window_views.tumble(source('raw', 'righttable'), 'row_time', '5 minutes') }} R
  on L.num = R.num and L.window_start = R.window_start and L.window_end = R.window_end
"""


def make_sources(project, *tables: str) -> None:
    project.spark.sql(f"create database if not exists {project.schema}")
    for table in tables:
        project.spark.sql(f"create table {project.schema}.{table} (row_time timestamp, num int, id string) using parquet")
    project.write("models/sources.yml", sources_yml(*tables))


def deliver(project, table: str, rows) -> None:
    """Append rows to one input as a new file, as an upstream loader would."""
    values = ", ".join(f"(timestamp'2020-04-15 {hhmm}:00', {num}, '{id_}')" for hhmm, num, id_ in rows)
    project.spark.sql(f"insert into {project.schema}.{table} values {values}")


def model(project, name: str, sql: str, execution: str = "streaming", emit: str = "on_window_close", extra: str = "") -> None:
    project.model(
        name,
        f"""
        {{{{ config(materialized='window_view', execution='{execution}', emit='{emit}', {extra}
                    watermark={{'column': 'row_time', 'delay': '1 second'}}) }}}}
        {sql}
        """,
    )


def run(project, name: str):
    (node,) = project.dbt("run", "-s", name).result
    return node


def test_flip145_window_join_in_batch(project):
    make_sources(project, "lefttable", "righttable")
    deliver(project, "lefttable", LEFT)
    deliver(project, "righttable", RIGHT)
    model(project, "joined", JOIN, execution="batch", emit="on_update")
    run(project, "joined")
    assert sorted(project.rows("joined"), key=repr) == sorted(EXPECTED, key=repr)


def test_flip145_window_join_streams(project):
    """Each side delivered on its own: a window is emitted once both sides' watermarks passed its
    end, with the rows Flink's example expects; a late row of one side goes to the late table
    named by its side; batch over the same inputs agrees."""
    make_sources(project, "lefttable", "righttable")
    model(project, "joined", JOIN)
    model(project, "joined_batch", JOIN, execution="batch")
    deliver(project, "lefttable", LEFT)
    node = run(project, "joined")
    # the right side has no rows yet: it holds the watermark back
    assert node.message == "STREAM 1 batch, 3 in, 0 out, 0 late, watermark none"
    deliver(project, "righttable", RIGHT)
    node = run(project, "joined")
    # min(12:06, 12:05) - 1 second: [12:00, 12:05) is not closed yet
    assert node.message == "STREAM 1 batch, 3 in, 0 out, 0 late, watermark 2020-04-15 12:04:59"
    deliver(project, "lefttable", [("12:11", 9, "L9")])
    deliver(project, "righttable", [("12:12", 9, "R9")])
    node = run(project, "joined")
    assert node.message.endswith("5 out, 0 late, watermark 2020-04-15 12:10:59")
    assert sorted(project.rows("joined"), key=repr) == sorted(EXPECTED, key=repr)
    run(project, "joined_batch")
    assert sorted(project.rows("joined_batch"), key=repr) == sorted(EXPECTED, key=repr)
    # 12:04 on the left arrives after [12:00, 12:05) closed: late, its side named
    deliver(project, "lefttable", [("12:04", 1, "L4")])
    node = run(project, "joined")
    assert node.message.endswith("0 out, 1 late, watermark 2020-04-15 12:10:59")
    late = project.spark.sql(f"select _side, _row, _batch_id from {project.schema}.joined__late").collect()
    assert [(r._side, r._row) for r in late] == [
        (f"{project.schema}.lefttable", '{"row_time":"2020-04-15T12:04:00.000Z","num":1,"id":"L4"}')
    ]
    assert sorted(project.rows("joined"), key=repr) == sorted(EXPECTED, key=repr)


UNION = """
with both as (
  select * from {{ source('raw', 'lefttable') }}
  union all
  select * from {{ source('raw', 'righttable') }}
)
select window_start, window_end, count(*) as n, sum(num) as total
from {{ window_views.tumble('both', 'row_time', '5 minutes') }}
group by window_start, window_end
"""


def test_a_union_of_two_streams(project):
    """Rows of either input are rows of one stream: counted in the same windows, emitted once the
    slower input's watermark passed their end."""
    make_sources(project, "lefttable", "righttable")
    model(project, "unioned", UNION)
    deliver(project, "lefttable", LEFT + [("12:11", 9, "L9")])
    node = run(project, "unioned")
    assert node.message == "STREAM 1 batch, 4 in, 0 out, 0 late, watermark none"
    deliver(project, "righttable", RIGHT)
    node = run(project, "unioned")
    # the right input's 12:05 holds the watermark at 12:04:59
    assert node.message == "STREAM 1 batch, 3 in, 0 out, 0 late, watermark 2020-04-15 12:04:59"
    deliver(project, "righttable", [("12:11", 8, "R8"), ("12:02", 7, "R7")])
    node = run(project, "unioned")
    assert node.message == "STREAM 1 batch, 2 in, 2 out, 0 late, watermark 2020-04-15 12:10:59"
    assert project.rows("unioned") == [(t("12:00"), t("12:05"), 5, 16), (t("12:05"), t("12:10"), 2, 6)]
    deliver(project, "righttable", [("12:01", 1, "R1")])
    node = run(project, "unioned")
    assert node.message == "STREAM 1 batch, 1 in, 0 out, 1 late, watermark 2020-04-15 12:10:59"
    late = project.spark.sql(f"select _side from {project.schema}.unioned__late").collect()
    assert [r._side for r in late] == [f"{project.schema}.righttable"]
