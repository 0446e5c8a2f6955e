"""Bad input fails at compile time (macro arguments) or before any SQL runs (config), with a
message naming the macro or model, the argument or key, and the fix; a failed run keeps the
previous table."""

import pytest

from tests.support.dbt_projects import errors

BID = """
bidtime,price,item
2020-04-15 08:07:00,2,A
2020-04-15 08:11:00,3,B
"""


@pytest.fixture
def bid_project(project):
    project.seed("bid", BID)
    return project


MACRO_CASES = [
    ("tumble(ref('bid'), 'bidtime', '0 minutes')", "window_views.tumble: argument 'size' = '0 minutes' is zero"),
    ("tumble(ref('bid'), 'bidtime', '-5 minutes')", "window_views.tumble: argument 'size' = '-5 minutes' is negative"),
    ("tumble(ref('bid'), 'bidtime', '1 month')", "window_views.tumble: argument 'size' = '1 month' is not an interval"),
    (
        "tumble(ref('bid'), 'bidtime', 'ten minutes')",
        "argument 'size' = 'ten minutes' is not an interval: expected '<n> <unit>'",
    ),
    (
        "tumble(ref('bid'), 'bidtime', \"10 minutes'; drop table x; --\")",
        "argument 'size' = '10 minutes'; drop table x; --' is not an interval",
    ),
    ("tumble(ref('bid'), 'bidtime', 10)", "argument 'size' must be an interval string"),
    (
        "tumble(ref('bid'), 'bidtime', '10 minutes', offset='1 week')",
        "window_views.tumble: argument 'offset' = '1 week' is not an interval",
    ),
    ("tumble(ref('bid'), 'bid`time', '10 minutes')", "window_views.tumble: argument 'time_col' must be a column name"),
    ("tumble(ref('bid'), 'bidtime; drop', '10 minutes')", "argument 'time_col' must be a column name"),
    (
        "tumble('bid; drop table x', 'bidtime', '10 minutes')",
        "argument 'relation' must be ref(...), source(...) or a CTE name",
    ),
    (
        "hop(ref('bid'), 'bidtime', '0 seconds', '10 minutes')",
        "window_views.hop: argument 'slide' = '0 seconds' is zero",
    ),
    (
        "hop(ref('bid'), 'bidtime', '5 minutes', '2 fortnights')",
        "window_views.hop: argument 'size' = '2 fortnights' is not an interval",
    ),
    # a slide larger than the size left rows between windows in none of them
    (
        "hop(ref('bid'), 'bidtime', '10 minutes', '5 minutes')",
        "window_views.hop: argument 'slide' = '10 minutes' is larger than 'size' = '5 minutes': the rows between two "
        "windows would be in no window; fix: use a slide of at most the size",
    ),
    (
        "cumulate(ref('bid'), 'bidtime', '3 minutes', '10 minutes')",
        "window_views.cumulate: argument 'size' = '10 minutes' must be a multiple of 'step' = '3 minutes'",
    ),
    (
        "cumulate(ref('bid'), 'bidtime', '-1 minute', '10 minutes')",
        "window_views.cumulate: argument 'step' = '-1 minute' is negative",
    ),
    ("session(ref('bid'), 'bidtime', '1 year')", "window_views.session: argument 'gap' = '1 year' is not an interval"),
    (
        "session(ref('bid'), 'bidtime', '5 minutes', partition_by=['item', 'x)'])",
        "window_views.session: argument 'partition_by' must be a column name",
    ),
    # longer than 100 years: compile errors, not Spark's DATATYPE_MISMATCH on an overflowing literal
    (
        "tumble(ref('bid'), 'bidtime', '999999999999 days')",
        "window_views.tumble: argument 'size' = '999999999999 days' is too long: at most 36500 days (about 100 years)",
    ),
    (
        "hop(ref('bid'), 'bidtime', '1 day', '36501 days')",
        "window_views.hop: argument 'size' = '36501 days' is too long: at most 36500 days",
    ),
    (
        "tumble(ref('bid'), 'bidtime', '1 day', offset='-876001 hours')",
        "window_views.tumble: argument 'offset' = '-876001 hours' is too long",
    ),
    (
        "session(ref('bid'), 'bidtime', '52560001 minutes')",
        "window_views.session: argument 'gap' = '52560001 minutes' is too long",
    ),
    # a misspelt unit gets a suggestion
    (
        "tumble(ref('bid'), 'bidtime', '5 minuts')",
        "argument 'size' = '5 minuts' is not an interval: expected '<n> <unit>' with unit second(s), minute(s), hour(s) or day(s), e.g. '10 minutes'; did you mean '5 minutes'?",
    ),
    (
        "hop(ref('bid'), 'bidtime', '1 min', '3 hrs')",
        "window_views.hop: argument 'slide' = '1 min' is not an interval: expected '<n> <unit>' with unit second(s), minute(s), hour(s) or day(s), e.g. '10 minutes'; did you mean '1 minute'?",
    ),
    ("cumulate(ref('bid'), 'bidtime', '1 hour', '1 dys')", "did you mean '1 day'?"),
    ("session(ref('bid'), 'bidtime', '-30secs')", "did you mean '-30 seconds'?"),
]


