"""A window's reach (design §11): the input the windows one time range owns need, for each kind.

A window is owned by the range [start, end) that holds its window_time (window_end - 1 µs), so
each window has one owner and a run range by range computes every window once, whole. The owned
windows need input from `Reach.read(owned).start` (the earliest start among them) up to `end`:
they all end at or before it. The window macros read a dbt-filtered input (a microbatch batch,
`--event-time-start/end`, `--sample`) through this widened range and keep the owned windows only.

SESSION has no bound in principle: a session's rows chain back by at most `gap` each. The read
goes back `session_lookback`, and a session whose first row lies within `gap` of the read's start
may chain to a row before it, so it is not known whole: it is not emitted.

An over window's rows are owned by the range holding their time; what its frame (or LAG, LEAD,
a rank) reads past each edge of the range is an `OverReach`: nothing, an interval, the n rows of
each partition nearest the edge, or every row on that side (over_reads.py applies them).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, ClassVar, Dict, Optional, Sequence, Tuple, Type, Union

from sqlglot import exp

from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.query.intervals import Interval
from dbt.adapters.window_views.query.windows import Cumulate, Hop, Session, Tumble, Window

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


class Edge(ABC):
    """One end of an owned range [S, E) as over windows read past it: S read back (the rows
    before it, latest first) or E read ahead (the rows from it on, earliest first). `t` is the
    row time, `time` a time as dbt writes it in its filter; `ranked` numbers the rows past the
    edge per partition, counted from the edge (one rank column per PARTITION BY, shared)."""

    def __init__(self, at: int, t: exp.Column, time: Callable[[int], exp.Expression], prefix: str) -> None:
        self.at = at
        self.t = t
        self.time = time
        self.prefix = prefix  # of its rank columns' names
        self.ranks: Dict[Tuple[str, ...], Tuple[str, exp.Expression]] = {}

    @abstractmethod
    def side(self, reach: "OverCallReach") -> "OverReach":
        """The call's reach past this edge."""

    def scan(self, reaches: Sequence["OverCallReach"]) -> Optional[int]:
        """How far past the edge the calls' rows are scanned (None: every row that side)."""
        furthest: Optional[int] = self.at
        for reach in reaches:
            furthest = self.furthest(furthest, self.side(reach).scan(self))
        return furthest

    def kept(self, reaches: Sequence["OverCallReach"]) -> exp.Expression:
        """The rows past the edge some call reads."""
        return sqlexpr.node(exp.and_(self.past(), exp.or_(*[self.side(reach).keep(self) for reach in reaches])))

    @abstractmethod
    def past(self) -> exp.Expression:
        """The rows past the edge."""

    @abstractmethod
    def moved(self, micros: int) -> int:
        """The time `micros` past the edge."""

    @abstractmethod
    def within(self, micros: int) -> exp.Expression:
        """The rows less than `micros` past the edge (from S − micros; before E + micros)."""

    @abstractmethod
    def furthest(self, a: Optional[int], b: Optional[int]) -> Optional[int]:
        """The further of two scan bounds past the edge (None: no bound)."""

    @property
    @abstractmethod
    def descending(self) -> bool:
        """Whether rows are counted from the edge in descending time."""

    def ranked(self, partition_by: Tuple[str, ...]) -> exp.Column:
        """Per partition, the rank of a row past the edge counted from it (1: the nearest; rows at
        one time share a rank, so the rows kept by rank <= n are whole ties)."""
        if partition_by not in self.ranks:
            name = f"{self.prefix}_{len(self.ranks)}"
            # the rows on either side of the edge rank apart, so one scan serves both; columns
            # qualified as `t` is (by the plugin's alias), so the call reads as the plugin's own
            partition = [sqlexpr.qualified(sqlexpr.parse(p), self.t.table) for p in partition_by] + [self.past()]
            rank = sqlexpr.window(exp.Rank(), partition, [sqlexpr.ordered(self.t, self.descending)])
            self.ranks[partition_by] = (name, rank)
        return sqlexpr.column(self.ranks[partition_by][0])


