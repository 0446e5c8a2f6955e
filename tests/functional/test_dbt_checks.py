"""dbt's own checks on window views where integration_tests/ cannot show them: a contract violation
fails before anything is written (batch, batch with location_root, streaming) and leaves the table
as it was, and what a killed batch run left beside it goes (its files too); data tests see a streaming view's late rows; a streaming model's unit test starts no
stream."""

from datetime import datetime

import pytest
import yaml

from tests.support.data import FLIP145_BID
from tests.support.dbt_projects import errors, sources_yml

CONTRACT_ERROR = "This model has an enforced contract that failed"

REVENUE = """
select window_start, window_end, sum(price) as price, count(*) as bids
from {{{{ window_views.tumble({input}, 'bidtime', '10 minutes') }}}}
group by window_start, window_end
"""


def t(hhmm: str) -> datetime:
    h, m = hhmm.split(":")
    return datetime(2020, 4, 15, int(h), int(m))


def contract(project, model: str, price_type: str) -> None:
    """The model's contract, its columns declared in another order than the SQL's."""
    columns = [("bids", "bigint"), ("price", price_type), ("window_start", "timestamp"), ("window_end", "timestamp")]
    project.write(
        f"models/{model}.yml",
        yaml.safe_dump(
            {
                "version": 2,
                "models": [
                    {
                        "name": model,
                        "config": {"contract": {"enforced": True}},
                        "columns": [{"name": name, "data_type": data_type} for name, data_type in columns],
                    }
                ],
            }
        ),
    )


@pytest.mark.parametrize("location_root", [False, True], ids=["managed", "location_root"])
def test_batch_contract_violation_keeps_the_table(project, tmp_path, location_root):
    layout = f", location_root='{tmp_path / 'lake'}'" if location_root else ""
    project.seed("bid", FLIP145_BID)
    project.model(
        "revenue", f"{{{{ config(materialized='window_view'{layout}) }}}}" + REVENUE.format(input="ref('bid')")
    )
    contract(project, "revenue", "bigint")
    project.dbt("build")
    # a contracted table has the declared columns in the declared order, as dbt-spark builds it
    assert project.columns("revenue") == ["bids", "price", "window_start", "window_end"]
    before = project.rows("revenue")
    assert before == [(3, 10, t("8:10"), t("8:20")), (3, 11, t("8:00"), t("8:10"))]

    contract(project, "revenue", "int")  # sum(int) is a bigint
    result = project.dbt("run", ok=False)
    assert CONTRACT_ERROR in errors(result)
    assert "data type mismatch" in errors(result)
    assert project.rows("revenue") == before
    assert not project.spark.catalog.tableExists(f"{project.schema}.revenue__wv_tmp")

    # what a run killed mid-swap leaves (its new table, the old one renamed aside): the next run
    # drops both, with their files under location_root, and builds the table again
    killed = {name: tmp_path / "lake" / "revenue" / f"run={name}" for name in ("revenue__wv_tmp", "revenue__wv_backup")}
    for leftover, files in killed.items():
        where = f" location '{files}'" if location_root else ""
        project.spark.sql(f"create table {project.schema}.{leftover} using parquet{where} as select 1 as x")
    contract(project, "revenue", "bigint")
    project.dbt("run")
    assert project.rows("revenue") == before
    for leftover, files in killed.items():
        assert not project.spark.catalog.tableExists(f"{project.schema}.{leftover}"), leftover
        assert not files.exists(), files


def stream_project(project, contract_price_type: str) -> None:
    project.spark.sql(f"create database if not exists {project.schema}")
    project.spark.sql(f"create table {project.schema}.bid (bidtime timestamp, price int, item string) using parquet")
    project.write("models/sources.yml", sources_yml("bid"))
    project.model(
        "revenue",
        "{{ config(materialized='window_view', execution='streaming', emit='on_window_close', "
        "watermark={'column': 'bidtime', 'delay': '1 minute'}) }}" + REVENUE.format(input="source('raw', 'bid')"),
    )
    contract(project, "revenue", contract_price_type)


def deliver(project, rows) -> None:
    values = ", ".join(f"(timestamp'2020-04-15 {hhmm}:00', {price}, '{item}')" for hhmm, price, item in rows)
    project.spark.sql(f"insert into {project.schema}.bid values {values}")


