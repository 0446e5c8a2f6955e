"""The window arithmetic the streaming runner decides lateness and eviction with, evaluated by
Spark and checked against windows enumerated by brute force (offsets, pre-1970 times, gaps)."""

import random

import pytest

from dbt.adapters.window_views.tvf import WindowTvf, find

MIN = 60_000_000


def windows(w: WindowTvf, t: int):
    """Every [start, end) of the TVF holding t, enumerated from its definition."""
    if w.kind == "tumble":
        start = (t - w.offset) // w.size * w.size + w.offset
        return [(start, start + w.size)]
    if w.kind == "hop":
        base = (t - w.offset) // w.slide * w.slide + w.offset
        return [(s, s + w.size) for s in range(base - (w.size // w.slide + 1) * w.slide, base + w.slide, w.slide) if s <= t < s + w.size]
    period = (t - w.offset) // w.size * w.size + w.offset
    return [(period, e) for e in range(period + w.slide, period + w.size + 1, w.slide) if e > t]


SPECS = [
    WindowTvf("tumble", "ts", size=10 * MIN),
    WindowTvf("tumble", "ts", size=10 * MIN, offset=-3 * MIN),
    WindowTvf("hop", "ts", size=10 * MIN, slide=3 * MIN, offset=1 * MIN),
    WindowTvf("hop", "ts", size=2 * MIN, slide=5 * MIN),  # gaps between windows
    WindowTvf("hop", "ts", size=60 * MIN, slide=5 * MIN),
    WindowTvf("cumulate", "ts", size=12 * MIN, slide=4 * MIN, offset=7 * MIN),
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.kind}-{s.size}-{s.slide}-{s.offset}")
def test_first_and_last_window_end(spark, spec):
    rng = random.Random(7)
    times = [rng.randrange(-5 * 10**13, 5 * 10**13) for _ in range(300)] + [0, -1, spec.offset, spec.size]
    sql = ", ".join(
        f"named_struct('holds', {spec.holds(str(t))}, 'first', {spec.first_end(str(t))}, 'last', {spec.last_end(str(t))})"
        for t in times
    )
    row = spark.sql(f"select array({sql})").first()[0]
    for t, got in zip(times, row):
        expected = windows(spec, t)
        assert got["holds"] == bool(expected), t
        if expected:
            assert (got["first"], got["last"]) == (min(e for _, e in expected), max(e for _, e in expected)), t


def test_markers_read_back():
    sql = (
        "/* window_views.hop(time_col=bidtime, slide=5 minutes, size=1 hour, offset=-2 minutes) */ "
        "/* window_views.session(time_col=ts, gap=10 minutes, partition_by=a b) */"
    )
    assert find(sql) == [
        WindowTvf("hop", "bidtime", size=60 * MIN, slide=5 * MIN, offset=-2 * MIN),
        WindowTvf("session", "ts", gap=10 * MIN, partition_by=("a", "b")),
    ]