def test_bad_macro_arguments_fail_their_model_at_compile_time(bid_project):
    names = [f"bad_{i}" for i in range(len(MACRO_CASES))]
    for name, (call, _) in zip(names, MACRO_CASES):
        bid_project.model(name, f"select * from {{{{ window_views.{call} }}}}")
    # parsing checks no macro argument: the project parses, and lists every model
    bid_project.dbt("parse")
    listed = bid_project.dbt("ls", "--resource-type", "model", "--output", "name")
    assert sorted(listed.result) == sorted(names)
    # (`dbt compile` stops at the first error; `dbt run` compiles every model and reports each)
    result = bid_project.dbt("run", ok=False)
    by_model = {r.node.name: r for r in result.result}
    for name, (call, message) in zip(names, MACRO_CASES):
        assert by_model[name].status == "error", call
        assert f"Compilation Error in model {name}" in by_model[name].message, by_model[name].message
        assert message in by_model[name].message, by_model[name].message


def test_a_bad_macro_call_fails_only_its_model(bid_project):
    """A typo in one model's window macro fails that model when it is compiled or run; `dbt ls`,
    `dbt parse` and runs of other models go on, and the model keeps its lineage."""
    bid_project.model("bad", "select * from {{ window_views.tumble(ref('bid'), 'bidtime', '5 minuts') }}")
    bid_project.model(
        "bad_aggregate",
        "select * from {{ window_views.window_aggregate(ref('bid'), "
        "{'kind': 'hop', 'time_col': 'bidtime', 'slide': '10 minutes', 'size': '5 minute'}, {'n': 'count(*)'}) }}",
    )
    # the longest intervals allowed run in Spark
    bid_project.model(
        "good",
        """
        select 'tumble' as kind, count(*) as n, min(window_start) as first_start
        from {{ window_views.tumble(ref('bid'), 'bidtime', '36500 days', offset='-36500 days') }}
        union all
        select 'session', count(*), min(window_start)
        from {{ window_views.session(ref('bid'), 'bidtime', '36500 days') }}
        """,
    )
    listed = bid_project.dbt("ls", "--select", "bid+", "--output", "name")
    assert sorted(listed.result) == ["bad", "bad_aggregate", "bid", "good"]
    bid_project.dbt("parse")
    bid_project.dbt("build", "--select", "bid good")
    assert [r[:2] for r in bid_project.rows("good")] == [("session", 2), ("tumble", 2)]
    assert str(bid_project.rows("good")[1][2]) == "1970-01-01 00:00:00"
    result = bid_project.dbt("run", "--select", "bad", ok=False)
    assert "Compilation Error in model bad" in errors(result)
    assert (
        "window_views.tumble: argument 'size' = '5 minuts' is not an interval: expected '<n> <unit>' with unit "
        "second(s), minute(s), hour(s) or day(s), e.g. '10 minutes'; did you mean '5 minutes'?"
    ) in errors(result)
    result = bid_project.dbt("compile", "--select", "bad_aggregate", ok=False)
    assert "Compilation Error in model bad_aggregate" in errors(result)
    assert (
        "window_views.window_aggregate: argument 'window.slide' = '10 minutes' is larger than 'window.size' = "
        "'5 minute': the rows between two windows would be in no window; fix: use a slide of at most the size"
    ) in errors(result)