def test_streaming_contract_violation_writes_nothing(project):
    stream_project(project, "int")
    deliver(project, [("08:07", 2, "A"), ("08:11", 3, "B")])
    # first run: no table, late table or checkpoint is made
    result = project.dbt("run", ok=False)
    assert CONTRACT_ERROR in errors(result)
    assert not project.spark.catalog.tableExists(f"{project.schema}.revenue")
    assert not project.spark.catalog.tableExists(f"{project.schema}.revenue__late")

    contract(project, "revenue", "bigint")
    (node,) = project.dbt("run").result
    assert node.message.startswith("STREAM 1 batch, 2 in, 1 out, 0 late")
    before = project.rows("revenue")
    assert before == [(t("8:00"), t("8:10"), 2, 1)]

    # a later violation: the table stays, and the delivery is still to be read once the contract holds
    deliver(project, [("08:21", 4, "C")])
    contract(project, "revenue", "int")
    result = project.dbt("run", ok=False)
    assert CONTRACT_ERROR in errors(result)
    assert project.rows("revenue") == before
    contract(project, "revenue", "bigint")
    (node,) = project.dbt("run").result
    assert node.message.startswith("STREAM 1 batch, 1 in, 1 out, 0 late")
    assert project.rows("revenue") == before + [(t("8:10"), t("8:20"), 3, 1)]


def test_data_tests_read_the_late_table_and_unit_tests_start_no_stream(project):
    stream_project(project, "bigint")
    project.write(
        "models/revenue_unit.yml",
        yaml.safe_dump(
            {
                "version": 2,
                "unit_tests": [
                    {
                        "name": "revenue_sums_each_window",
                        "model": "revenue",
                        "given": [
                            {
                                "input": "source('raw', 'bid')",
                                "rows": [
                                    {"bidtime": "2020-04-15 08:07:00", "price": 2, "item": "A"},
                                    {"bidtime": "2020-04-15 08:21:00", "price": 4, "item": "C"},
                                ],
                            }
                        ],
                        "expect": {
                            "rows": [
                                {
                                    "window_start": "2020-04-15 08:00:00",
                                    "window_end": "2020-04-15 08:10:00",
                                    "price": 2,
                                    "bids": 1,
                                },
                                {
                                    "window_start": "2020-04-15 08:20:00",
                                    "window_end": "2020-04-15 08:30:00",
                                    "price": 4,
                                    "bids": 1,
                                },
                            ]
                        },
                    }
                ],
            }
        ),
    )
    # the unit test runs the model's SQL on its rows: every window, no stream, no table
    project.dbt("test", "--select", "test_type:unit")
    assert not project.spark.catalog.tableExists(f"{project.schema}.revenue")

    # the late table, declared as a source, with data tests (dbt test after the run: dbt build runs
    # a source's tests first, before the model has made or filled its late table)
    project.write(
        "models/late.yml",
        """
        version: 2
        sources:
          - name: late
            schema: "{{ target.schema }}"
            tables:
              - name: revenue__late
                columns:
                  - name: item
                    data_tests:
                      - not_null
                      - unique
                      - accepted_values: {arguments: {values: [B]}}
                      - relationships: {arguments: {to: "source('raw', 'bid')", field: item}}
                  - name: _watermark
                    data_tests: [not_null]
        """,
    )
    project.write(
        "tests/late_rows_before_their_watermark.sql",
        "select * from {{ source('late', 'revenue__late') }} where bidtime > _watermark",
    )
    deliver(project, [("08:07", 2, "A"), ("08:21", 4, "C")])
    project.dbt("run")
    deliver(project, [("08:05", 3, "B")])  # its window closed at W = 08:20
    (node,) = project.dbt("run").result
    assert node.adapter_response["late_rows"] == 1
    result = project.dbt("test", "--select", "source:late")
    assert len(result.result) == 6 and all(r.status == "pass" for r in result.result)
    # the tests read the late rows: one that excludes them fails
    deliver(project, [("08:06", 5, "D")])
    project.dbt("run")
    result = project.dbt("test", "--select", "source:late", ok=False)
    failed = [r.node.name for r in result.result if r.status == "fail"]
    assert failed == ["source_accepted_values_late_revenue__late_item__B"], failed


