"""A model's window TVFs, read back from the markers their macros render, and the window
arithmetic the streaming runner needs: for a row time t, the end of the first and of the last
window holding it (a row is late when its first window is closed, and can be forgotten when its
last one is).

The marker is the one channel from the TVF macros to Python. Each of tumble, hop, cumulate and
session renders, first thing in its subquery (macros/_internal/tvf_marker.sql), one comment:

    /* window_views:tvf:v1 {"kind": "hop", "time_col": "ts", "slide_us": 300000000,
       "size_us": 600000000, "offset_us": 0, "text": {"slide": "5 minutes", "size": "10 minutes"}} */

on one line: `window_views:tvf:` and a version, a space, a JSON object, a space. Version v1's
keys: `kind` (tumble | hop | cumulate | session), `time_col` (a column name), the validated
intervals in microseconds (tumble: size_us, offset_us; hop: slide_us, size_us, offset_us;
cumulate: step_us, size_us, offset_us; session: gap_us), session's `partition_by` (a list of
column names) and `text`, the interval arguments as the model wrote them (offset only if given);
window_aggregate's pane plans render the marker of their window too, with `"via":
"window_aggregate"`, `group_by` (a list of column names) and `measures` (output name -> the
aggregate as written, `*/` escaped as `*\\/`): a stream re-plans them as per-pane partials.
The JSON never holds `*/`: column names are validated identifiers, intervals '<n> <unit>'.
Changing the keys or their meaning makes a new version; a version this module does not know is
an error, never a guess.

One source for the window arithmetic: the macros render window starts and the window columns
with macros/_internal/window_bounds.sql, and Python renders that same file with a plain jinja2
Environment (window_floor, window_bounds; panes.py uses them too). The file is self-contained
Jinja, so the package form renders it under any Spark adapter with none of this module loaded.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Mapping, Optional, Tuple

import jinja2

import dbt.include.window_views

VERSION = "v1"
MARKER = re.compile(r"/\* window_views:tvf:(\S*) (.*?) \*/")
# the interval arguments of each macro, in its signature's order (the label's order)
ARGUMENTS = {
    "tumble": ("size", "offset"),
    "hop": ("slide", "size", "offset"),
    "cumulate": ("step", "size", "offset"),
    "session": ("gap",),
}


WINDOW_BOUNDS = Path(dbt.include.window_views.__file__).parent / "macros" / "_internal" / "window_bounds.sql"


@functools.lru_cache(maxsize=None)
def _bounds_macro(name: str) -> jinja2.Template:
    # a call appended to the file itself: Jinja exports no `_`-prefixed macro to other templates.
    # StrictUndefined: anything dbt-only in that file fails here, not as silently empty SQL.
    text = WINDOW_BOUNDS.read_text() + "{{ %s(*args) }}" % name
    return jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(text)


def window_floor(t: str, offset: int, unit: int) -> str:
    """SQL: the latest window start at or before t (epoch micros): multiples of `unit` after
    `offset`, floored also before 1970. The macros' `_window_floor`."""
    return _bounds_macro("_window_floor").render(args=(t, offset, unit)).strip()


def window_bounds(start: str, end: str) -> str:
    """SQL: the window_start, window_end, window_time columns of [start, end) (epoch micros
    expressions). The macros' `_window_bounds`."""
    return _bounds_macro("_window_bounds").render(args=(start, end)).strip()


class MarkerError(ValueError):
    """A window TVF marker this plugin cannot read (another version, or damaged)."""


@dataclass(frozen=True)
class WindowTvf:
    kind: str  # tumble | hop | cumulate | session
    time_col: str
    size: int = 0  # micros; CUMULATE: the max size; SESSION: unused
    slide: int = 0  # HOP slide, CUMULATE step
    offset: int = 0
    gap: int = 0  # SESSION
    partition_by: Tuple[str, ...] = ()
    texts: Tuple[Tuple[str, str], ...] = ()  # (argument, interval as written), in macro order
    via: Optional[str] = None  # "window_aggregate": computed from panes, not by the TVF's rows
    group_by: Tuple[str, ...] = ()  # window_aggregate's keys and measures (alias, aggregate)
    measures: Tuple[Tuple[str, str], ...] = ()

    @property
    def span(self) -> int:
        """The longest a window of this kind can be (SESSION: unbounded, so 0)."""
        return self.size

    def label(self) -> str:
        """The window as its call reads, for table properties and docs:
        `hop(time_col=ts, slide=5 minutes, size=10 minutes)`."""
        args = [f"time_col={self.time_col}", *(f"{name}={text}" for name, text in self.texts)]
        if self.partition_by:
            args.append(f"partition_by={' '.join(self.partition_by)}")
        return f"{self.kind}({', '.join(args)})"

    def _floor(self, t: str, unit: int) -> str:
        return window_floor(t, self.offset, unit)

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

    def end_at_or_before(self, t: int) -> Optional[int]:
        """The latest window end at or before t (micros): window ends lie on a grid (TUMBLE: every
        size, HOP: every slide, after size; CUMULATE: every step); None for SESSION, whose ends
        follow the rows."""
        if self.kind == "session":
            return None
        period = self.size if self.kind == "tumble" else self.slide
        phase = self.offset + (self.size if self.kind == "hop" else 0)
        return t - (t - phase) % period

    def late(self, t: str, watermark: int) -> str:
        """SQL: the row arrives for a window the watermark has already closed. A SESSION row at or
        before the watermark could extend a closed session, so it is late too."""
        if self.kind == "session":
            return f"({t} <= {watermark})"
        return f"({self.first_end(t)} <= {watermark})"


def _window(spec: Mapping[str, Any]) -> WindowTvf:
    kind = spec["kind"]
    texts = tuple((name, spec["text"][name]) for name in ARGUMENTS[kind] if name in spec["text"])
    common = {
        "kind": kind,
        "time_col": spec["time_col"],
        "texts": texts,
        "via": spec.get("via"),
        "group_by": tuple(spec.get("group_by", ())),
        "measures": tuple(spec.get("measures", {}).items()),
    }
    if kind == "session":
        return WindowTvf(gap=spec["gap_us"], partition_by=tuple(spec["partition_by"]), **common)
    slide = {"hop": "slide_us", "cumulate": "step_us"}.get(kind)
    return WindowTvf(size=spec["size_us"], slide=spec[slide] if slide else 0, offset=spec["offset_us"], **common)


def find(sql: str) -> List[WindowTvf]:
    """Every window TVF of the compiled SQL, in order, read from the macros' markers."""
    found = []
    for version, payload in MARKER.findall(sql):
        if version != VERSION:
            raise MarkerError(
                f"window_views: the window TVF marker `window_views:tvf:{version}` is not a version this plugin "
                f"reads ({VERSION}); fix: compile the model with the window_views macros of the installed plugin "
                "(remove a window_views package of another version from packages.yml)"
            )
        try:
            spec = json.loads(payload)
            found.append(_window(spec))
        except (ValueError, KeyError, TypeError) as exc:
            raise MarkerError(
                f"window_views: the window TVF marker `{payload[:200]}` is damaged ({exc!r}); fix: render the "
                "window with window_views.tumble/hop/cumulate/session rather than copying its SQL"
            ) from exc
    return found
