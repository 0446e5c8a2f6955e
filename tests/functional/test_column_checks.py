"""A misspelled column in a window macro's argument or in the watermark fails before Spark runs
the SQL, naming the model, the argument, the column and the closest columns of the relation —
never the internal names of the rendered SQL or a stack trace. So do the columns' contents the
windows cannot use: a time NULL on every row (some NULL: counted in the run's status), an input
that already has window columns, an over window ordered by text (refused, or warned of)."""

from datetime import datetime

from test_streaming import TUMBLE_SUM, deliver, make_source

from tests.support.dbt_projects import errors, sources_yml

CASES = {
    "batch_time_col": (
        "materialized='window_view'",
        "select window_start, count(*) as n from {{ window_views.tumble(source('raw', 'bid'), 'bidtme', '10 minutes') }} group by 1",
        "window_views.tumble argument 'time_col' names the column `bidtme`, which {schema}.bid does not have; "
        "fix: did you mean 'bidtime'? {schema}.bid has: bidtime, price, item",
    ),
    "batch_partition": (
        "materialized='window_view'",
        "select window_start, count(*) as n from {{ window_views.session(source('raw', 'bid'), 'bidtime', '5 minutes', "
        "partition_by='itme') }} group by 1",
        "window_views.session argument 'partition_by' names the column `itme`, which {schema}.bid does not have; "
        "fix: did you mean 'item'?",
    ),
    "batch_watermark": (
        "materialized='window_view', emit='on_window_close', watermark={'column': 'bid_time', 'delay': '1 minute'}",
        TUMBLE_SUM,
        "config 'watermark' names the column `bid_time`, which {schema}.bid does not have; fix: did you mean 'bidtime'?",
    ),
    "stream_watermark": (
        "materialized='window_view', execution='streaming', emit='on_window_close', "
        "watermark={'column': 'bidtme', 'delay': '1 minute'}",
        "select bidtme, lag(price) over (order by bidtme) as p from {{ source('raw', 'bid') }}",
        "config 'watermark' names the column `bidtme`, which {schema}.bid does not have; fix: did you mean 'bidtime'?",
    ),
}


def test_misspelled_columns_are_named_with_the_closest_ones(project):
    make_source(project)
    deliver(project, [("08:07", 2, "A")])
    for name, (config, sql, _) in CASES.items():
        project.model(name, f"{{{{ config({config}) }}}}\n{sql}")
    for name, (_, _, message) in CASES.items():
        message = message.format(schema=project.schema)
        result = project.dbt("run", "-s", name, ok=False)
        text = errors(result)
        assert f"window_view model '{name}': {message}" in text, text
        for internal in ("_wv_", "Traceback", "UNRESOLVED_COLUMN", "at org.apache"):
            assert internal not in text, text
        assert not project.spark.catalog.tableExists(f"{project.schema}.{name}")


TEXT_ROWS = [("13/05/2024 10:01:00", 2), ("13/05/2024 10:07:00", 3), ("14/05/2024 09:00:00", 4)]
PARSED = "with parsed as (select to_timestamp(ts) as ts, price from {{ source('raw', 'texts') }})\n"
TIME_CASES = {
    # the model parses the time itself: the parse named, the format read off a value that did not parse
    "parsed_tvf": (
        "materialized='window_view'",
        PARSED + "select window_start, sum(price) as p "
        "from {{ window_views.tumble('parsed', 'ts', '10 minutes') }} group by 1",
        "every one of the 3 rows it reads from parsed has a NULL `ts`, so no row is in any window: "
        "`{parse}` in the model reads `ts` without a format",
        "fix: to_timestamp(ts, 'dd/MM/yyyy HH:mm:ss') as ts, with the format its strings have",
    ),
    "parsed_over": (
        "materialized='window_view'",
        PARSED.replace("as ts", "as at") + "select at, sum(price) over (order by at range between interval "
        "10 minutes preceding and current row) as p from parsed",
        "every one of the 3 rows it reads from parsed has a NULL `at`, so its over windows order no row",
        "fix: to_timestamp(ts, 'dd/MM/yyyy HH:mm:ss') as at",
    ),
    # an upstream model parsed it: its table's column is a TIMESTAMP, NULL on every row
    "upstream_tvf": (
        "materialized='window_view'",
        "select window_start, sum(price) as p from {{ window_views.tumble(ref('parsed_upstream'), 'ts', "
        "'10 minutes') }} group by 1",
        "every one of the 3 rows it reads from {schema}.parsed_upstream has a NULL `ts`, so no row is in any "
        "window: likely a cast or parse without a format where `ts` is computed",
        "fix: parse it with its strings' format where it is computed, e.g. to_timestamp(ts, '<its format",
    ),
}


