"""A misspelled column in a window macro's argument or in the watermark fails before Spark runs
the SQL, naming the model, the argument, the column and the closest columns of the relation —
never the internal names of the rendered SQL or a stack trace."""

from test_streaming import TUMBLE_SUM, deliver, make_source

from tests.support.dbt_projects import errors

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