def test_dbt_debug_connects(project):
    """`dbt debug`, a newcomer's first command, builds the adapter from the profile alone."""
    result = project.dbt("debug")
    assert result.success


def test_a_seeds_empty_cells_load_as_null_and_its_quotes_as_written(project):
    """dbt-spark's session connection bound an empty cell as the text 'None', which a GROUP BY
    or a session's key then took for a real value, and a quote unescaped, which broke the load."""
    project.seed("people", 'name,city\nalice,\nbob,"O\'Brien \\ Sons"\n,Paris\n')
    project.dbt("seed", "-s", "people")
    rows = project.rows("people", order_by="name nulls first")
    assert rows == [(None, "Paris"), ("alice", None), ("bob", "O'Brien \\ Sons")], rows


DAILY = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='window_start',
          batch_size='day', begin='2020-04-14', partition_by=['day'], file_format='parquet') }}
select window_start, window_end, price, bids, to_date(window_start) as day from {{ ref('revenue') }}
"""


def test_a_window_view_is_the_event_time_input_of_a_microbatch_model(project):
    """`event_time='window_start'` on a window view: a downstream microbatch model reads, per
    batch, the windows that start in it (dbt filters the ref by it); a backfill of the next day
    adds that day's windows. An event_time that is not a time fails the run naming the key."""
    project.seed("bid", FLIP145_BID + "2020-04-16 00:03:00,7,K\n")
    project.model(
        "revenue",
        "{{ config(materialized='window_view', event_time='window_start') }}" + REVENUE.format(input="ref('bid')"),
    )
    project.model("daily", DAILY)
    project.dbt("build", "--event-time-start", "2020-04-15", "--event-time-end", "2020-04-16")
    first_day = [(t("8:00"), t("8:10"), 11, 3), (t("8:10"), t("8:20"), 10, 3)]
    assert [r[:4] for r in project.rows("daily", order_by="window_start")] == first_day
    project.dbt("run", "-s", "daily", "--event-time-start", "2020-04-16", "--event-time-end", "2020-04-17")
    next_day = (datetime(2020, 4, 16, 0, 0), datetime(2020, 4, 16, 0, 10), 7, 1)
    assert [r[:4] for r in project.rows("daily", order_by="window_start")] == [*first_day, next_day]
    assert project.rows("revenue", order_by="window_start") == [*first_day, next_day]

    project.model(
        "revenue", "{{ config(materialized='window_view', event_time='bids') }}" + REVENUE.format(input="ref('bid')")
    )
    message = errors(project.dbt("run", "-s", "revenue", ok=False))
    assert "event_time" in message and "'bids' is BIGINT" in message, message


def test_dbt_show_of_an_on_window_close_view_previews_the_closed_windows(project):
    """`dbt show` ran the model's SQL as written, so it previewed windows the watermark had not
    closed, which the table never holds; now it previews what the build writes."""
    stream_project(project, "bigint")
    deliver(
        project,
        [(hhmm, price, item) for hhmm, price, item in [("08:07", 2, "A"), ("08:11", 3, "B"), ("08:17", 6, "F")]],
    )
    closing = "emit='on_window_close', watermark={'column': 'bidtime', 'delay': '1 minute'}"
    project.model(
        "revenue_batch",
        "{{ config(materialized='window_view', " + closing + ") }}" + REVENUE.format(input="source('raw', 'bid')"),
    )
    project.model(
        "revenue_now", "{{ config(materialized='window_view') }}" + REVENUE.format(input="source('raw', 'bid')")
    )

    def shown(model: str) -> list:
        result = project.dbt("show", "-s", model, "--limit", "10")
        return sorted((row["window_start"], row["bids"]) for row in result.result.results[0].agate_table.rows)

    # the watermark is 08:16: the window ending 08:10 is closed, the one ending 08:20 is open
    assert shown("revenue_batch") == [(t("08:00"), 1)]
    assert shown("revenue") == [(t("08:00"), 1)]  # a streaming view: as its batch build would hold it
    assert shown("revenue_now") == [(t("08:00"), 1), (t("08:10"), 2)]
    project.dbt("run", "-s", "revenue_batch")
    assert [r[0] for r in project.rows("revenue_batch")] == [t("08:00")]
