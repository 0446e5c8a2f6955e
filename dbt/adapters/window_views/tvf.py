"""A model's window TVF, read back from the marker comment its macro rendered, and the window
arithmetic the streaming runner needs: for a row time t, the end of the first and of the last
window holding it (a row is late when its first window is closed, and can be forgotten when its
last one is)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple

from dbt.adapters.window_views.intervals import Interval

MARKER = re.compile(r"/\* window_views\.(tumble|hop|cumulate|session)\(([^*]*)\) \*/")
_ARG = re.compile(r"(\w+)=([^,]*)")


@dataclass(frozen=True)
class WindowTvf:
    kind: str  # tumble | hop | cumulate | session
    time_col: str
    size: int = 0  # micros; CUMULATE: the max size; SESSION: unused
    slide: int = 0  # HOP slide, CUMULATE step
    offset: int = 0
    gap: int = 0  # SESSION
    partition_by: Tuple[str, ...] = ()

    @property
    def span(self) -> int:
        """The longest a window of this kind can be (SESSION: unbounded, so 0)."""
        return self.size

    def describe(self) -> str:
        return f"{self.kind}({self.time_col})"

    def _floor(self, t: str, unit: int) -> str:
        return f"({t} - pmod({t} - {self.offset}, {unit}))"

    def holds(self, t: str) -> str:
        """SQL: whether any window holds time t (HOP windows smaller than their slide leave gaps)."""
        if self.kind == "hop":
            return f"({self._floor(t, self.slide)} + {self.size} > {t})"
        return "true"

    def first_end(self, t: str) -> str:
        """SQL: the end of the earliest-closing window that holds t (micros)."""
        if self.kind == "tumble":
            return f"({self._floor(t, self.size)} + {self.size})"
        if self.kind == "hop":
            last_start = self._floor(t, self.slide)
            back = f"floor(({last_start} - {t} + {self.size - 1}) / {self.slide})"
            return f"({last_start} - {self.slide} * cast({back} as bigint) + {self.size})"
        if self.kind == "cumulate":
            return f"({self._floor(t, self.slide)} + {self.slide})"
        return f"({t} + {self.gap})"

    def last_end(self, t: str) -> Optional[str]:
        """SQL: the end of the last window that holds t; None for SESSION (it depends on later rows)."""
        if self.kind == "tumble":
            return self.first_end(t)
        if self.kind == "hop":
            return f"({self._floor(t, self.slide)} + {self.size})"
        if self.kind == "cumulate":
            return f"({self._floor(t, self.size)} + {self.size})"
        return None

    def late(self, t: str, watermark: int) -> str:
        """SQL: the row arrives for a window the watermark has already closed. A SESSION row at or
        before the watermark could extend a closed session, so it is late too."""
        if self.kind == "session":
            return f"({t} <= {watermark})"
        # a row in no window (a gap between HOP windows) changes nothing: never late
        return f"({self.holds(t)} and {self.first_end(t)} <= {watermark})"


def _micros(args: dict, key: str, marker: str, default: Optional[str] = None) -> int:
    text = args.get(key, default)
    if text is None:
        raise ValueError(f"marker `{marker}` has no {key}")
    return Interval.parse(text, allow_negative=True, allow_zero=True).micros


def find(sql: str) -> list:
    """Every window TVF of the compiled SQL, in order."""
    found = []
    for kind, raw in MARKER.findall(sql):
        args = {k: v.strip() for k, v in _ARG.findall(raw)}
        marker = f"{kind}({raw})"
        common = {"kind": kind, "time_col": args["time_col"], "offset": _micros(args, "offset", marker, "0 seconds")}
        if kind == "tumble":
            found.append(WindowTvf(size=_micros(args, "size", marker), **common))
        elif kind == "hop":
            found.append(WindowTvf(size=_micros(args, "size", marker), slide=_micros(args, "slide", marker), **common))
        elif kind == "cumulate":
            found.append(WindowTvf(size=_micros(args, "size", marker), slide=_micros(args, "step", marker), **common))
        else:
            keys = tuple(args.get("partition_by", "").split())
            found.append(WindowTvf(kind="session", time_col=args["time_col"], gap=_micros(args, "gap", marker), partition_by=keys))
    return found
