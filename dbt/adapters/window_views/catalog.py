"""`dbt docs`' catalog of window views: dbt-spark's rows, with the window summary a window view's
table comment holds, and a table's row count as the table has it. Apart from impl.py: the adapter's
docs face changes for other reasons than the methods the macros call."""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, Mapping, Optional

from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.exceptions import DbtRuntimeError
from sqlglot import exp

from dbt.adapters.window_views.query import ddl
from dbt.adapters.window_views.query.sqlexpr import to_sql

logger = AdapterLogger("WindowViews")
_TABLE_COMMENT = re.compile(r"^Comment: (.*)$", re.MULTILINE)
_ROWS = "stats:rows:"


class WindowViewCatalog(SparkAdapter):
    """The catalog rows `dbt docs generate` collects, as window views show them."""

    def _get_columns_for_catalog(self, relation: Any) -> Iterable[Dict[str, Any]]:
        """dbt-spark's catalog rows, plus the table comment, where window views keep their
        window summary, so `dbt docs` shows it; the row count where dbt-spark shows one, and of
        every window view, counted where Spark's is only a placeholder. A session's temporary
        views (a stream's input views) are listed in every schema with none: no model's, skipped."""
        if not relation.schema:
            return
        match = _TABLE_COMMENT.search(getattr(relation, "information", None) or "")
        comment = match.group(1).strip() if match else None
        rows: Optional[Dict[str, Any]] = None  # the relation's, found once
        for column in super()._get_columns_for_catalog(relation):
            if rows is None:
                window_view = bool(comment and window_view_stats(comment))
                rows = self._rows_stat(relation, column.get(f"{_ROWS}value"), window_view)
            for key in [k for k in column if k.startswith(_ROWS)]:
                del column[key]
            column.update(rows)
            if comment:
                column["table_comment"] = comment
                column.update(window_view_stats(comment))
            yield column

    def _rows_stat(self, relation: Any, spark_rows: Optional[int], window_view: bool) -> Dict[str, Any]:
        """The `rows` stat of a relation whose Statistics say `spark_rows`. Spark says `0 rows` of
        a table it never analyzed (the metastore's placeholder), and nothing of some window views'
        tables: those are counted (Parquet and Delta answer from their metadata)."""
        count = spark_rows
        if spark_rows == 0 or (spark_rows is None and window_view):
            count = self._row_count(relation)
        if count is None:
            return {}
        return {f"{_ROWS}label": "rows", f"{_ROWS}value": count, f"{_ROWS}description": "", f"{_ROWS}include": True}

    def _row_count(self, relation: Any) -> Optional[int]:
        """The relation's rows, counted; None (no `rows` stat) where the count fails."""
        query = exp.select(exp.Count(this=exp.Star())).from_(ddl.qualified(relation.schema, relation.identifier))
        try:
            _, table = self.execute(to_sql(query), fetch=True)
        except DbtRuntimeError as exc:  # a table whose files went: the catalog goes on without its count
            logger.debug(f"no row count for {relation} in the catalog: {exc}")
            return None
        return int(table[0][0])


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
