"""Names the plugin reserves in the user's SQL and tables: one prefix for every internal view
and column, so a user's column can never collide with one; and what a column name a window
argument or a config names may be; the names the macros' SQL and the plugin's give their own columns
and views. The macros read them from macros/_internal/_rules.sql."""

import re
from typing import Optional, TypeGuard

RESERVED_PREFIX = "_wv_"
NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"  # a plain identifier: never needs quoting
NAME_RULE = "must be a column name (letters, digits, underscores)"


def internal(name: str) -> str:
    """An internal view or column name: the reserved prefix and `name`."""
    return f"{RESERVED_PREFIX}{name}"


def is_reserved(column: str) -> bool:
    """Whether `column` has the reserved prefix (in any case)."""
    return column.lower().startswith(RESERVED_PREFIX)


def is_identifier(value: object) -> TypeGuard[str]:
    """Whether `value` is a plain identifier (`NAME_PATTERN`), the plugin's own names included."""
    return isinstance(value, str) and re.match(NAME_PATTERN, value) is not None


def name_problem(value: object) -> Optional[str]:
    """Why `value` cannot be a column a window or config names (`NAME_RULE`, or the reserved
    prefix), or None when it can."""
    if not is_identifier(value):
        return NAME_RULE
    if is_reserved(value):
        return f"uses the prefix {RESERVED_PREFIX}, which the plugin reserves for its own columns"
    return None


# the names the window macros' SQL gives its own columns and views (read from _rules.sql)
ROW = internal("row")  # a row as a struct, carried through a session's window functions
TIME = internal("t")  # a row's time in epoch microseconds
SESSION = internal("session")  # a row's session, numbered within its partition
NEW_SESSION = internal("new")  # 1 where a row starts a session
WINDOWS = internal("windows")  # the windows a row expands into (a lateral view)
WINDOW_START = internal("s")  # a hop window's start, in the lambda that lists them
STEP = internal("j")  # a cumulate window's count of steps, in the lambda that lists them
OWNED = internal("owned")  # the windowed rows a time filter's range owns
PANES = internal("panes")  # a pane plan's rows
MACRO_NAMES = {
    "row": ROW,
    "time": TIME,
    "session": SESSION,
    "new_session": NEW_SESSION,
    "windows": WINDOWS,
    "window_start": WINDOW_START,
    "step": STEP,
    "owned": OWNED,
    "panes": PANES,
}

# a pane's start, epoch micros, as a pane plan (kinds/partials/panes.py) names it: a streaming
# window_aggregate's pane state and a session's partials keep it (streaming/shapes/pane_state.py)
PANE = internal("p")
