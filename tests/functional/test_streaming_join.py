"""Streaming window views over several append-only inputs: FLIP-145's window join (both sides
windowed by the same TVF, joined on window_start, window_end and keys) and a UNION ALL of streams.
The example is the Flink documentation's window join (LeftTable, RightTable, TUMBLE 5 minutes,
FULL JOIN on num); streaming is checked against batch and against its expected rows."""

import random
from datetime import datetime

import pytest

from tests.support.dbt_projects import errors, sources_yml


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
        project.spark.sql(
            f"create table {project.schema}.{table} (row_time timestamp, num int, id string) using parquet"
        )
    project.write("models/sources.yml", sources_yml(*tables))


def deliver(project, table: str, rows) -> None:
    """Append rows to one input as a new file, as an upstream loader would."""
    values = ", ".join(f"(timestamp'2020-04-15 {hhmm}:00', {num}, '{id_}')" for hhmm, num, id_ in rows)
    project.spark.sql(f"insert into {project.schema}.{table} values {values}")


def model(
    project, name: str, sql: str, execution: str = "streaming", emit: str = "on_window_close", extra: str = ""
) -> None:
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


def test_a_late_row_of_a_join_that_reads_some_columns_is_kept_whole(project):
    """The stream reads the columns the join reads (not `id`): a late row of one side is read
    again whole from its file, so its JSON holds every column of that side and nothing else."""
    make_sources(project, "lefttable", "righttable")
    counts = JOIN.replace("L.id as l_id, ", "").replace("R.id as r_id, ", "")
    model(project, "joined_counts", counts)
    deliver(project, "lefttable", LEFT)
    deliver(project, "righttable", RIGHT + [("12:12", 9, "R9")])
    deliver(project, "lefttable", [("12:11", 9, "L9")])
    run(project, "joined_counts")
    deliver(project, "lefttable", [("12:04", 1, "L4")])
    node = run(project, "joined_counts")
    assert node.message.endswith("0 out, 1 late, watermark 2020-04-15 12:10:59"), node.message
    late = project.spark.sql(f"select _side, _row from {project.schema}.joined_counts__late").collect()
    assert [(r._side, r._row) for r in late] == [
        (f"{project.schema}.lefttable", '{"row_time":"2020-04-15T12:04:00.000Z","num":1,"id":"L4"}')
    ]


# Nexmark q8's form: each side's window bounds renamed in its subquery, joined on the new names,
# only the window's start selected (as `starttime`)
RENAMED_SIDE = """(
  select num, id, window_start as starttime, window_end as endtime
  from {{{{ window_views.tumble(source('raw', '{table}'), 'row_time', '5 minutes') }}}}
)"""
RENAMED_JOIN = f"""
select L.num, L.id as l_id, R.id as r_id, L.starttime
from {RENAMED_SIDE.format(table="lefttable")} L
join {RENAMED_SIDE.format(table="righttable")} R
  on L.num = R.num and L.starttime = R.starttime and L.endtime = R.endtime
"""


def test_a_window_join_on_renamed_bounds_streams_under_the_users_names(project):
    """The bounds are followed through the subqueries' aliases: a window join, emitted when its
    window closes although the model selects no window_end; the table has the model's columns."""
    make_sources(project, "lefttable", "righttable")
    model(project, "renamed", RENAMED_JOIN)
    model(project, "renamed_batch", RENAMED_JOIN, execution="batch", emit="on_update")
    deliver(project, "lefttable", LEFT)
    deliver(project, "righttable", RIGHT)
    assert run(project, "renamed").message == "STREAM 1 batch, 6 in, 0 out, 0 late, watermark 2020-04-15 12:04:59"
    deliver(project, "lefttable", [("12:07", 4, "L4"), ("12:11", 9, "L9")])
    deliver(project, "righttable", [("12:12", 9, "R9")])
    assert run(project, "renamed").message.endswith("2 out, 0 late, watermark 2020-04-15 12:10:59")
    expected = [(3, "L3", "R3", t("12:00")), (4, "L4", "R4", t("12:05"))]
    assert project.spark.table(f"{project.schema}.renamed").columns == ["num", "l_id", "r_id", "starttime"]
    assert sorted(project.rows("renamed")) == expected
    run(project, "renamed_batch")
    assert sorted(project.rows("renamed_batch")) == expected + [(9, "L9", "R9", t("12:10"))]
    # 12:03 on the left arrives after [12:00, 12:05) closed: late, the window's row unchanged
    deliver(project, "lefttable", [("12:03", 2, "L5")])
    assert run(project, "renamed").message.endswith("0 out, 1 late, watermark 2020-04-15 12:10:59")
    assert sorted(project.rows("renamed")) == expected


