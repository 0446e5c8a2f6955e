"""The TVF marker parser and the one source of the window arithmetic (no Spark)."""

import json
import random
from pathlib import Path

import pytest
from dbt_common.clients.jinja import get_template

import dbt.include.window_views
from dbt.adapters.window_views import rules
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.query.tvf import MarkerError, find
from dbt.adapters.window_views.query.windows import Cumulate, Hop, Session

MIN = 60_000_000


def marker(spec: dict, version: str = "v1") -> str:
    return f"/* window_views:tvf:{version} {json.dumps(spec)} */"


HOP = {
    "kind": "hop",
    "time_col": "bidtime",
    "slide_us": 5 * MIN,
    "size_us": 60 * MIN,
    "offset_us": -2 * MIN,
    "text": {"slide": "5 minutes", "size": "1 hour", "offset": "-2 minutes"},
}
SESSION = {
    "kind": "session",
    "time_col": "ts",
    "gap_us": 10 * MIN,
    "partition_by": ["a", "b"],
    "text": {"gap": "10 minutes"},
}
CUMULATE = {
    "kind": "cumulate",
    "time_col": "t",
    "step_us": MIN,
    "size_us": 4 * MIN,
    "offset_us": 0,
    "text": {"step": "1 minute", "size": "4 minutes"},
}


def test_markers_read_back_in_order_with_their_labels():
    sql = f"select * from ({marker(HOP)} select 1) join ({marker(SESSION)} select 2) join ({marker(CUMULATE)} select 3)"
    hop, session, cumulate = find(sql)
    assert hop == Hop(
        "bidtime",
        size=60 * MIN,
        slide=5 * MIN,
        offset=-2 * MIN,
        texts=(("slide", "5 minutes"), ("size", "1 hour"), ("offset", "-2 minutes")),
    )
    assert session == Session("ts", gap=10 * MIN, partition_by=("a", "b"), texts=(("gap", "10 minutes"),))
    assert cumulate == Cumulate("t", step=MIN, size=4 * MIN, texts=(("step", "1 minute"), ("size", "4 minutes")))
    # the labels keep each macro's argument order, whatever the JSON's key order
    assert hop.label() == "hop(time_col=bidtime, slide=5 minutes, size=1 hour, offset=-2 minutes)"
    assert session.label() == "session(time_col=ts, gap=10 minutes, partition_by=a b)"
    assert cumulate.label() == "cumulate(time_col=t, step=1 minute, size=4 minutes)"
    assert find("select 1 /* a comment */") == []


def test_an_unknown_marker_version_is_refused():
    with pytest.raises(
        MarkerError, match=r"marker `window_views:tvf:v2` is not a version this plugin reads \(v1\); fix: "
    ):
        find(marker(HOP, "v2"))


@pytest.mark.parametrize(
    "payload",
    [
        '{"kind": "hop", "time_col": "ts"',
        '{"kind": "hop", "time_col": "ts", "text": {}}',
        '{"kind": "slide"}',
        "[1, 2]",
    ],
)
def test_a_damaged_marker_is_refused(payload):
    with pytest.raises(MarkerError, match=r"the window TVF marker `.*` is damaged .*; fix: render the window with"):
        find(f"/* window_views:tvf:v1 {payload} */")


WINDOW_BOUNDS = Path(dbt.include.window_views.__file__).parent / "macros" / "_internal" / "window_bounds.sql"
_rng = random.Random(35)
# random sizes and offsets (negative, larger than the unit), over column and expression times
CASES = [
    (t, _rng.randrange(-(10**12), 10**12), _rng.randrange(1, 10**11))
    for t in ("unix_micros(cast(`ts` as timestamp))", "_wv_t", "(_wv_p + 60)")
    for _ in range(20)
]


class Returned(Exception):
    """dbt's `return`: a macro's value travels as an exception (dbt's MacroReturn)."""


def _macro(module, name: str):
    def call(*args):
        try:
            return str(getattr(module, f"dbt_macro__{name}")(*args))
        except Returned as returned:
            return returned.args[0]

    return call


def _return(value):
    raise Returned(value)


@pytest.mark.parametrize("t, offset, unit", CASES)
def test_python_builds_the_macros_window_arithmetic(t, offset, unit):
    """The macros render the window floor and bounds Python builds (sqlglot), from the templates
    made from it (rules.py): the same expressions for any time, offset and unit."""
    context = {"return": _return, "window_views": {"_rules": rules.constants}}
    dbt_macros = get_template(WINDOW_BOUNDS.read_text(), context, capture_macros=True).module
    time = sqlexpr.parse(t)
    floor = sqlexpr.window_floor(time, offset, unit)
    assert floor == sqlexpr.parse(_macro(dbt_macros, "_window_floor")(t, offset, unit))
    bounds = sqlexpr.parse(f"select {_macro(dbt_macros, '_window_bounds')(t, f'{t} + {unit}')}")
    assert sqlexpr.window_bounds(time, sqlexpr.parse(f"{t} + {unit}")) == bounds.expressions
    micros = sqlexpr.parse(_macro(dbt_macros, "_micros")("`ts`"))
    assert micros == sqlexpr.epoch_micros(sqlexpr.column("ts"))