CONFIG_CASES = {
    "bad_emit": (
        "emit='on_close'",
        "window_view model 'bad_emit': config 'emit' = 'on_close' is not valid; expected one of: on_update, on_window_close",
    ),
    "bad_execution": (
        "execution='micro_batch'",
        "config 'execution' = 'micro_batch' is not valid; expected one of: batch, streaming",
    ),
    "bad_late": ("late_data='keep'", "config 'late_data' = 'keep' is not valid; expected one of: table, drop"),
    "typo_key": (
        "emitt='on_update'",
        "window_view model 'typo_key': config 'emitt' is not a config key dbt or window_view knows; did you mean 'emit'?",
    ),
    "no_watermark": (
        "emit='on_window_close'",
        "config 'watermark' is missing: emit='on_window_close' needs one; add watermark={'column'",
    ),
    "bad_watermark": (
        "emit='on_window_close', watermark={'col': 'bidtime'}",
        "config 'watermark' = {'col': 'bidtime'} is not valid; expected {'column': '<timestamp column>'",
    ),
    "bad_delay": (
        "emit='on_window_close', watermark={'column': 'bidtime', 'delay': '5 mins'}",
        "config 'watermark' delay: '5 mins' is not an interval",
    ),
    "bad_trigger": (
        "trigger='once'",
        "config 'trigger' = 'once' is not valid; expected one of: 'available_now', or {'processing_time'",
    ),
    "streaming": (
        "execution='streaming', watermark={'column': 'bidtime', 'delay': '1 minute'}",
        "window_view model 'streaming': upstream `bid` is a seed, which is rewritten in place",
    ),
    "bad_format": (
        "file_format='excel'",
        "config 'file_format' = 'excel' is not valid; expected one of: parquet, delta, iceberg, orc, hudi",
    ),
}


def test_bad_config_fails_before_any_sql(bid_project):
    for name, (config, _) in CONFIG_CASES.items():
        bid_project.model(
            name, f"{{{{ config(materialized='window_view', {config}) }}}}\nselect * from {{{{ ref('bid') }}}}"
        )
    bid_project.dbt("seed")
    result = bid_project.dbt("run", "--select", " ".join(CONFIG_CASES), ok=False)
    by_model = {r.node.name: r for r in result.result}
    for name, (_, message) in CONFIG_CASES.items():
        assert by_model[name].status == "error", name
        assert "Compilation Error" in by_model[name].message, by_model[name].message
        assert message in by_model[name].message, by_model[name].message
        # nothing was created, not even the intermediate table
        assert not bid_project.spark.catalog.tableExists(f"{bid_project.schema}.{name}__wv_tmp")


def test_eowc_over_window_that_never_closes_is_an_error(bid_project):
    bid_project.model(
        "unbounded",
        """
        {{ config(materialized='window_view', emit='on_window_close', watermark={'column': 'bidtime', 'delay': '0 seconds'}) }}
        select item, sum(price) over (order by bidtime rows between current row and unbounded following) as rest
        from {{ ref('bid') }}
        """,
    )
    bid_project.model(
        "unordered",
        """
        {{ config(materialized='window_view', emit='on_window_close', watermark={'column': 'bidtime', 'delay': '0 seconds'}) }}
        select item, lag(price) over (order by item) as prev from {{ ref('bid') }}
        """,
    )
    bid_project.dbt("seed")
    result = bid_project.dbt("run", "--select", "unbounded unordered", ok=False)
    messages = {r.node.name: r.message for r in result.result}
    assert "window_view model 'unbounded'" in messages["unbounded"]
    assert "frame ending in UNBOUNDED FOLLOWING, which never closes" in messages["unbounded"]
    assert "is not ordered by the watermark column, so its rows never close" in messages["unordered"]


BATCHED = """
{{ config(materialized='window_view', batch_size='day', event_time='window_time', begin='2020-04-15') }}
select window_start, window_end, window_time, sum(price) as price
from {{ window_views.tumble(ref('bid'), 'bidtime', '10 minutes') }}
group by window_start, window_end, window_time
"""