# FLIP-145's own window join: the orders stream joined with itself, each side a CUMULATE window
# aggregate (item sales and buyers; the seller's buyers), LEFT JOINed per window
FLIP145_SELF_JOIN = """
select a.item_id, a.seller_id, a.window_start, a.window_end, a.sales, a.item_buyer_cnt, b.slr_buyer_cnt
from (
  select item_id, seller_id, window_start, window_end, sum(price) as sales, count(distinct user_id) as item_buyer_cnt
  from {{ window_views.cumulate(source('raw', 'orders'), 'pay_time', '10 minutes', '1 day') }}
  group by item_id, seller_id, window_start, window_end
) a
left join (
  select seller_id, window_start, window_end, count(distinct user_id) as slr_buyer_cnt
  from {{ window_views.cumulate(source('raw', 'orders'), 'pay_time', '10 minutes', '1 day') }}
  group by seller_id, window_start, window_end
) b
on a.seller_id = b.seller_id and a.window_start = b.window_start and a.window_end = b.window_end
"""


def test_flip145_self_window_join_streams(project):
    """FLIP-145's example reads one stream twice: both reads see the micro-batch's rows, a
    window is emitted once closed, a late row is kept aside; batch over the same input agrees."""
    spark = project.spark
    spark.sql(f"create database if not exists {project.schema}")
    spark.sql(
        f"create table {project.schema}.orders (pay_time timestamp, item_id string, seller_id string, "
        "user_id string, price int) using parquet"
    )
    project.write("models/sources.yml", sources_yml("orders"))

    def deliver_orders(rows):
        values = ", ".join(f"(timestamp'2020-04-15 {hhmm}:00', '{i}', '{s}', '{u}', {p})" for hhmm, i, s, u, p in rows)
        spark.sql(f"insert into {project.schema}.orders values {values}")

    for name, execution in (("orders_joined", "streaming"), ("orders_joined_batch", "batch")):
        project.model(
            name,
            f"""
            {{{{ config(materialized='window_view', execution='{execution}', emit='on_window_close',
                        watermark={{'column': 'pay_time', 'delay': '1 minute'}}) }}}}
            {FLIP145_SELF_JOIN}""",
        )

    def w(end: str, *rows):
        return [
            (item, seller, t("00:00"), t(end), sales, buyers, seller_buyers)
            for item, seller, sales, buyers, seller_buyers in rows
        ]

    first = w("00:10", ("A", "s1", 10, 1, 2), ("B", "s1", 20, 1, 2))
    deliver_orders([("00:01", "A", "s1", "u1", 10), ("00:04", "B", "s1", "u2", 20), ("00:12", "A", "s1", "u2", 5)])
    assert run(project, "orders_joined").message == "STREAM 1 batch, 3 in, 2 out, 0 late, watermark 2020-04-15 00:11:00"
    assert sorted(project.rows("orders_joined")) == first
    deliver_orders([("00:15", "C", "s2", "u3", 7), ("00:23", "B", "s1", "u1", 3)])
    run(project, "orders_joined")
    second = first + w("00:20", ("A", "s1", 15, 2, 2), ("B", "s1", 20, 1, 2), ("C", "s2", 7, 1, 1))
    assert sorted(project.rows("orders_joined")) == sorted(second)
    run(project, "orders_joined_batch")
    assert sorted(project.rows("orders_joined_batch")) == sorted(second)
    # 00:05 comes after [00:00, 00:10) closed: late, in no window
    deliver_orders([("00:05", "D", "s3", "u9", 1), ("00:31", "A", "s1", "u5", 1)])
    node = run(project, "orders_joined")
    assert node.message == "STREAM 1 batch, 2 in, 3 out, 1 late, watermark 2020-04-15 00:30:00"
    third = second + w("00:30", ("A", "s1", 15, 2, 2), ("B", "s1", 23, 2, 2), ("C", "s2", 7, 1, 1))
    assert sorted(project.rows("orders_joined")) == sorted(third)
    late = spark.sql(f"select item_id, user_id from {project.schema}.orders_joined__late").collect()
    assert [tuple(r) for r in late] == [("D", "u9")]


# Nexmark q7's form: the rows of one input joined to their own window's maximum, each row held
# within its window by a BETWEEN that takes window_end (renamed `row_time`) in
OWN_WINDOW = """
select B.num, B.id, B.row_time
from {{ source('raw', 'lefttable') }} B
join (
  select max(num) as maxnum, window_end as row_time
  from {{ window_views.tumble(source('raw', 'lefttable'), 'row_time', '5 minutes') }}
  group by window_start, window_end
) B1 on B.num = B1.maxnum
where B.row_time between B1.row_time - interval '5' minute and B1.row_time
"""


