"""Pure-Python reference implementations of the window semantics, written from the spec
(Flink FLIP-145 window TVFs; RisingWave-style emit-on-window-close), not from the macros.

Times are integers: microseconds since 1970-01-01 00:00:00 UTC (negative before the epoch);
None is a NULL time. Every window is a half-open interval [start, end) in the same unit.
"""

from __future__ import annotations

import datetime as dt
import random
from collections import defaultdict
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from tests.support.dbt_projects import sources_yml

SECOND = 1_000_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR
UNITS = (("day", DAY), ("hour", HOUR), ("minute", MINUTE), ("second", SECOND))
EPOCH = dt.datetime(1970, 1, 1)

Window = Tuple[int, int]


# ---------------------------------------------------------------------------------------------
# time helpers


def micros(value: dt.datetime) -> int:
    delta = value - EPOCH
    return (delta.days * 86400 + delta.seconds) * SECOND + delta.microseconds


def to_datetime(us: int) -> dt.datetime:
    return EPOCH + dt.timedelta(microseconds=us)


def sql_timestamp(us: Optional[int]) -> str:
    """A Spark/DuckDB timestamp literal for epoch micros (NULL for None)."""
    if us is None:
        return "CAST(NULL AS TIMESTAMP)"
    return f"TIMESTAMP '{to_datetime(us).isoformat(sep=' ', timespec='microseconds')}'"


def interval_text(us: int, rng: Optional[random.Random] = None) -> str:
    """'<n> <unit>' for a whole number of seconds, signed; a random unit that divides it if rng."""
    assert us % SECOND == 0, us
    sign = "-" if us < 0 else ""
    magnitude = abs(us)
    fitting = [(name, size) for name, size in UNITS if magnitude % size == 0]
    name, size = rng.choice(fitting) if rng else fitting[0]
    n = magnitude // size
    plural = "s" if n != 1 else ""
    return f"{sign}{n} {name}{plural}"


# ---------------------------------------------------------------------------------------------
# window TVFs: which windows hold a time t


def _contains(window: Window, t: int) -> bool:
    return window[0] <= t < window[1]


def _latest_start(t: int, period: int, offset: int) -> int:
    """The greatest s with s ≡ offset (mod period) and s <= t (true floor, any sign)."""
    s = t - (t - offset) % period  # Python's % has the sign of the divisor: always in [0, period)
    assert s <= t < s + period and (s - offset) % period == 0
    return s


def tumble_windows(t: Optional[int], size: int, offset: int = 0) -> List[Window]:
    if t is None:
        return []
    start = _latest_start(t, size, offset)
    window = (start, start + size)
    assert _contains(window, t)
    return [window]


def hop_windows(t: Optional[int], slide: int, size: int, offset: int = 0) -> List[Window]:
    """Every [s, s + size) with s ≡ offset (mod slide) that holds t."""
    if t is None:
        return []
    windows = []
    s = _latest_start(t, slide, offset)
    # walk back over the starts; past the first one whose window ends at or before t, none hold t
    while s + size > t:
        windows.append((s, s + size))
        s -= slide
    assert all(_contains(w, t) for w in windows)
    # brute-force cross-check over a generous range of starts
    lo = _latest_start(t - size - slide, slide, offset)
    brute = [(x, x + size) for x in range(lo, t + 1, slide) if _contains((x, x + size), t)]
    assert sorted(windows) == brute, (t, slide, size, offset)
    return sorted(windows)


