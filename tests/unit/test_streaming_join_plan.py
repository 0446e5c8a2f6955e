"""The streaming plan of a model over several inputs, before any Spark: a window join or a UNION
ALL is planned with one view per input; every other shape is refused naming the model and the fix."""

import json

import pytest

from dbt.adapters.window_views.errors import ModelSqlError
from dbt.adapters.window_views.model.config import WindowViewConfig
from tests.support.streams import build


def config(**extra):
    return WindowViewConfig.from_model(
        "m",
        {
            "execution": "streaming",
            "emit": "on_window_close",
            "watermark": {"column": "ts", "delay": "1 second"},
            **extra,
        },
    )


def tvf(table: str, kind: str = "tumble", size_us: int = 300_000_000, time_col: str = "ts", **more) -> str:
    """A window TVF as the macros render it: the marker heads its subquery."""
    spec = {"kind": kind, "time_col": time_col, "size_us": size_us, "offset_us": 0, "text": {"size": "x"}, **more}
    return (
        f"(/* window_views:tvf:v1 {json.dumps(spec)} */ "
        f"select *, ts as window_start, ts as window_end from {table} where ts is not null)"
    )


ON = "L.window_start = R.window_start and L.window_end = R.window_end"


def join(left: str = None, right: str = None, on: str = f"L.k = R.k and {ON}", kind: str = "full join") -> str:
    return (
        f"select L.k, R.v, coalesce(L.window_start, R.window_start) as window_start, "
        f"coalesce(L.window_end, R.window_end) as window_end "
        f"from {left or tvf('s.a')} L {kind} {right or tvf('s.b')} R on {on}"
    )


UNION = (
    f"select window_start, window_end, count(*) as n from "
    f"{tvf('(select k, ts from s.a union all select k, ts from s.b)')} w group by window_start, window_end"
)


def test_a_window_join_reads_each_input_from_its_own_view():
    p = build("m", join(), config(), ())
    assert p.shape == "join"
    assert [i.source for i in p.inputs] == ["s.a", "s.b"]
    assert len({i.view for i in p.inputs}) == 2
    assert all(f"FROM {i.view} AS" in p.sql for i in p.inputs) and "s.a" not in p.sql and "s.b" not in p.sql
    assert p.window.kind == "tumble"


def test_a_join_using_the_window_columns_is_a_window_join():
    assert (
        build(
            "m",
            join(on="L.k = R.k", kind="join").replace(" on L.k = R.k", " using (k, window_start, window_end)"),
            config(),
            (),
        ).shape
        == "join"
    )


def test_a_union_all_into_one_window_tvf():
    p = build("m", UNION, config(), ())
    assert p.shape == "union" and [i.source for i in p.inputs] == ["s.a", "s.b"]
    build("m", UNION, config(emit="on_update"), ())


def test_idle_timeout_over_several_inputs_is_planned():
    """Each input keeps its own idle clock (streaming/idle.py): a window join or union accepts it."""
    idle = config(watermark={"column": "ts", "delay": "1 second", "idle_timeout": "10 minutes"})
    assert build("m", join(), idle, ()).shape == "join"
    assert build("m", UNION, idle, ()).config.watermark.idle_timeout.micros == 600_000_000


def test_one_input_keeps_its_plan():
    p = build("m", f"select window_start, window_end, count(*) from {tvf('s.a')} w group by 1, 2", config(), ())
    assert p.shape == "single" and len(p.inputs) == 1 and p.view == p.inputs[0].view and not p.view[-2:] == "_0"


