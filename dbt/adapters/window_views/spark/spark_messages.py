"""Spark's error messages read as text, for the runs that name what Spark said: an incremental
batch's failure (the text dbt-spark raised) and a stopped micro-batch (PySpark's message)."""

from __future__ import annotations

import re
from typing import Optional

from dbt.adapters.window_views.names import RESERVED_PREFIX

ERROR_CLASS = re.compile(r"\[[A-Z][A-Z0-9_.]*\][^\n]*")  # Spark's error class and its message's line
# tasks failing together are wrapped in one error, which lists each task's
WRAPPER = "[STAGE_MATERIALIZATION_MULTIPLE_FAILURES]"
INTERNAL = re.compile(rf"`?{RESERVED_PREFIX}\w*`?")  # the plugin's views and columns, which the user never wrote


def error_line(text: str) -> Optional[str]:
    """The first Spark error in `text` as its class and message line (`[DIVIDE_BY_ZERO] ...`),
    the first task's under the wrapper; None if `text` holds no error class."""
    found = ERROR_CLASS.search(text)
    if found is not None and found.group(0).startswith(WRAPPER):
        found = ERROR_CLASS.search(text, found.start() + len(WRAPPER)) or found
    return None if found is None else found.group(0).strip()


def before_context(message: str) -> str:
    """The message's lines on one line, up to the query context Spark appends (`== SQL ... ==`)
    or a JVM stack; empty if there are none."""
    lines = []
    for line in message.strip().splitlines():
        if line.startswith("==") or line.strip().startswith("at ") or line.startswith("JVM stacktrace"):
            break
        lines.append(line.strip())
    return " ".join(line for line in lines if line)


def without_internal(text: str) -> str:
    """`text` with the plugin's own names (views, columns, CTEs) as "(internal)"."""
    return INTERNAL.sub("(internal)", text)


# an AnalysisException's message ends `SQLSTATE: 42703; line 3 pos 11;` and then the logical plan
PLAN_AFTER = re.compile(r"(SQLSTATE: \w+(?:; line \d+ pos \d+)?);\n")


def without_plan(message: str) -> str:
    """Spark's message without the logical plan it appends to an analysis error: the plugin's
    statement's, with its internal names (`CreateTable ... __wv_tmp`), which the user never wrote."""
    found = PLAN_AFTER.search(message)
    return message if found is None else message[: found.end(1)]