def cumulate_windows(t: Optional[int], step: int, size: int, offset: int = 0) -> List[Window]:
    """Windows [start, start + k*step), k = 1..size/step, start aligned to size, that hold t."""
    if t is None:
        return []
    assert size % step == 0
    start = _latest_start(t, size, offset)
    windows = [(start, start + k * step) for k in range(1, size // step + 1)]
    return [w for w in windows if _contains(w, t)]


def session_windows(
    rows: Sequence[Dict[str, Any]],
    time_key: str,
    gap: int,
    partition_keys: Sequence[str] = (),
    merge_touching: bool = True,
) -> Dict[Any, Window]:
    """Row id -> its session [first time, last time + gap), per partition (NULL key = one
    partition of its own). Each row opens [t, t + gap); overlapping windows merge, and with
    merge_touching (Flink's TimeWindow.intersects, the project's choice) so do windows that only
    touch: a new session starts where t - previous t > gap (>= gap without merge_touching)."""
    partitions: Dict[tuple, List[Tuple[int, Any]]] = defaultdict(list)
    for row in rows:
        if row[time_key] is not None:
            partitions[tuple(row[k] for k in partition_keys)].append((row[time_key], row["id"]))
    out: Dict[Any, Window] = {}
    for members in partitions.values():
        members.sort()
        sessions: List[List[Tuple[int, Any]]] = []
        previous = None
        for t, rid in members:
            if previous is None or t - previous > gap or (t - previous == gap and not merge_touching):
                sessions.append([])
            sessions[-1].append((t, rid))
            previous = t
        for session in sessions:
            window = (session[0][0], session[-1][0] + gap)
            for t, rid in session:
                assert _contains(window, t)
                out[rid] = window
    return out


def explode(rows: Sequence[Dict[str, Any]], windows_of) -> List[Tuple[Dict[str, Any], Window]]:
    """(row, window) for every window `windows_of(row)` returns."""
    return [(row, w) for row in rows for w in windows_of(row)]


def aggregate(exploded: Iterable[Tuple[Dict[str, Any], Window]], key: Optional[str], value: str) -> List[tuple]:
    """Per (key, window_start, window_end): count(*), count(v), sum(v), min(v), max(v) with SQL
    NULL rules, sorted. No key: one group per window, with key None."""
    groups: Dict[tuple, List[Any]] = defaultdict(list)
    for row, (start, end) in exploded:
        groups[(row[key] if key else None, start, end)].append(row[value])
    out = []
    for (k, start, end), values in groups.items():
        present = [x for x in values if x is not None]
        out.append(
            (
                k,
                start,
                end,
                len(values),
                len(present),
                sum(present) if present else None,
                min(present) if present else None,
                max(present) if present else None,
            )
        )
    return sorted(out, key=sort_key)


def sort_key(row: Sequence[Any]) -> tuple:
    """Orders tuples holding NULLs (None first) and mixed types."""
    return tuple((x is not None, x) for x in row)


# ---------------------------------------------------------------------------------------------
# emit on window close: which over-window rows the watermark W has closed


def watermark(times: Iterable[Optional[int]], delay: int) -> Optional[int]:
    seen = [t for t in times if t is not None]
    return max(seen) - delay if seen else None


def closed_rows(
    rows: Sequence[Dict[str, Any]],
    time_key: str,
    w: Optional[int],
    partition_keys: Sequence[str],
    rows_ahead: int = 0,
    range_ahead: int = 0,
    nulls_last: bool = False,
) -> set:
    """Ids of rows whose over-window value is final at watermark w: t <= w; with rows_ahead n,
    the n-th following row of the partition (ordered by time ascending, NULL times first or
    last, then id) exists and its time <= w; with range_ahead d, t + d <= w."""
    if w is None:
        return set()
    partitions: Dict[tuple, List[Dict[str, Any]]] = defaultdict(list)
    for row in rows:
        partitions[tuple(row[k] for k in partition_keys)].append(row)
    closed = set()
    for members in partitions.values():
        members.sort(key=lambda r: ((r[time_key] is None) == nulls_last, r[time_key] or 0, r["id"]))
        for i, row in enumerate(members):
            t = row[time_key]
            if t is None or t > w or t + range_ahead > w:
                continue
            if rows_ahead:
                j = i + rows_ahead
                if j >= len(members) or members[j][time_key] is None or members[j][time_key] > w:
                    continue
            closed.add(row["id"])
    return closed


# ---------------------------------------------------------------------------------------------
# random data


def random_events(rng: random.Random, n: int, keys: Sequence[str] = ("a", "b", "c")) -> List[Dict[str, Any]]:
    """Rows {id, k, v, ts}: times clustered across the epoch (many on whole minutes, some with
    sub-second parts), a dense 2020 cluster, far times 1900..2100, duplicated times (ties) and
    NULL times; NULL keys and NULL values."""
    around_epoch = (-3 * HOUR, 3 * HOUR)
    y2020 = micros(dt.datetime(2020, 4, 15))
    far = (micros(dt.datetime(1900, 1, 1)), micros(dt.datetime(2100, 1, 1)))
    rows: List[Dict[str, Any]] = []
    for i in range(n):
        roll = rng.random()
        if roll < 0.40:
            t = rng.randrange(*around_epoch)
            t -= t % (MINUTE if rng.random() < 0.5 else SECOND)
            if rng.random() < 0.15:
                t += rng.randrange(SECOND)  # sub-second part (also negative times: -0.5 s)
        elif roll < 0.60:
            t = y2020 + rng.randrange(2 * DAY)
            t -= t % (MINUTE if rng.random() < 0.5 else SECOND)
        elif roll < 0.72:
            t = rng.randrange(*far)
            t -= t % SECOND
        elif roll < 0.90 and rows:
            t = rng.choice(rows)["ts"]  # a tie (or another NULL)
        else:
            t = None
        rows.append(
            {
                "id": i + 1,
                "k": rng.choice(keys) if rng.random() > 0.06 else None,
                "v": rng.randint(-50, 100) if rng.random() > 0.1 else None,
                "ts": t,
            }
        )
    return rows


def values_sql(rows: Sequence[Dict[str, Any]]) -> str:
    """`select ... from values ...` (Spark and DuckDB) producing rows as (id int, k string, v int,
    ts timestamp), with exact microsecond times."""

    def lit(row: Dict[str, Any]) -> str:
        k = "CAST(NULL AS STRING)" if row["k"] is None else f"'{row['k']}'"
        v = "CAST(NULL AS INT)" if row["v"] is None else f"CAST({row['v']} AS INT)"
        return f"(CAST({row['id']} AS INT), {k}, {v}, {sql_timestamp(row['ts'])})"

    return "select * from values " + ", ".join(lit(r) for r in rows) + " as ev(id, k, v, ts)"


def random_dense_events(rng: random.Random, n: int, start: int, span: int) -> List[Dict[str, Any]]:
    """Rows {id, k, v, ts} with times in [start, start + span) (mostly on whole minutes), ties,
    NULL times, NULL keys and values: data a watermark cuts through."""
    rows: List[Dict[str, Any]] = []
    for i in range(n):
        roll = rng.random()
        if roll < 0.75 or not rows:
            t = start + rng.randrange(span)
            t -= (t - start) % (MINUTE if rng.random() < 0.7 else SECOND)
        elif roll < 0.92:
            t = rng.choice(rows)["ts"]
        else:
            t = None
        rows.append(
            {
                "id": i + 1,
                "k": rng.choice("ab") if rng.random() > 0.05 else None,
                "v": rng.randint(-20, 50) if rng.random() > 0.1 else None,
                "ts": t,
            }
        )
    return rows


# the test projects read their input as a dbt source in their own schema
SOURCES_YML = sources_yml("ev")
