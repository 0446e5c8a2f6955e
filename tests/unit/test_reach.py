"""reach.py against brute force: for random windows (offsets, sizes that are no multiple of the
slide, times before 1970) the read starts at the earliest start of a window ending after the
range's start; filtered_reads renders the widened filter and the owned windows as dbt would."""

import random
from datetime import datetime, timedelta, timezone

import pytest
from dbt.adapters.base.relation import EventTimeFilter
from dbt.adapters.spark.relation import SparkRelation
from dbt_common.exceptions import CompilationError

from dbt.adapters.window_views.kinds.reach import ReachError, TimeRange, as_datetime, micros, reach_of
from dbt.adapters.window_views.plans.filtered_reads import window_read
from dbt.adapters.window_views.query.intervals import Interval
from dbt.adapters.window_views.query.windows import Cumulate, Hop, Session, Tumble, Window

MIN = 60_000_000
HOUR = 60 * MIN
DAY = 24 * HOUR


def windows_near(window: Window, t: int) -> list:
    """Every window (start, end) with an end within three sizes of t, enumerated."""
    if isinstance(window, Tumble):
        return windows_near(Hop(window.time_col, slide=window.size, size=window.size, offset=window.offset), t)
    if isinstance(window, Hop):
        k0 = (t - window.offset) // window.slide
        starts = [window.offset + k * window.slide for k in range(k0 - 3 * window.size // window.slide - 3, k0 + 4)]
        return [(s, s + window.size) for s in starts]
    assert isinstance(window, Cumulate)
    k0 = (t - window.offset) // window.size
    periods = [window.offset + k * window.size for k in range(k0 - 3, k0 + 4)]
    return [(p, p + j * window.step) for p in periods for j in range(1, window.size // window.step + 1)]


def random_window(rng: random.Random) -> Window:
    offset = rng.choice([0, rng.randrange(-DAY, DAY)])
    unit = rng.choice([MIN, 7 * MIN, HOUR, 5 * HOUR])
    kind = rng.choice(["tumble", "hop", "cumulate"])
    if kind == "tumble":
        return Tumble("ts", size=unit * rng.randint(1, 5), offset=offset)
    if kind == "hop":
        return Hop(
            "ts", slide=unit, size=unit * rng.randint(1, 5) + rng.choice([0, rng.randrange(unit)]), offset=offset
        )
    return Cumulate("ts", step=unit, size=unit * rng.randint(1, 6), offset=offset)


@pytest.mark.parametrize("seed", range(4))
def test_the_read_starts_at_the_first_owned_window(seed):
    rng = random.Random(seed)
    for _ in range(300):
        window = random_window(rng)
        # times around 1970 and long before it
        start = rng.choice([0, -DAY, -40 * 365 * DAY, 20 * 365 * DAY]) + rng.randrange(-3 * DAY, 3 * DAY)
        end = start + rng.choice([HOUR, DAY, 3 * DAY])
        read = reach_of(window).read(TimeRange(start, end))
        owned = [(s, e) for s, e in windows_near(window, start) if start < e]
        assert read == TimeRange(min(s for s, _ in owned), end), window
        # whatever the range owns (window_end in (start, end]) lies inside the read
        assert all(read.start <= s and e <= end for s, e in owned if e <= end)
        assert 0 <= reach_of(window).before(start) < window.size + getattr(window, "slide", 0)


def test_the_reach_of_each_kind():
    assert reach_of(Tumble("ts", size=DAY)).before(5 * DAY) == 0
    assert reach_of(Tumble("ts", size=7 * HOUR, offset=HOUR)).before(DAY) == 2 * HOUR  # windows start 22:00
    assert reach_of(Hop("ts", slide=5 * MIN, size=HOUR)).before(DAY) == 55 * MIN
    assert reach_of(Hop("ts", slide=2 * HOUR, size=5 * HOUR)).before(DAY) == 4 * HOUR  # ends at odd hours
    assert reach_of(Cumulate("ts", step=HOUR, size=DAY)).before(DAY + 5 * HOUR) == 5 * HOUR
    assert reach_of(Cumulate("ts", step=HOUR, size=DAY, offset=HOUR)).before(DAY) == 23 * HOUR


def test_a_session_reads_back_its_lookback_and_drops_what_may_be_cut():
    session = Session("ts", gap=30 * MIN)
    reach = reach_of(session, Interval.parse("1 day"))
    read = reach.read(TimeRange(10 * DAY, 11 * DAY))
    # to the end inclusive: a row at the end would extend a session ending there
    assert read == TimeRange(9 * DAY, 11 * DAY + 1)
    assert reach.whole_from(read) == 9 * DAY + 30 * MIN
    with pytest.raises(ReachError, match="'session_lookback' is required"):
        reach_of(session)
    with pytest.raises(ReachError, match="'10 minutes' is shorter than the gap"):
        reach_of(session, Interval.parse("10 minutes"))


def test_times_round_trip_in_their_zone():
    for t in [datetime(1969, 12, 31, 23, 59, 59, 999999), datetime(1900, 1, 1), datetime(2024, 1, 2, 3, 4, 5, 6)]:
        aware = t.replace(tzinfo=timezone.utc)
        assert as_datetime(micros(t), t) == t
        assert as_datetime(micros(aware), aware) == aware
    assert micros(datetime(1970, 1, 1, tzinfo=timezone(timedelta(hours=2)))) == -2 * HOUR


def relation(start: datetime, end: datetime, field: str = "`ts`") -> SparkRelation:
    return SparkRelation.create(
        schema="s",
        identifier="events",
        event_time_filter=EventTimeFilter(field_name=field, start=start, end=end),
    )


def spec(**window) -> dict:
    return {"kind": "hop", "time_col": "ts", "offset_us": 0, "text": {}, **window}


def test_the_read_and_the_owned_windows_render_as_dbt_filters():
    start, end = datetime(2024, 1, 2, tzinfo=timezone.utc), datetime(2024, 1, 3, tzinfo=timezone.utc)
    read = window_read(relation(start, end), spec(slide_us=2 * HOUR, size_us=5 * HOUR), "hop", None)
    assert read == {
        # compared as a timestamp: a string bound Spark would cast to a DATE column's type
        "relation": "(select * from s.events where cast(`ts` as timestamp) >= '2024-01-01 20:00:00+00:00' and "
        "cast(`ts` as timestamp) < '2024-01-03 00:00:00+00:00')",
        "owned": "`window_time` >= '2024-01-02 00:00:00+00:00' and `window_time` < '2024-01-03 00:00:00+00:00'",
    }
    session = {"kind": "session", "time_col": "ts", "gap_us": HOUR, "partition_by": [], "text": {"gap": "1 hour"}}
    read = window_read(relation(start, end), session, "session", "2 days")
    assert "cast(`ts` as timestamp) < '2024-01-03 00:00:00.000001+00:00'" in str(read["relation"])
    assert str(read["owned"]).endswith(" and `window_start` >= '2023-12-31 01:00:00+00:00'")


def test_a_window_over_another_column_than_the_filter_is_refused():
    start, end = datetime(2024, 1, 2), datetime(2024, 1, 3)
    with pytest.raises(CompilationError, match="event_time 'loaded_at', but the window's time_col is 'ts'"):
        window_read(relation(start, end, "loaded_at"), spec(slide_us=HOUR, size_us=HOUR), "hop", None)
    with pytest.raises(CompilationError, match="argument 'session_lookback'"):
        window_read(
            relation(start, end), {**spec(gap_us=HOUR), "kind": "session", "partition_by": []}, "session", "1 week"
        )