def test_rows_joined_to_their_own_windows_maximum_stream(project):
    """One stream serves both reads; a window's rows are written when it closes, and a row at
    exactly a window's end joins that window too, so it is late once that window closed."""
    make_sources(project, "lefttable")
    model(project, "highest", OWN_WINDOW)
    deliver(project, "lefttable", [("12:01", 3, "a"), ("12:03", 5, "b"), ("12:05", 5, "c"), ("12:07", 2, "d")])
    node = run(project, "highest")
    assert node.message == "STREAM 1 batch, 4 in, 2 out, 0 late, watermark 2020-04-15 12:06:59"
    # [12:00, 12:05) has max 5: b, and c at exactly its end
    first = [(5, "b", t("12:03")), (5, "c", t("12:05"))]
    assert sorted(project.rows("highest")) == first
    # e at 12:05 would join [12:00, 12:05), written already: late; [12:05, 12:10) has max 5 again (c)
    deliver(project, "lefttable", [("12:05", 9, "e"), ("12:08", 4, "f"), ("12:11", 1, "g")])
    node = run(project, "highest")
    assert node.message == "STREAM 1 batch, 3 in, 1 out, 1 late, watermark 2020-04-15 12:10:59"
    assert sorted(project.rows("highest")) == sorted(first + [(5, "c", t("12:05"))])
    assert project.spark.table(f"{project.schema}.highest").columns == ["num", "id", "row_time"]
    late = project.spark.sql(f"select id from {project.schema}.highest__late").collect()
    assert [r.id for r in late] == ["e"]


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
    # a file of another type in one input's folder: the input named is the one that holds it
    landed = project.land("righttable", "nums", "select timestamp'2020-04-15 12:12:00' as row_time, 1.5d as num")
    message = errors(project.dbt("run", "-s", "unioned", ok=False))
    assert (
        f"window_view model 'unioned' (micro-batch 4) at {landed}: a file of its input {project.schema}.righttable "
        f"has the column `num` as DOUBLE, where {project.schema}.righttable declares INT"
    ) in message, message


HOP_JOIN = JOIN.replace("'5 minutes') }}", "'5 minutes', '10 minutes') }}").replace(
    "window_views.tumble", "window_views.hop"
)
ROW = "row_time timestamp, num int, id string"


def random_deliveries(rng, runs: int = 4):
    """Per run, rows for each side (or none): each side's clock moves on at its own pace, rows
    scatter minutes around it, so one side holds the watermark back and the other's stragglers
    arrive after their windows closed."""
    clock = {"lefttable": 0, "righttable": 0}
    serial = 0
    for _ in range(runs):
        batch = {}
        for side in clock:
            if rng.random() < 0.25:
                continue
            clock[side] += rng.randrange(0, 9 * 60)
            rows = []
            for _ in range(rng.randrange(1, 7)):
                serial += 1
                at = max(0, clock[side] + rng.randrange(-10 * 60, 4 * 60))
                rows.append(
                    (
                        f"{12 + at // 3600}:{at // 60 % 60:02d}:{at % 60:02d}",
                        rng.randrange(4),
                        f"{side[0].upper()}{serial}",
                    )
                )
            batch[side] = rows
        yield batch
    yield {side: [(f"{13 + clock[side] // 3600}:00:00", 0, f"{side[0].upper()}end")] for side in clock}


def deliver_seconds(project, table: str, rows) -> None:
    values = ", ".join(f"(timestamp'2020-04-15 {hms}', {num}, '{id_}')" for hms, num, id_ in rows)
    project.spark.sql(f"insert into {project.schema}.{table} values {values}")


