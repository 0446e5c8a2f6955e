"""The window arithmetic the streaming runner decides lateness and eviction with, evaluated by
Spark and checked against windows enumerated by brute force (offsets, pre-1970 times); the
markers the macros render, read back from a model dbt compiled, and the window starts the macros
render, the same expression Python renders."""

import random

import pytest
import sqlglot

from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.query.tvf import find
from dbt.adapters.window_views.query.windows import Cumulate, Hop, Session, Tumble, Window

MIN = 60_000_000


def windows(w: Window, t: int):
    """Every [start, end) of the TVF holding t, enumerated from its definition."""
    if isinstance(w, Tumble):
        start = (t - w.offset) // w.size * w.size + w.offset
        return [(start, start + w.size)]
    if isinstance(w, Hop):
        base = (t - w.offset) // w.slide * w.slide + w.offset
        return [
            (s, s + w.size)
            for s in range(base - (w.size // w.slide + 1) * w.slide, base + w.slide, w.slide)
            if s <= t < s + w.size
        ]
    period = (t - w.offset) // w.size * w.size + w.offset
    assert isinstance(w, Cumulate)
    return [(period, e) for e in range(period + w.step, period + w.size + 1, w.step) if e > t]


SPECS = [
    Tumble("ts", size=10 * MIN),
    Tumble("ts", size=10 * MIN, offset=-3 * MIN),
    Hop("ts", size=10 * MIN, slide=3 * MIN, offset=1 * MIN),
    Hop("ts", size=5 * MIN, slide=5 * MIN, offset=-2 * MIN),  # slide = size, the largest slide
    Hop("ts", size=60 * MIN, slide=5 * MIN),
    Cumulate("ts", size=12 * MIN, step=4 * MIN, offset=7 * MIN),
]
_rng = random.Random(35)
# random windows: sizes from a second to a year, offsets either side of 0 and past the size
for _ in range(6):
    _unit = _rng.randrange(1, 400) * 1_000_000
    _n = _rng.randrange(1, 40)
    _offset = _rng.randrange(-3 * _n * _unit, 3 * _n * _unit)
    SPECS += [
        Tumble("ts", size=_n * _unit, offset=_offset),
        Hop("ts", size=_n * _unit + _rng.randrange(_unit), slide=_unit, offset=_offset),
        Cumulate("ts", size=_n * _unit, step=_unit, offset=_offset),
    ]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: repr(s))
def test_first_and_last_window_end(spark, spec):
    rng = random.Random(7)
    times = [rng.randrange(-5 * 10**13, 5 * 10**13) for _ in range(300)] + [0, -1, spec.offset, spec.size]
    sql = ", ".join(f"named_struct('first', {spec.first_end(str(t))}, 'last', {spec.last_end(str(t))})" for t in times)
    row = spark.sql(f"select array({sql})").first()[0]
    for t, got in zip(times, row):
        expected = windows(spec, t)
        assert expected, t  # slide <= size: every time is in a window
        assert (got["first"], got["last"]) == (min(e for _, e in expected), max(e for _, e in expected)), t


CALLS = {
    "tumbled": "tumble(ref('bid'), 'bidtime', '10 minutes', offset='-3 minutes')",
    "hopped": "hop(ref('bid'), 'bidtime', '5  minutes', '1 hour', offset='-2 minutes')",
    "cumulated": "cumulate(ref('bid'), 'bidtime', '4 minutes', '12 minutes')",
    "sessions": "session(ref('bid'), 'bidtime', '10 minutes', partition_by=['item', 'price'])",
}


@pytest.fixture
def compiled(project):
    """The compiled SQL of one model per window TVF."""
    project.seed("bid", "bidtime,price,item\n2020-04-15 08:07:00,2,A\n")
    for name, call in CALLS.items():
        project.model(name, f"select * from {{{{ window_views.{call} }}}}")
    result = project.dbt("compile")
    return {r.node.name: r.node.compiled_code for r in result.result.results if r.node.resource_type == "model"}


def test_markers_read_back(compiled):
    assert find(compiled["hopped"]) == [
        Hop(
            "bidtime",
            size=60 * MIN,
            slide=5 * MIN,
            offset=-2 * MIN,
            texts=(("slide", "5 minutes"), ("size", "1 hour"), ("offset", "-2 minutes")),
        )
    ]
    assert find(compiled["sessions"]) == [
        Session("bidtime", gap=10 * MIN, partition_by=("item", "price"), texts=(("gap", "10 minutes"),))
    ]
    # the text table properties and docs show
    labels = {name: [w.label() for w in find(sql)] for name, sql in compiled.items()}
    assert labels == {
        "tumbled": ["tumble(time_col=bidtime, size=10 minutes, offset=-3 minutes)"],
        "hopped": ["hop(time_col=bidtime, slide=5 minutes, size=1 hour, offset=-2 minutes)"],
        "cumulated": ["cumulate(time_col=bidtime, step=4 minutes, size=12 minutes)"],
        "sessions": ["session(time_col=bidtime, gap=10 minutes, partition_by=item price)"],
    }


def test_macros_and_python_render_one_window_start(compiled):
    """The window start of each kind in the SQL dbt compiled is the expression sqlexpr.window_floor
    (which the streaming runner and the pane plans use) builds for the same window."""
    t = sqlexpr.epoch_micros(sqlexpr.column("bidtime"))
    for name, (offset, unit) in {
        "tumbled": (-3 * MIN, 10 * MIN),
        "hopped": (-2 * MIN, 5 * MIN),
        "cumulated": (0, 12 * MIN),
    }.items():
        expected = sqlexpr.window_floor(t, offset, unit)
        tree = sqlglot.parse_one(compiled[name], read="spark")
        assert any(node == expected for node in tree.find_all(type(expected))), (
            name,
            expected.sql("spark"),
            compiled[name],
        )
