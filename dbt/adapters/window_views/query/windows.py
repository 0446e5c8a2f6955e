"""The four window kinds as types: `Tumble`, `Hop`, `Cumulate` and `Session`, each with its own
arithmetic in epoch microseconds (the end of the first and of the last window holding a row
time, lateness, the latest window end at or before a time) and its label. The TVF marker's
parser (tvf.find) builds them; the pane plans (panes.py) and the streaming plan use them.

The window SQL is built as sqlglot expressions (sqlexpr.window_floor); the macros render the
same expressions, as templates made from them (rules.py, macros/_internal/_rules.sql). The rules a
window's arguments keep (a hop's slide at most its size, a cumulate's size a multiple of its step)
are `check_slide` and `check_step`, which the macros' argument checks call (macro_arguments.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, List, Optional, Protocol, Tuple

from sqlglot import exp

from dbt.adapters.window_views.errors import MacroArgumentError
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.query.intervals import Interval


class WindowArgument(Protocol):
    """A window macro's argument as the checks below read it (macro_arguments.MacroArgument)."""

    @property
    def name(self) -> str: ...

    @property
    def value(self) -> Any: ...

    def interval(self, signed: bool = False) -> Interval: ...


class WindowKind(str, Enum):
    """A window TVF's kind, as the macros and the marker name it."""

    def __str__(self) -> str:
        return self.value

    TUMBLE = "tumble"
    HOP = "hop"
    CUMULATE = "cumulate"
    SESSION = "session"


def check_slide(slide: WindowArgument, size: WindowArgument) -> None:
    """A hop's slide is at most its size: a larger one leaves rows between windows in none."""
    if slide.interval().micros > size.interval().micros:
        raise MacroArgumentError(
            f"{slide} = '{slide.value}' is larger than '{size.name}' = '{size.value}': the rows between two "
            "windows would be in no window; fix: use a slide of at most the size (slide = size is a tumbling window)"
        )


def check_step(step: WindowArgument, size: WindowArgument) -> None:
    """A cumulate's size is a whole number of its steps: its windows end every step until the size."""
    if size.interval().micros % step.interval().micros:
        raise MacroArgumentError(
            f"{size} = '{size.value}' must be a multiple of '{step.name}' = '{step.value}'; "
            "fix: make size a whole number of steps"
        )


def _number(value: int) -> exp.Expression:
    return exp.Literal.number(value)


class Via(str, Enum):
    """How a window's rows are computed other than by expanding each row into its windows."""

    WINDOW_AGGREGATE = "window_aggregate"  # from panes, with `group_by` and `measures`


@dataclass(frozen=True)
class Window:
    """A window TVF over `time_col`; intervals in microseconds. `via` is set when the windows are
    computed from panes (with `group_by` and `measures`, alias -> aggregate)."""

    kind: ClassVar[WindowKind]
    ARGUMENTS: ClassVar[Tuple[str, ...]]  # the interval arguments, in the macro's (and label's) order

    time_col: str
    texts: Tuple[Tuple[str, str], ...] = field(default=(), kw_only=True)  # (argument, interval as written)
    via: Optional[Via] = field(default=None, kw_only=True)
    group_by: Tuple[str, ...] = field(default=(), kw_only=True)
    measures: Tuple[Tuple[str, str], ...] = field(default=(), kw_only=True)

    @property
    def span(self) -> int:
        """The longest a window of this kind can be (SESSION: unbounded, so 0)."""
        return 0

    def label(self) -> str:
        """The window as its call reads, for table properties and docs:
        `hop(time_col=ts, slide=5 minutes, size=10 minutes)`."""
        args = [f"time_col={self.time_col}", *(f"{name}={text}" for name, text in self.texts)]
        return f"{self.kind}({', '.join(args)})"

    def columns(self) -> List[Tuple[str, str]]:
        """The columns the window's arguments name: (argument, column)."""
        return [("time_col", self.time_col)]

    def same_bounds(self, other: Window) -> bool:
        """Whether `other` puts every time in the same windows (whatever its columns and texts)."""
        return type(other) is type(self) and self._grid() == other._grid()

    def _grid(self) -> Tuple[int, ...]:
        raise NotImplementedError

    def first_end_sql(self, t: exp.Expression) -> exp.Expression:
        """The end of the earliest-closing window that holds t (epoch micros)."""
        raise NotImplementedError

    def last_end_sql(self, t: exp.Expression) -> Optional[exp.Expression]:
        """The end of the last window that holds t; None when later rows decide it (SESSION)."""
        raise NotImplementedError

    def late_sql(self, t: exp.Expression, watermark: int) -> exp.Expression:
        """The row arrives for a window the watermark has already closed."""
        return exp.paren(exp.LTE(this=self.first_end_sql(t), expression=_number(watermark)))

    def end_at_or_before(self, t: int) -> Optional[int]:
        """The latest window end at or before t (micros); None when the ends follow the rows."""
        raise NotImplementedError

    def last_end_at(self, t: int) -> int:
        """The end of the last window holding t (micros); a session's if t is its last row."""
        raise NotImplementedError

    # SQL text for the streaming modules, which splice it into their own queries
    def first_end(self, t: str) -> str:
        return sqlexpr.to_sql(self.first_end_sql(sqlexpr.parse(t)))

    def last_end(self, t: str) -> Optional[str]:
        end = self.last_end_sql(sqlexpr.parse(t))
        return None if end is None else sqlexpr.to_sql(end)

    def late(self, t: str, watermark: int) -> str:
        return sqlexpr.to_sql(self.late_sql(sqlexpr.parse(t), watermark))