class BackEdge(Edge):
    def side(self, reach: "OverCallReach") -> "OverReach":
        return reach.back

    def past(self) -> exp.Expression:
        # a NULL time sorts before every time (ASC NULLS FIRST, design §11)
        before = exp.LT(this=self.t.copy(), expression=self.time(self.at))
        return exp.paren(exp.or_(before, exp.Is(this=self.t.copy(), expression=exp.null())), copy=False)

    def moved(self, micros: int) -> int:
        return self.at - micros

    def within(self, micros: int) -> exp.Expression:
        return exp.GTE(this=self.t.copy(), expression=self.time(self.moved(micros)))

    def furthest(self, a: Optional[int], b: Optional[int]) -> Optional[int]:
        return None if a is None or b is None else min(a, b)

    @property
    def descending(self) -> bool:
        return True


class AheadEdge(Edge):
    def side(self, reach: "OverCallReach") -> "OverReach":
        return reach.ahead

    def past(self) -> exp.Expression:
        return exp.GTE(this=self.t.copy(), expression=self.time(self.at))

    def moved(self, micros: int) -> int:
        return self.at + micros

    def within(self, micros: int) -> exp.Expression:
        return exp.LT(this=self.t.copy(), expression=self.time(self.moved(micros)))

    def furthest(self, a: Optional[int], b: Optional[int]) -> Optional[int]:
        return None if a is None or b is None else max(a, b)

    @property
    def descending(self) -> bool:
        return False


@dataclass(frozen=True)
class OverReach(ABC):
    """What an over window reads past one edge of the range, ordered by the range's time
    column, so each row of the range is computed as over all input."""

    counts_rows: ClassVar[bool] = False  # whether the rows read are counted, after the SELECT's WHERE
    scans_all: ClassVar[bool] = False  # whether every row past the edge is scanned (`scan` is None)

    @abstractmethod
    def scan(self, edge: Edge) -> Optional[int]:
        """How far past the edge the rows must be scanned (None: every row that side)."""

    @abstractmethod
    def keep(self, edge: Edge) -> exp.Expression:
        """Which of the scanned rows past the edge the window reads."""


@dataclass(frozen=True)
class NoRowsPast(OverReach):
    """A frame ending (starting) at the current row: its peers share its time, so its range."""

    def scan(self, edge: Edge) -> Optional[int]:
        return edge.at

    def keep(self, edge: Edge) -> exp.Expression:
        return exp.false()


@dataclass(frozen=True)
class IntervalPast(OverReach):
    """RANGE BETWEEN INTERVAL n PRECEDING (FOLLOWING): the rows within n of the edge."""

    micros: int

    def scan(self, edge: Edge) -> Optional[int]:
        return edge.moved(self.micros)

    def keep(self, edge: Edge) -> exp.Expression:
        return edge.within(self.micros)


@dataclass(frozen=True)
class RowsPast(OverReach):
    """ROWS n PRECEDING (FOLLOWING), LAG(x, n) (LEAD): per partition, the n rows nearest the edge
    (with their ties), wherever they lie in time, so every row before it is scanned."""

    rows: int
    partition_by: Tuple[str, ...]
    counts_rows: ClassVar[bool] = True
    scans_all: ClassVar[bool] = True

    def scan(self, edge: Edge) -> Optional[int]:
        return None

    def keep(self, edge: Edge) -> exp.Expression:
        return exp.LTE(this=edge.ranked(self.partition_by), expression=exp.Literal.number(self.rows))


@dataclass(frozen=True)
class AllPast(OverReach):
    """UNBOUNDED PRECEDING (FOLLOWING), ranking (the rows before count), NTILE: every row that side
    (the rows before S summarised per partition instead where prefix.py can, over_reads.py)."""

    scans_all: ClassVar[bool] = True

    def scan(self, edge: Edge) -> Optional[int]:
        return None

    def keep(self, edge: Edge) -> exp.Expression:
        return exp.true()


@dataclass(frozen=True)
class OverCallReach:
    """One over window call's reach: back from the range's start, ahead from its end."""

    back: OverReach
    ahead: OverReach
