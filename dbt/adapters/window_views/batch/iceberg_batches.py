"""Apache Iceberg's incremental batch window views (`file_format='iceberg'` with batch_size):
batches replaced by predicate in one snapshot each (predicate_batches.py). Iceberg's own: the
names of its write conflicts, and its partitions, which its `partitions` metadata table lists
(an Iceberg table has no SHOW PARTITIONS)."""

from __future__ import annotations

import re
from typing import Any, Optional, Tuple

from sqlglot import exp

from dbt.adapters.window_views.batch.predicate_batches import FormatWrites, ReplacedByPredicate
from dbt.adapters.window_views.query import ddl
from dbt.adapters.window_views.query.sqlexpr import to_sql
from dbt.adapters.window_views.spark import lakehouse

# another commit between this one's start and end: the table moved on, or rewrote files it replaces
_CONFLICT = re.compile(r"\b(CommitFailedException)\b|\b(ValidationException): Found (?:new )?conflicting")


def conflict(text: str) -> Optional[str]:
    """The Java class Iceberg throws for a write conflict, None for another error."""
    found = _CONFLICT.search(text)
    return None if found is None else found.group(1) or found.group(2)


def written(adapter: Any, name: str, column: str) -> Tuple[str, ...]:
    """The batches the table holds: its `partitions` metadata table's values of the batch column."""
    table = ddl.table(name)
    partitions = exp.Table(this=exp.to_identifier("partitions"), db=table.this, catalog=table.args.get("db"))
    key = exp.Dot(this=exp.column("partition"), expression=exp.to_identifier(column, quoted=True))
    _, rows = adapter.execute(to_sql(exp.select(key).from_(partitions)), fetch=True)
    return tuple(sorted(str(row[0]) for row in rows.rows))


ICEBERG_BATCHES = ReplacedByPredicate(FormatWrites(lakehouse.ICEBERG, conflict, written))
