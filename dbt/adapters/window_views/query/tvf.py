"""A model's window TVFs, read back from the markers their macros render, as the window types
of windows.py (`Tumble`, `Hop`, `Cumulate`, `Session`), which own their arithmetic.

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
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Mapping

from sqlglot import exp

from dbt.adapters.window_views.query.windows import Cumulate, Hop, Session, Tumble, Via, Window, WindowKind

VERSION = "v1"
MARKER = re.compile(r"/\* window_views:tvf:(\S*) (.*?) \*/")
# the common type of a window TVF, whatever its kind
WindowTvf = Window
_KINDS = {kind.kind: kind for kind in (Tumble, Hop, Cumulate, Session)}


class MarkerError(ValueError):
    """A window TVF marker this plugin cannot read (another version, or damaged)."""


def from_spec(spec: Mapping[str, Any]) -> Window:
    """The window of a spec macros/_internal/arguments.sql validated (`_window_spec`, the marker's
    payload): intervals in microseconds, checked; nothing here re-checks them."""
    kind = _KINDS[WindowKind(spec["kind"])]
    common: Dict[str, Any] = {
        "texts": tuple((name, spec["text"][name]) for name in kind.ARGUMENTS if name in spec["text"]),
        "via": Via(spec["via"]) if spec.get("via") else None,
        "group_by": tuple(spec.get("group_by", ())),
        "measures": tuple(spec.get("measures", {}).items()),
    }
    # each kind's intervals (offset included), named as in its macro's signature
    intervals = {name: spec[f"{name}_us"] for name in kind.ARGUMENTS}
    if kind is Session:
        common["partition_by"] = tuple(spec["partition_by"])
    return kind(spec["time_col"], **intervals, **common)


def on_node(node: exp.Expression) -> List[WindowTvf]:
    """The window TVFs whose markers sqlglot kept as `node`'s comments (a TVF's subquery)."""
    return find("".join(f"/*{comment}*/" for comment in node.comments or []))


def find(compiled: str) -> List[WindowTvf]:
    """Every window TVF of dbt's compiled text, in order, read from the macros' markers: read
    from the text, as Spark runs what sqlglot cannot parse."""
    found = []
    for version, payload in MARKER.findall(compiled):
        if version != VERSION:
            raise MarkerError(
                f"window_views: the window TVF marker `window_views:tvf:{version}` is not a version this plugin "
                f"reads ({VERSION}); fix: compile the model with the window_views macros of the installed plugin "
                "(remove a window_views package of another version from packages.yml)"
            )
        try:
            spec = json.loads(payload)
            found.append(from_spec(spec))
        except (ValueError, KeyError, TypeError) as exc:
            raise MarkerError(
                f"window_views: the window TVF marker `{payload[:200]}` is damaged ({exc!r}); fix: render the "
                "window with window_views.tumble/hop/cumulate/session rather than copying its SQL"
            ) from exc
    return found
