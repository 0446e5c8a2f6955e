"""The rules the macros check window arguments by, made from the Python that states them
(intervals.py, names.py) as a Jinja macro returning constants: macros/_internal/_rules.sql.

The macros cannot call the adapter for them: as a plain dbt package they run under dbt-spark's
own adapter. `python -m dbt.adapters.window_views.rules` rewrites the file after a rule changes;
tests/unit/test_rules.py fails while it is stale, and walks values through both sides.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Union

import dbt.include.window_views
from dbt.adapters.window_views import names
from dbt.adapters.window_views.query import intervals

RULES_SQL = Path(dbt.include.window_views.__file__).parent / "macros" / "_internal" / "_rules.sql"


def constants() -> Dict[str, Union[str, int, Dict[str, int]]]:
    """The rules as the macros read them (`window_views._rules()`)."""
    return {
        "interval_pattern": intervals.PATTERN,
        "interval_units": intervals.UNIT_MICROS,
        "interval_allowed": intervals.ALLOWED,
        "interval_max_days": intervals.MAX_DAYS,
        "interval_max_micros": intervals.MAX_MICROS,
        "name_pattern": names.NAME_PATTERN,
        "name_rule": names.NAME_RULE,
        "reserved_prefix": names.RESERVED_PREFIX,
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
