"""A node of the compiled SQL as its user wrote it, for the messages that quote it.

The compiled SQL holds what the TVF macros expanded: the window arithmetic, the plugin's `_wv_`
names and the `/* window_views:tvf:v1 ... */` marker. A message names the model's own SQL
instead: a subquery that is a TVF's expansion reads as the call (`window_views.hop(s.bid,
time_col=ts, slide=2 seconds, size=10 seconds)`, from its marker), a subquery that holds one
deeper as `(...)`, no comments, no reserved name, and at most `CAP` characters. A window call
the plugin rewrote into Spark SQL (query/frames.py) reads as the model wrote it.
"""

from __future__ import annotations

import re
from typing import Optional

from sqlglot import exp

from dbt.adapters.window_views.names import RESERVED_PREFIX, is_reserved
from dbt.adapters.window_views.query import sqlexpr, tvf

CAP = 200
ELLIPSIS = "..."
HIDDEN = "..."  # what stands for SQL the macros wrote
_RESERVED = re.compile(re.escape(RESERVED_PREFIX) + r"\w*", re.IGNORECASE)
# a window call the plugin rewrote (query/frames.py) keeps, in its node's meta, the call as written
WRITTEN = "window_views.written"


def _window(select: exp.Expression) -> Optional[tvf.WindowTvf]:
    """The window TVF whose marker heads `select` (the macros render it first in their subquery)."""
    found = tvf.on_node(select)
    return found[0] if found else None


def _call(window: tvf.WindowTvf, select: exp.Expression) -> str:
    """The TVF as its macro call reads: `window_views.<kind>(<table>, <label's arguments>)`."""
    kind, arguments = window.label().split("(", 1)
    source = select.args.get("from_")
    read = source.this.sql("spark") if source and isinstance(source.this, exp.Table) else f"({HIDDEN})"
    return f"window_views.{kind}({read}, {arguments}"


def _is_macros(node: exp.Expression) -> bool:
    """Whether `node` holds SQL the macros wrote: a TVF's marker or a reserved name."""
    return any(_window(n) is not None for n in node.find_all(exp.Select)) or any(
        is_reserved(i.name) for i in node.find_all(exp.Identifier)
    )


def _user_form(node: exp.Expression) -> exp.Expression:
    if not isinstance(node, exp.Subquery) or not isinstance(node.this, exp.Expression):
        return node
    window = _window(node.this)
    if window is not None:
        return exp.Table(this=exp.Var(this=_call(window, node.this)), alias=node.args.get("alias"))
    if _is_macros(node.this):
        return exp.Subquery(this=exp.Var(this=HIDDEN), alias=node.args.get("alias"))
    return node


def shown(node: exp.Expression, cap: int = CAP) -> str:
    """`node` as the model's SQL reads it, for a message: TVF expansions as their calls, at most
    `cap` characters (cut with an ellipsis); a call the plugin rewrote as the model wrote it."""
    written = node.meta.get(WRITTEN) if isinstance(node, exp.Window) else None
    text = written if isinstance(written, str) else sqlexpr.model_sql(node.copy().transform(_user_form))
    # a reserved name outside a subquery (a generated column): the plugin's, not the user's
    text = _RESERVED.sub(HIDDEN, text)
    return text if len(text) <= cap else text[: cap - len(ELLIPSIS)].rstrip() + ELLIPSIS
