"""A window macro's arguments (tumble, hop, cumulate, session, window_aggregate's `window`)
checked and read into the spec its TVF marker carries (macros/_internal/tvf_marker.sql). The
macros call this through the adapter (`adapter.window_spec`, `spec_of_call`); an argument that is wrong raises
MacroArgumentError naming the macro and the argument, as dbt compiles the model.

A spec: {"kind", "time_col", "text": {argument: interval as written, single-spaced}} and, in
microseconds, by kind: tumble size_us, offset_us; hop slide_us, size_us, offset_us; cumulate
step_us, size_us, offset_us; session gap_us and partition_by (a list of columns)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from dbt.adapters.window_views import names
from dbt.adapters.window_views.errors import MacroArgumentError
from dbt.adapters.window_views.query import intervals, windows
from dbt.adapters.window_views.query.intervals import Interval

# the keys of window_aggregate's `window` by kind (offset optional)
WINDOW_KEYS = {
    "tumble": ("kind", "time_col", "size", "offset"),
    "hop": ("kind", "time_col", "size", "slide", "offset"),
    "cumulate": ("kind", "time_col", "size", "step", "offset"),
}
# the interval argument that divides a kind's windows (tumble and session: none)
_UNIT = {"hop": "slide", "cumulate": "step"}


@dataclass(frozen=True)
class MacroArgument:
    """One argument of a window macro's call: `name` as messages name it ('slide', or 'window.slide'
    inside window_aggregate's `window`), and its value as the call passed it."""

    macro: str
    name: str
    value: Any

    def __str__(self) -> str:
        return f"window_views.{self.macro}: argument '{self.name}'"

    def interval(self, signed: bool = False) -> Interval:
        """The value as a window interval (intervals.window_interval); `signed`: an offset."""
        return intervals.window_interval(self.value, str(self), signed)

    def column(self) -> str:
        """The value as a column name a window argument names (names.name_problem)."""
        problem = names.name_problem(self.value)
        if problem == names.NAME_RULE:
            raise MacroArgumentError(f"{self} {names.NAME_RULE}, got {self.value}")
        if problem:
            raise MacroArgumentError(f"{self} = '{self.value}' {problem}; fix: rename the column")
        return str(self.value)

    def columns(self) -> List[str]:
        """The value as one column name or a list of them (None: none)."""
        values = [] if self.value is None else [self.value] if isinstance(self.value, str) else self.value
        if isinstance(values, Mapping) or not isinstance(values, Iterable):
            raise MacroArgumentError(f"{self} must be a column name or a list of column names, got {self.value}")
        return [MacroArgument(self.macro, self.name, value).column() for value in values]


def window_spec(
    kind: str, arguments: Mapping[str, Any], macro: Optional[str] = None, prefix: str = ""
) -> Dict[str, Any]:
    """The spec of a `kind` window from a macro's arguments (time_col and its kind's intervals;
    session: partition_by). `prefix` names the arguments inside a dict argument ('window.')."""

    def argument(name: str) -> MacroArgument:
        return MacroArgument(macro or kind, prefix + name, arguments.get(name))

    spec: Dict[str, Any] = {"kind": kind, "time_col": argument("time_col").column()}
    text: Dict[str, str] = {}
    if kind == windows.WindowKind.SESSION:
        gap = argument("gap").interval()
        spec.update(gap_us=gap.micros, partition_by=argument("partition_by").columns())
        text["gap"] = gap.text
        return {**spec, "text": text}
    if kind in _UNIT:
        unit = argument(_UNIT[kind]).interval()
        spec[f"{_UNIT[kind]}_us"] = unit.micros
        text[_UNIT[kind]] = unit.text
    size = argument("size").interval()
    spec["size_us"] = size.micros
    text["size"] = size.text
    if kind == windows.WindowKind.HOP:
        windows.check_slide(argument("slide"), argument("size"))
    elif kind == windows.WindowKind.CUMULATE:
        windows.check_step(argument("step"), argument("size"))
    offset = argument("offset")
    spec["offset_us"] = 0 if offset.value is None else offset.interval(signed=True).micros
    if offset.value is not None:
        text["offset"] = offset.interval(signed=True).text
    return {**spec, "text": text}


def window_aggregate_spec(window: Any) -> Dict[str, Any]:
    """The spec of window_aggregate's `window` dict: its kind and keys checked, then window_spec."""
    where = "window_views.window_aggregate: argument 'window' "
    if not isinstance(window, Mapping):
        raise MacroArgumentError(
            f"{where}must be a dict such as {{'kind': 'hop', 'time_col': 'ts', 'size': '1 hour', "
            f"'slide': '1 minute'}}, got {window}"
        )
    kind = window.get("kind")
    if not isinstance(kind, str) or kind not in WINDOW_KEYS:
        shown = "None" if kind is None else f"'{kind}'"
        raise MacroArgumentError(f"{where}has kind {shown}; expected one of: tumble, hop, cumulate")
    keys = WINDOW_KEYS[kind]
    unknown = sorted(key for key in window if key not in keys)
    if unknown:
        raise MacroArgumentError(
            f"{where}has unknown key(s) {', '.join(unknown)} for kind '{kind}'; expected: {', '.join(keys)}"
        )
    missing = [key for key in keys if key not in window and key != "offset"]
    if missing:
        raise MacroArgumentError(
            f"{where}is missing {', '.join(missing)} for kind '{kind}'; expected keys: {', '.join(keys)} "
            "(offset optional)"
        )
    return window_spec(kind, window, "window_aggregate", "window.")


def spec_of_call(macro: str, arguments: Mapping[str, Any]) -> Dict[str, Any]:
    """The window spec of a window macro's call: a TVF's (its kind is the macro's name), or
    window_aggregate's (its `window` argument)."""
    if macro == "window_aggregate":
        return window_aggregate_spec(arguments.get("window"))
    return window_spec(macro, arguments)