def test_sample_and_empty_on_batches_say_what_is_unsupported(bid_project):
    bid_project.write("seeds/bid.yml", "seeds:\n  - name: bid\n    config:\n      event_time: bidtime\n")
    bid_project.model("batched", BATCHED)
    bid_project.dbt("seed")
    for flags, said in (
        (("--empty",), "dbt run --empty"),
        (("--sample", "{'start': '2020-04-15 08:00', 'end': '2020-04-15 08:10'}"), "dbt run --sample"),
    ):
        message = errors(bid_project.dbt("run", "--select", "batched", *flags, ok=False))
        assert f"window_view model 'batched': config 'batch_size' = 'day' cannot run under {said}:" in message, message
        assert "must read an input table" not in message
        assert "fix: run it without" in message and "--exclude config.batch_size:day" in message
    # nothing was written; without the flag it runs
    assert not bid_project.spark.catalog.tableExists(f"{bid_project.schema}.batched")
    bid_project.dbt("run", "--select", "batched")
    assert bid_project.spark.table(f"{bid_project.schema}.batched").count() == 2


def test_failed_run_keeps_previous_table(bid_project):
    bid_project.model(
        "wv",
        """
        {{ config(materialized='window_view') }}
        select window_start, count(*) as n from {{ window_views.tumble(ref('bid'), 'bidtime', '10 minutes') }}
        group by window_start
        """,
    )
    bid_project.dbt("build", "--select", "bid wv")
    before = bid_project.rows("wv")
    assert len(before) == 2
    # valid Jinja and config, but the SQL fails in Spark
    bid_project.model(
        "wv",
        """
        {{ config(materialized='window_view') }}
        select window_start, count(no_such_column) as n from {{ window_views.tumble(ref('bid'), 'bidtime', '10 minutes') }}
        group by window_start
        """,
    )
    result = bid_project.dbt("run", "--select", "wv", ok=False)
    message = errors(result)
    assert "[UNRESOLVED_COLUMN.WITH_SUGGESTION]" in message and "no_such_column" in message, message
    # not the logical plan of the statement the plugin ran, with its internal names
    assert "CreateTable" not in message and "__wv_tmp" not in message and "+- " not in message, message
    assert bid_project.rows("wv") == before
    # a job's failure: Spark's message as the model's error (was dbt's "Unhandled error")
    bid_project.model(
        "wv",
        """
        {{ config(materialized='window_view') }}
        select window_start, cast(assert_true(count(*) < 0, 'too many bids') as int) as n
        from {{ window_views.tumble(ref('bid'), 'bidtime', '10 minutes') }}
        group by window_start
        """,
    )
    result = bid_project.dbt("run", "--select", "wv", ok=False)
    (node,) = result.result
    assert node.status == "error" and "[USER_RAISED_EXCEPTION] too many bids" in node.message, node.message
    assert "Unhandled" not in node.message and "at org.apache" not in node.message, node.message
    assert bid_project.rows("wv") == before
    # file_format='delta' on a Spark started without Delta (PySpark 4.3, no [delta] extra): named
    # with the fix before anything is built (was: Spark's DATA_SOURCE_NOT_FOUND for `delta`)
    bid_project.model(
        "wv",
        """
        {{ config(materialized='window_view', file_format='delta') }}
        select window_start, count(*) as n from {{ window_views.tumble(ref('bid'), 'bidtime', '10 minutes') }}
        group by window_start
        """,
    )
    result = bid_project.dbt("run", "--select", "wv", ok=False)
    message = errors(result)
    assert "window_view model 'wv': file_format='delta' needs Delta Lake in the Spark this dbt command" in message
    assert "fix: set lakehouse: delta in the profile and run dbt from a venv with the [delta] extra" in message
    assert bid_project.rows("wv") == before


def test_location_root_builds_beside_and_removes_the_old_files(bid_project, tmp_path):
    root = tmp_path / "lake"
    bid_project.model(
        "external",
        f"""
        {{{{ config(materialized='window_view', location_root='{root}') }}}}
        select window_start, count(*) as n from {{{{ window_views.tumble(ref('bid'), 'bidtime', '10 minutes') }}}}
        group by window_start
        """,
    )
    bid_project.dbt("build", "--select", "bid external")
    first = sorted((root / "external").iterdir())
    bid_project.dbt("run", "--select", "external")
    second = sorted((root / "external").iterdir())
    # each build writes its own run=<invocation id> directory; the replaced one is gone
    assert len(first) == 1 and len(second) == 1 and first != second
    assert second[0].name.startswith("run=")
    assert len(bid_project.rows("external")) == 2
    location = (
        bid_project.spark.sql(f"describe table extended {bid_project.schema}.external")
        .where("col_name = 'Location'")
        .first()
    )
    assert location.data_type.endswith(second[0].name)
