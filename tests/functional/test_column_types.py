"""A window's time column, the watermark column and the ORDER BY of a RANGE interval frame must
be times: anything else fails its model before Spark runs (Spark would read a string it cannot
cast as NULL: an empty table, or every streamed row late), naming the model, the argument, the
column, its type and the cast that fixes it. DATE and TIMESTAMP_NTZ are times too."""

from tests.support.dbt_projects import errors, sources_yml

MUST_BE = "it must be TIMESTAMP, TIMESTAMP_NTZ or DATE"
CASES = {
    "batch_string_time": (
        "materialized='window_view'",
        "select window_start, count(*) as n from {{ window_views.tumble(source('raw', 'events'), 'ts_text', "
        "'10 minutes') }} group by 1",
        "window_views.tumble argument 'time_col' names the column `ts_text` of {schema}.events, which is STRING; "
        + MUST_BE,
    ),
    "stream_string_time": (
        "materialized='window_view', execution='streaming', emit='on_window_close', "
        "watermark={'column': 'ts_text', 'delay': '1 minute'}",
        "select window_start, window_end, count(*) as n from {{ window_views.hop(source('raw', 'events'), 'ts_text', "
        "'5 minutes', '10 minutes') }} group by 1, 2",
        "window_views.hop argument 'time_col' names the column `ts_text` of {schema}.events, which is STRING",
    ),
    "batch_int_watermark": (
        "materialized='window_view', emit='on_window_close', watermark={'column': 'n', 'delay': '1 minute'}",
        "select n, lag(price) over (order by n) as previous from {{ source('raw', 'events') }}",
        "config 'watermark' names the column `n` of {schema}.events, which is INT; " + MUST_BE,
    ),
    "batch_range_over_string": (
        "materialized='window_view'",
        "select ts_text, sum(price) over (order by ts_text range between interval 10 minutes preceding and current "
        "row) as recent from {{ source('raw', 'events') }}",
        "names the column `ts_text` of {schema}.events, which is STRING",
    ),
}


def make_events(project) -> None:
    project.spark.sql(f"create database if not exists {project.schema}")
    project.spark.sql(
        f"create table {project.schema}.events (ts_text string, n int, d date, ntz timestamp_ntz, price int) "
        "using parquet"
    )
    project.spark.sql(
        f"insert into {project.schema}.events values "
        "('2020-04-15 08:07:00', 1, date'2020-04-15', timestamp_ntz'2020-04-15 08:07:00', 2), "
        "('2020-04-15 08:11:00', 2, date'2020-04-15', timestamp_ntz'2020-04-15 08:11:00', 3), "
        "('15/04/2020 08:13', 3, date'2020-04-16', timestamp_ntz'2020-04-15 08:13:00', 1)"
    )
    project.write("models/sources.yml", sources_yml("events"))


def test_a_time_column_that_is_not_a_time_fails_its_model_before_spark_runs(project):
    make_events(project)
    for name, (config, sql, _) in CASES.items():
        project.model(name, f"{{{{ config({config}) }}}}\n{sql}")
    for name, (_, _, message) in CASES.items():
        result = project.dbt("run", "-s", name, ok=False)
        text = errors(result)
        assert f"window_view model '{name}': " in text, text
        assert message.format(schema=project.schema) in text, text
        assert "fix: cast it in an upstream model" in text, text
        for internal in ("_wv_", "Traceback", "at org.apache"):
            assert internal not in text, text
        assert not project.spark.catalog.tableExists(f"{project.schema}.{name}")


def test_date_and_timestamp_ntz_are_times(project):
    make_events(project)
    project.model(
        "per_day",
        "{{ config(materialized='window_view') }}\n"
        "select window_start, count(*) as n from {{ window_views.tumble(source('raw', 'events'), 'd', '1 day') }} "
        "group by 1",
    )
    project.model(
        "per_10min_ntz",
        "{{ config(materialized='window_view', emit='on_window_close', watermark={'column': 'ntz', 'delay': '0 "
        "seconds'}) }}\n"
        "select window_start, window_end, count(*) as n from {{ window_views.tumble(source('raw', 'events'), 'ntz', "
        "'10 minutes') }} group by 1, 2",
    )
    project.dbt("run", "-s", "per_day", "per_10min_ntz")
    assert [n for _, n in project.rows("per_day")] == [2, 1]
    # the watermark (08:13) closes [08:00, 08:10) only
    assert [n for _, _, n in project.rows("per_10min_ntz")] == [1]