def test_a_time_null_on_every_row_fails_naming_the_parse_and_the_format(project):
    project.spark.sql(f"create database if not exists {project.schema}")
    project.spark.sql(f"create table {project.schema}.texts (ts string, price int) using parquet")
    values = ", ".join(f"('{ts}', {price})" for ts, price in TEXT_ROWS)
    project.spark.sql(f"insert into {project.schema}.texts values {values}")
    project.write("models/sources.yml", sources_yml("texts"))
    project.model("parsed_upstream", "{{ config(materialized='table') }}\n" + PARSED + "select * from parsed")
    project.dbt("run", "-s", "parsed_upstream")
    for name, (config, sql, _, _) in TIME_CASES.items():
        project.model(name, f"{{{{ config({config}) }}}}\n{sql}")
    result = project.dbt("run", "-s", *TIME_CASES, ok=False)
    by_model = {r.node.name: r.message for r in result.result}
    parse = "CAST(ts AS TIMESTAMP)"
    for name, (_, _, problem, fix) in TIME_CASES.items():
        text = by_model[name]
        assert f"window_view model '{name}': " + problem.format(schema=project.schema, parse=parse) in text, text
        assert fix in text, text
        assert "_wv_" not in text and "Traceback" not in text
        assert not project.spark.catalog.tableExists(f"{project.schema}.{name}")


def test_some_null_times_are_counted_in_the_run_s_message(project):
    project.spark.sql(f"create database if not exists {project.schema}")
    project.spark.sql(f"create table {project.schema}.texts (ts string, price int) using parquet")
    rows = [("2024-05-13 10:01:00", 2), ("2024-05-13 10:07:00", 3), ("13/05/2024 10:12:00", 4), (None, 5)]
    values = ", ".join(f"({repr(ts) if ts else 'null'}, {price})" for ts, price in rows)
    project.spark.sql(f"insert into {project.schema}.texts values {values}")
    project.write("models/sources.yml", sources_yml("texts"))
    project.model(
        "some_null",
        "{{ config(materialized='window_view') }}\n" + PARSED + "select window_start, sum(price) as p "
        "from {{ window_views.tumble('parsed', 'ts', '10 minutes') }} group by 1",
    )
    result = project.dbt("run", "-s", "some_null")
    assert result.result[0].message.endswith("; 2 rows with a NULL ts are in no window"), result.result[0].message
    assert project.rows("some_null") == [(datetime(2024, 5, 13, 10, 0), 5)]


def test_a_stream_whose_every_time_is_null_fails_after_keeping_them_late(project):
    make_source(project)
    project.spark.sql(f"insert into {project.schema}.bid values (null, 2, 'A'), (null, 3, 'B')")
    project.model(
        "null_stream",
        "{{ config(materialized='window_view', execution='streaming', emit='on_window_close', "
        "watermark={'column': 'bidtime', 'delay': '1 minute'}) }}\n" + TUMBLE_SUM,
    )
    text = errors(project.dbt("run", "-s", "null_stream", ok=False))
    assert (
        f"every one of the 2 rows it reads from {project.schema}.bid has a NULL `bidtime`, so no row is in any window"
        in text
    ), text
    assert f"its late table {project.schema}.null_stream__late keeps them" in text
    assert "then run `dbt run --full-refresh -s null_stream`" in text
    # some rows without a time: counted, said in the run's message (the failed first build is built again)
    project.spark.sql(
        f"insert into {project.schema}.bid values (timestamp'2020-04-15 08:05:00', 4, 'C'), "
        f"(timestamp'2020-04-15 08:17:00', 5, 'D'), (null, 6, 'E')"
    )
    result = project.dbt("run", "-s", "null_stream").result[0]
    assert "5 in, 1 out, 3 late (3 with a NULL time)" in result.message, result.message
    assert result.adapter_response["untimed_rows"] == 3
    # a later run whose every new row has no time fails as the first did
    project.spark.sql(f"insert into {project.schema}.bid values (null, 7, 'F')")
    text = errors(project.dbt("run", "-s", "null_stream", ok=False))
    assert f"every one of the 1 rows it reads from {project.schema}.bid has a NULL `bidtime`" in text, text


