"""`dbt docs`' catalog of window views: dbt-spark's rows, with the window summary a window view's
table comment holds, and no row count Spark does not know. Apart from impl.py: the adapter's
docs face changes for other reasons than the methods the macros call."""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, Mapping

from dbt.adapters.spark.impl import SparkAdapter

_TABLE_COMMENT = re.compile(r"^Comment: (.*)$", re.MULTILINE)


class WindowViewCatalog(SparkAdapter):
    """The catalog rows `dbt docs generate` collects, as window views show them."""

    def _get_columns_for_catalog(self, relation: Any) -> Iterable[Dict[str, Any]]:
        """dbt-spark's catalog rows, plus the table comment, where window views keep their
        window summary, so `dbt docs` shows it; a row count only where Spark knows one."""
        match = _TABLE_COMMENT.search(getattr(relation, "information", None) or "")
        comment = match.group(1).strip() if match else None
        for column in super()._get_columns_for_catalog(relation):
            if column.get("stats:rows:value") == 0:
                # Spark says `0 rows` of a table it never analyzed: unknown, not empty
                for key in [k for k in column if k.startswith("stats:rows:")]:
                    del column[key]
            if comment:
                column["table_comment"] = comment
                column.update(window_view_stats(comment))
            yield column


def window_view_stats(comment: str) -> Mapping[str, object]:
    """The window summary a window view's table comment holds, as a `dbt docs` stat."""
    if "Window view (" not in comment:
        return {}
    return {
        "stats:window_view:label": "Window view",
        "stats:window_view:value": comment[comment.index("Window view (") + 13 : -1],
        "stats:window_view:description": "window kinds, emit mode and watermark",
        "stats:window_view:include": True,
    }
