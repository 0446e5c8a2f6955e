"""The constants the macros read, made from the Python that states them, as a Jinja macro
returning them: macros/_internal/_rules.sql (`window_views._rules()`).

- `templates`: the window arithmetic (sqlexpr.window_floor, window_bounds, epoch_micros) as SQL
  text with placeholder columns (`placeholders`) the macros replace: one source for the SQL the
  TVF macros render and the SQL the plugin's Python builds.
- `names`: the reserved names the macros' SQL uses for its own columns and views (names.py).
- the interval and column-name rules, for the package form only: under `type: window_views` the
  macros check their arguments in Python (`adapter.window_spec`, query/macro_arguments.py), but as
  a plain dbt package they run under another adapter (dbt-spark's), which has no such method, so
  there they check by these constants (macros/_internal/arguments.sql); tests/unit/test_rules.py
  walks values through both and holds them to the same answers and messages.

`python -m dbt.adapters.window_views.rules` rewrites the file after a rule changes;
tests/unit/test_rules.py fails while it is stale.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

from sqlglot import exp

import dbt.include.window_views
from dbt.adapters.window_views import names
from dbt.adapters.window_views.query import intervals, sqlexpr

RULES_SQL = Path(dbt.include.window_views.__file__).parent / "macros" / "_internal" / "_rules.sql"

# the columns a template's values take the place of: reserved, so no user's column is one, and
# none the start of another, so replacing one never touches another
PLACEHOLDERS = {key: names.internal(f"arg_{key}") for key in ("time", "offset", "unit", "start", "end", "value")}


def _placeholder(key: str) -> exp.Column:
    return exp.column(PLACEHOLDERS[key])


def templates() -> Dict[str, str]:
    """The window arithmetic as Spark SQL with placeholder columns (PLACEHOLDERS)."""
    floor = sqlexpr.window_floor(_placeholder("time"), _placeholder("offset"), _placeholder("unit"))
    bounds = sqlexpr.window_bounds(_placeholder("start"), _placeholder("end"))
    return {
        "window_floor": sqlexpr.to_sql(floor),
        "window_bounds": ",\n  ".join(sqlexpr.to_sql(bound) for bound in bounds),
        "epoch_micros": sqlexpr.to_sql(sqlexpr.epoch_micros(_placeholder("value"))),
    }


def constants() -> Dict[str, Any]:
    """The constants as the macros read them (`window_views._rules()`)."""
    return {
        "interval_pattern": intervals.PATTERN,
        "interval_units": intervals.UNIT_MICROS,
        "interval_allowed": intervals.ALLOWED,
        "interval_max_days": intervals.MAX_DAYS,
        "interval_max_micros": intervals.MAX_MICROS,
        "name_pattern": names.NAME_PATTERN,
        "name_rule": names.NAME_RULE,
        "reserved_prefix": names.RESERVED_PREFIX,
        "names": names.MACRO_NAMES,
        "placeholders": PLACEHOLDERS,
        "templates": templates(),
    }


def macro_sql() -> str:
    """The text of macros/_internal/_rules.sql."""
    # JSON is a Jinja literal (strings unescape alike); indented, no `}}` ends the expression early
    literal = json.dumps(constants(), indent=2).replace("\n", "\n  ")
    return (
        "{#- Generated from dbt/adapters/window_views/rules.py: do not edit. After changing a rule there,\n"
        "    run `python -m dbt.adapters.window_views.rules` (tests/unit/test_rules.py fails until then). -#}\n"
        "{% macro _rules() -%}\n"
        f"  {{{{ return({literal}) }}}}\n"
        "{%- endmacro %}\n"
    )


if __name__ == "__main__":
    RULES_SQL.write_text(macro_sql())
