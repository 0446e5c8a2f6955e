"""A window's reach (design §11): the input the windows one time range owns need, for each kind.

A window is owned by the range [start, end) that holds its window_time (window_end - 1 µs), so
each window has one owner and a run range by range computes every window once, whole. The owned
windows need input from `Reach.read(owned).start` (the earliest start among them) up to `end`:
they all end at or before it. The window macros read a dbt-filtered input (a microbatch batch,
`--event-time-start/end`, `--sample`) through this widened range and keep the owned windows only.

SESSION has no bound in principle: a session's rows chain back by at most `gap` each. The read
goes back `session_lookback`, and a session whose first row lies within `gap` of the read's start
may chain to a row before it, so it is not known whole: it is not emitted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, Optional, Type, Union

from dbt.adapters.window_views.intervals import Interval
from dbt.adapters.window_views.windows import Cumulate, Hop, Session, Tumble, Window

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICRO = timedelta(microseconds=1)


class ReachError(ValueError):
    """A window that a time range cannot own whole (a session without its lookback bound)."""


@dataclass(frozen=True)
class TimeRange:
    """[start, end) in epoch microseconds; None is unbounded on that side."""

    start: Optional[int]
    end: Optional[int]


def micros(t: datetime) -> int:
    """A datetime as epoch microseconds; a naive one is UTC, as dbt's batch times are."""
    aware = t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)
    return (aware - _EPOCH) // _MICRO


def as_datetime(value: int, like: datetime) -> datetime:
    """Epoch microseconds as a datetime in `like`'s zone (naive if it is), so it renders as dbt's do."""
    t = _EPOCH + value * _MICRO
    return t.astimezone(like.tzinfo) if like.tzinfo is not None else t.replace(tzinfo=None)


def _floor(t: int, offset: int, unit: int) -> int:
    """The latest window start at or before t: sqlexpr.window_floor (Python's % floors like pmod)."""
    return t - (t - offset) % unit


@dataclass(frozen=True)
class Reach:
    """What the windows a range owns read: the rows [read.start, read.end)."""

    def first_start(self, start: int) -> int:
        """The earliest window start among the windows whose end lies after `start`."""
        raise NotImplementedError

    def read(self, owned: TimeRange) -> TimeRange:
        first = None if owned.start is None else self.first_start(owned.start)
        return TimeRange(first, owned.end)

    def whole_from(self, read: TimeRange) -> Optional[int]:
        """The earliest window_start of a window known whole from `read` (None: every window)."""
        return None

    def before(self, start: int) -> int:
        """How far before `start` the read begins (micros)."""
        return start - self.first_start(start)


@dataclass(frozen=True)
class PeriodReach(Reach):
    """TUMBLE and CUMULATE: every window of a period (a tumbling window, a cumulate's `size`)
    starts at the period's start, so the period holding start is the earliest read (0 when start
    is a period boundary)."""

    window: Union[Tumble, Cumulate]

    def first_start(self, start: int) -> int:
        return _floor(start, self.window.offset, self.window.size)


@dataclass(frozen=True)
class HopReach(Reach):
    """The first window ending after start: size - slide before it, plus start's distance past
    the last window end (ends lie every slide at offset + size)."""

    window: Hop

    def first_start(self, start: int) -> int:
        w = self.window
        first_end = _floor(start, w.end_phase, w.slide) + w.slide
        return first_end - w.size


@dataclass(frozen=True)
class SessionReach(Reach):
    """Back `lookback`; the read goes to `end` inclusive, since a row at end would extend a
    session ending there (rows `gap` apart share a session)."""

    window: Session
    lookback: int

    def first_start(self, start: int) -> int:
        return start - self.lookback

    def read(self, owned: TimeRange) -> TimeRange:
        read = super().read(owned)
        return TimeRange(read.start, None if owned.end is None else owned.end + 1)

    def whole_from(self, read: TimeRange) -> Optional[int]:
        return None if read.start is None else read.start + self.window.gap


_REACHES: Dict[Type[Window], Callable[[Any], Reach]] = {Tumble: PeriodReach, Hop: HopReach, Cumulate: PeriodReach}


def reach_of(window: Window, session_lookback: Optional[Interval] = None) -> Reach:
    """The reach of a window TVF; a session needs `session_lookback`, at least its gap."""
    if not isinstance(window, Session):
        return _REACHES[type(window)](window)
    if session_lookback is None:
        raise ReachError(
            "argument 'session_lookback' is required when dbt filters the input to a time range "
            "(a microbatch batch, --event-time-start/end or --sample), since a session may start any time "
            "before the range; fix: pass session_lookback (or set it as the model's config) to the longest "
            "session plus the gap, e.g. '1 day'"
        )
    if session_lookback.micros < window.gap:
        raise ReachError(
            f"argument 'session_lookback' = '{session_lookback}' is shorter than the gap "
            f"'{dict(window.texts).get('gap', window.gap)}', so no session reaching before the range could be "
            "known whole; fix: use the longest session plus the gap"
        )
    return SessionReach(window, session_lookback.micros)