HOURLY = """select window_start, window_end, window_time, sum(price) as price
from {{ window_views.tumble(source('raw', 'bid'), 'bidtime', '10 minutes') }}
group by window_start, window_end, window_time"""
REWINDOW_CASES = {
    # an upstream table's columns are known when the run starts
    "rewindowed_ref": (
        "select window_start, sum(price) as price from {{ window_views.tumble(ref('ten_minutes'), 'window_time', "
        "'1 hour') }} group by 1",
        "window_views.tumble windows {schema}.ten_minutes, which already has the columns `window_start`, "
        "`window_end`, `window_time`",
        "fix: read only the columns you need from {schema}.ten_minutes, without them (or renamed, e.g. "
        "window_time to ten_minutes_window_time), and window that",
    ),
    # a CTE of the model: known when dbt compiles it
    "rewindowed_cte": (
        "with w as (" + HOURLY + ")\nselect window_start, sum(price) as price "
        "from {{ window_views.tumble('w', 'window_time', '1 hour') }} group by 1",
        "window_views.tumble windows w, which already has the columns `window_start`, `window_end`, `window_time`",
        "fix: read only the columns you need from w, without them",
    ),
}


def test_windowing_what_already_has_window_columns_is_refused(project):
    make_source(project)
    deliver(project, [("08:07", 2, "A"), ("08:11", 3, "B")])
    project.model("ten_minutes", "{{ config(materialized='window_view') }}\n" + HOURLY)
    project.dbt("run", "-s", "ten_minutes")
    for name, (sql, _, _) in REWINDOW_CASES.items():
        project.model(name, "{{ config(materialized='window_view') }}\n" + sql)
    compiled = errors(project.dbt("compile", "-s", "rewindowed_cte", ok=False))
    assert "already has the columns" in compiled, compiled
    result = project.dbt("run", "-s", *REWINDOW_CASES, ok=False)
    by_model = {r.node.name: r.message for r in result.result}
    for name, (_, problem, fix) in REWINDOW_CASES.items():
        text = by_model[name]
        assert f"window_view model '{name}': {problem.format(schema=project.schema)}" in text, text
        assert fix.format(schema=project.schema) in text, text
        assert "AMBIGUOUS_REFERENCE" not in text and "_wv_" not in text


DATES = [("13/05/2024", 1), ("05/06/2024", 2), ("20/05/2024", 3)]


def test_over_windows_ordered_by_text_are_refused_or_warned(project, capfd):
    project.spark.sql(f"create database if not exists {project.schema}")
    project.spark.sql(f"create table {project.schema}.days (d string, price int) using parquet")
    values = ", ".join(f"('{d}', {price})" for d, price in DATES)
    project.spark.sql(f"insert into {project.schema}.days values {values}")
    project.write("models/sources.yml", sources_yml("days"))
    project.model(
        "range_on_text",
        "{{ config(materialized='window_view') }}\nselect d, sum(price) over (order by d range between 1 preceding "
        "and current row) as s from {{ source('raw', 'days') }}",
    )
    text = errors(project.dbt("run", "-s", "range_on_text", ok=False))
    assert (
        f"window_view model 'range_on_text': the RANGE frame of `SUM(price) OVER (ORDER BY d range BETWEEN 1 "
        f"preceding AND CURRENT ROW)` orders by `d` of {project.schema}.days, which is STRING" in text
    ), text
    assert "fix: cast it to a time in an upstream model, e.g. `to_timestamp(d, 'dd/MM/yyyy') as d`" in text, text
    assert "Cannot resolve" not in text and "_wv_" not in text
    # ROWS, LAG, ranks: they run, ordered as text; the run warns once, with the cast
    project.model(
        "lag_on_text",
        "{{ config(materialized='window_view') }}\nselect d, lag(price) over (order by d) as prev, "
        "row_number() over (order by d) as n from {{ source('raw', 'days') }}",
    )
    capfd.readouterr()
    project.dbt("run", "-s", "lag_on_text")
    out = capfd.readouterr().out
    warning = (
        f"window_view model 'lag_on_text': its over windows order by `d` of {project.schema}.days, which is STRING "
        "of dates or times (such as '13/05/2024'): they sort as text (05/06 before 13/05)"
    )
    assert out.count(warning) == 1, out
    assert "cast it to a time in an upstream model, e.g. `to_timestamp(d, 'dd/MM/yyyy') as d`" in out