@pytest.mark.parametrize("seed", [5, 11])  # late rows on both sides; on the right side only
def test_random_deliveries_stream_equals_batch_minus_late(project, seed):
    """A HOP window join (on_window_close) and a TUMBLE union (on_update, late_data='drop')
    streamed over random deliveries to each input on its own: after every run, the late rows are
    those a Python replay of the rule predicts (the join's late table names each one's side, the
    union counts the ones it drops), and each streaming table equals the batch window view over
    the same inputs without them."""
    rng = random.Random(seed)
    make_sources(project, "lefttable", "righttable", "left_on_time", "right_on_time")
    on_time = {"lefttable": "left_on_time", "righttable": "right_on_time"}
    model(project, "join_stream", HOP_JOIN)
    model(project, "union_stream", UNION, emit="on_update", extra="late_data='drop',")
    batch_sql = {
        "join_batch": HOP_JOIN,
        "union_batch": UNION,
    }
    for name, sql in batch_sql.items():
        for table, kept in on_time.items():
            sql = sql.replace(f"'{table}'", f"'{kept}'")
        model(project, name, sql, execution="batch", emit="on_window_close" if name == "join_batch" else "on_update")
    dropped = 0
    predicted, latest = set(), {}  # a Python replay of the rule: late when its first window ended by W
    for delivery in random_deliveries(rng):
        w = min(latest.values()) - 1 if len(latest) == 2 else None  # seconds after 12:00, delay 1 second
        for table, rows in delivery.items():
            deliver_seconds(project, table, rows)
            for hms, _, id_ in rows:
                h, m, sec = map(int, hms.split(":"))
                at = (h - 12) * 3600 + m * 60 + sec
                if w is not None and at // 300 * 300 + 300 <= w:
                    predicted.add(id_)
                else:
                    latest[table] = max(latest.get(table, at), at)
        result = project.dbt("run", "-s", "join_stream", "union_stream")
        dropped += {r.node.name: r.adapter_response["late_rows"] for r in result.result}["union_stream"]
        excluded = ", ".join(f"'{i}'" for i in sorted(predicted)) or "''"
        for table, kept in on_time.items():  # the inputs without the rows predicted late
            project.spark.sql(
                f"insert overwrite {project.schema}.{kept} select * from {project.schema}.{table} where id not in ({excluded})"
            )
        project.dbt("run", "-s", "join_batch", "union_batch")
        assert sorted(project.rows("join_stream"), key=repr) == sorted(project.rows("join_batch"), key=repr)
        assert sorted(project.rows("union_stream"), key=repr) == sorted(project.rows("union_batch"), key=repr)
        late = project.spark.sql(
            f"select from_json(_row, '{ROW}').id as id, _side from {project.schema}.join_stream__late"
        ).collect()
        assert sorted(r.id for r in late) == sorted(predicted)
        assert all(r._side == f"{project.schema}.{'lefttable' if r.id[0] == 'L' else 'righttable'}" for r in late)
        assert dropped == len(predicted)  # late_data='drop': not kept, still counted
    assert predicted and project.rows("join_stream")  # the seed reaches the late and the emitting paths


REFUSED = {
    "mismatched": (
        JOIN.replace("'righttable'), 'row_time', '5 minutes'", "'righttable'), 'row_time', '10 minutes'"),
        "on_window_close",
        "a window join needs the same window on every side, but `tumble(time_col=row_time, size=5 minutes)` and "
        "`tumble(time_col=row_time, size=10 minutes)` differ; fix: window every side with the same TVF, size, slide and offset",
    ),
    "not_on_windows": (
        JOIN.replace(" and L.window_end = R.window_end", ""),
        "on_window_close",
        "does not join its sides on window_start and window_end of their window `tumble(time_col=row_time, size=5 "
        "minutes)`, so it is not a window join and a stream could not "
        "say when its result is final; fix: add `L.window_start = R.window_start and L.window_end = R.window_end` to its ON",
    ),
    "joined_on_update": (
        JOIN,
        "on_update",
        "a streaming window join emits a window once it is closed on every side; emit='on_update' would revise joined "
        "rows as either side's rows arrive; fix: set emit='on_window_close'",
    ),
    "rows_not_within_window": (
        OWN_WINDOW.replace("where B.row_time between B1.row_time - interval '5' minute and B1.row_time", ""),
        "on_window_close",
        # after `JOIN (...) AS B1 ON B.num = B1.maxnum` joins the rows of <the test's schema>.lefttable
        "to their window `tumble(time_col=row_time, size=5 minutes)`, but no condition holds each row within its window, so a "
        "stream could not say when a joined row is final; fix: add `B.row_time BETWEEN B1.row_time - INTERVAL "
        "'5 minutes' AND B1.row_time` (or `B.row_time >= window_start AND B.row_time < B1.row_time`) to its WHERE, "
        "or use execution='batch'",
    ),
}


def test_refused_window_joins_fail_dbt_compile(project):
    make_sources(project, "lefttable", "righttable")
    for name, (sql, emit, _) in REFUSED.items():
        model(project, name, sql, emit=emit)
    for name, (_, _, message) in REFUSED.items():
        result = project.dbt("compile", "-s", name, ok=False)
        assert f"window_view model '{name}': " in errors(result) and message in errors(result), errors(result)


def test_an_input_without_the_watermark_column_is_refused_before_the_stream_starts(project):
    make_sources(project, "lefttable")
    project.spark.sql(f"create table {project.schema}.other (t timestamp, num int, id string) using parquet")
    project.write("models/sources.yml", sources_yml("lefttable", "other"))
    model(
        project,
        "unioned",
        UNION.replace(
            "select * from {{ source('raw', 'righttable') }}",
            "select t as row_time, num, id from {{ source('raw', 'other') }}",
        ),
    )
    result = project.dbt("run", "-s", "unioned", ok=False)
    assert (
        "an input of a streaming window view over several inputs has no watermark column `row_time` (it has t, num, id); "
        "fix: give every input the event-time column the watermark names (in an upstream model)"
    ) in errors(result), errors(result)
    assert not project.spark.catalog.tableExists(f"{project.schema}.unioned")