@pytest.mark.parametrize(
    "sql, cfg, problem, fix",
    [
        (
            join(right=tvf("s.b", size_us=600_000_000)),
            {},
            "a window join needs the same window on every side",
            "window every side with the same TVF, size, slide and offset",
        ),
        (
            join(right=tvf("s.b", kind="hop", slide_us=300_000_000)),
            {},
            "a window join needs the same window on every side",
            "window every side",
        ),
        (
            join(on="L.k = R.k and L.window_start = R.window_start"),
            {},
            "does not join its sides on window_start and window_end",
            "add `L.window_start = R.window_start and L.window_end = R.window_end` to its ON",
        ),
        (join(on="L.k = R.k"), {}, "does not join its sides on window_start and window_end", "to its ON"),
        (
            join(),
            {"emit": "on_update"},
            "a streaming window join emits a window once it is closed on every side",
            "set emit='on_window_close'",
        ),
        (join(right="(select * from s.b)"), {}, "through 1 window TVF", "window every input with the same window TVF"),
        (
            join(right=tvf("s.b", time_col="other")),
            {},
            "windows by `other`, but the watermark column is `ts`",
            "window every input by the same column",
        ),
        (
            join(
                left=tvf("s.a", kind="session", gap_us=1, partition_by=[]),
                right=tvf("s.b", kind="session", gap_us=1, partition_by=[]),
            ),
            {},
            "cannot use session windows",
            "use tumble, hop or cumulate",
        ),
        (UNION.replace("union all", "union"), {}, "UNION ALL, not UNION (DISTINCT)", "write UNION ALL"),
        (
            f"select w.* from {tvf('s.a')} w where w.k in (select k from s.b)",
            {},
            "neither joins them by window nor unions them",
            "join them on window_start and window_end",
        ),
        (
            "select k, ts, sum(v) over (partition by k order by ts) as s from (select * from s.a union all select * from s.b) u",
            {},
            "streaming over windows read one upstream table, this model reads s.a, s.b",
            "union the inputs in an upstream model",
        ),
    ],
)
def test_other_shapes_over_several_inputs_are_refused(sql, cfg, problem, fix):
    with pytest.raises(ModelSqlError) as caught:
        build("m", sql, config(**cfg), ())
    message = str(caught.value)
    assert "window_view model 'm': " in message and problem in message, message
    assert "; fix: " in message and fix in message.split("; fix: ", 1)[1], message


def test_a_model_reading_no_table_is_refused():
    with pytest.raises(ModelSqlError, match="this one reads none; fix: select from a ref"):
        build("m", f"select window_start, window_end from {tvf('(select current_timestamp() as ts)')} w", config(), ())


def test_the_table_properties_say_how_the_inputs_are_combined():
    assert build("m", join(), config(), ()).describe() == "tumble(time_col=ts, size=x) (window join of s.a, s.b)"
    assert build("m", UNION, config(), ()).describe().endswith("(union of s.a, s.b)")


def test_a_self_window_join_reads_its_one_input_on_both_sides():
    """FLIP-145's example joins a stream with itself: one input, both reads at its view."""
    p = build("m", join(tvf("s.a"), tvf("s.a")), config(), ())
    assert p.shape == "single" and [i.source for i in p.inputs] == ["s.a"]
    assert p.sql.count(f"FROM {p.view} AS") == 2 and "s.a" not in p.sql


@pytest.mark.parametrize(
    "sql, extra, message",
    [
        (join(tvf("s.a"), tvf("s.a", size_us=600_000_000)), {}, "needs the same window on every side"),
        (join(tvf("s.a"), tvf("s.a"), on="L.k = R.k"), {}, "does not join its sides on window_start and window_end"),
        (join(tvf("s.a"), tvf("s.a")), {"emit": "on_update"}, "set emit='on_window_close'"),
        (join(tvf("s.a"), "s.a"), {}, "joins the rows of s.a to their window `tumble(time_col=ts, size=x)`, but no "),
    ],
    ids=["windows-differ", "not-on-window", "on-update", "one-side-not-windowed"],
)
def test_self_joins_that_are_not_window_joins_are_refused(sql, extra, message):
    with pytest.raises(ModelSqlError, match="window_view model 'm'") as raised:
        build("m", sql, config(**extra), ())
    assert message in str(raised.value)