@dataclass(frozen=True)
class Tumble(Window):
    kind: ClassVar[WindowKind] = WindowKind.TUMBLE
    ARGUMENTS: ClassVar[Tuple[str, ...]] = ("size", "offset")

    size: int = field(kw_only=True)
    offset: int = field(default=0, kw_only=True)

    @property
    def span(self) -> int:
        return self.size

    def _grid(self) -> Tuple[int, ...]:
        return (self.size, self.offset)

    def start_sql(self, t: exp.Expression) -> exp.Expression:
        """The start of the window holding t."""
        return sqlexpr.window_floor(t, self.offset, self.size)

    def first_end_sql(self, t: exp.Expression) -> exp.Expression:
        return exp.paren(self.start_sql(t) + _number(self.size))

    def last_end_sql(self, t: exp.Expression) -> Optional[exp.Expression]:
        return self.first_end_sql(t)

    def end_at_or_before(self, t: int) -> Optional[int]:
        return t - (t - self.offset) % self.size

    def last_end_at(self, t: int) -> int:
        return t - (t - self.offset) % self.size + self.size

    def as_hop(self) -> Hop:
        """The same windows as a HOP whose slide is its size (one pane per window)."""
        return Hop(self.time_col, slide=self.size, size=self.size, offset=self.offset)


@dataclass(frozen=True)
class Hop(Window):
    kind: ClassVar[WindowKind] = WindowKind.HOP
    ARGUMENTS: ClassVar[Tuple[str, ...]] = ("slide", "size", "offset")

    slide: int = field(kw_only=True)
    size: int = field(kw_only=True)
    offset: int = field(default=0, kw_only=True)

    @property
    def span(self) -> int:
        return self.size

    @property
    def pane(self) -> int:
        """The pane: every window is a whole number of them, and a window starts at a pane."""
        return math.gcd(self.size, self.slide)

    @property
    def end_phase(self) -> int:
        """Window ends lie every slide at offset + size (mod slide)."""
        return self.offset + self.size

    def _grid(self) -> Tuple[int, ...]:
        return (self.size, self.slide, self.offset)

    def first_end_sql(self, t: exp.Expression) -> exp.Expression:
        # the latest window start at or before t, less the slides back to the first window holding t
        last_start = sqlexpr.window_floor(t, self.offset, self.slide)
        behind = exp.paren(last_start.copy() - t.copy() + _number(self.size - 1))
        back = exp.Floor(this=exp.Div(this=behind, expression=_number(self.slide)))
        back_slides = exp.Mul(this=_number(self.slide), expression=exp.cast(back, "bigint"))
        return exp.paren(last_start - back_slides + _number(self.size))

    def last_end_sql(self, t: exp.Expression) -> Optional[exp.Expression]:
        return exp.paren(sqlexpr.window_floor(t, self.offset, self.slide) + _number(self.size))

    def end_at_or_before(self, t: int) -> Optional[int]:
        return t - (t - self.end_phase) % self.slide

    def last_end_at(self, t: int) -> int:
        return t - (t - self.offset) % self.slide + self.size


@dataclass(frozen=True)
class Cumulate(Window):
    kind: ClassVar[WindowKind] = WindowKind.CUMULATE
    ARGUMENTS: ClassVar[Tuple[str, ...]] = ("step", "size", "offset")

    step: int = field(kw_only=True)
    size: int = field(kw_only=True)  # the largest window: a period's
    offset: int = field(default=0, kw_only=True)

    @property
    def span(self) -> int:
        return self.size

    def _grid(self) -> Tuple[int, ...]:
        return (self.size, self.step, self.offset)

    def period_sql(self, t: exp.Expression) -> exp.Expression:
        """The start of t's period, the start of every window holding t."""
        return sqlexpr.window_floor(t, self.offset, self.size)

    def first_end_sql(self, t: exp.Expression) -> exp.Expression:
        return exp.paren(sqlexpr.window_floor(t, self.offset, self.step) + _number(self.step))

    def last_end_sql(self, t: exp.Expression) -> Optional[exp.Expression]:
        return exp.paren(self.period_sql(t) + _number(self.size))

    def end_at_or_before(self, t: int) -> Optional[int]:
        return t - (t - self.offset) % self.step

    def last_end_at(self, t: int) -> int:
        return t - (t - self.offset) % self.size + self.size


@dataclass(frozen=True)
class Session(Window):
    kind: ClassVar[WindowKind] = WindowKind.SESSION
    ARGUMENTS: ClassVar[Tuple[str, ...]] = ("gap",)

    gap: int = field(kw_only=True)
    partition_by: Tuple[str, ...] = field(default=(), kw_only=True)

    def label(self) -> str:
        base = super().label()
        if not self.partition_by:
            return base
        return f"{base[:-1]}, partition_by={' '.join(self.partition_by)})"

    def columns(self) -> List[Tuple[str, str]]:
        return [*super().columns(), *(("partition_by", key) for key in self.partition_by)]

    def _grid(self) -> Tuple[int, ...]:
        return (self.gap,)

    def last_end_sql(self, t: exp.Expression) -> Optional[exp.Expression]:
        return None

    def late_sql(self, t: exp.Expression, watermark: int) -> exp.Expression:
        # a row at or before the watermark could extend a closed session: late too
        return exp.paren(exp.LTE(this=t.copy(), expression=_number(watermark)))

    def end_at_or_before(self, t: int) -> Optional[int]:
        return None

    def last_end_at(self, t: int) -> int:
        return t + self.gap
