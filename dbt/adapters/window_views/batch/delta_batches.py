"""Delta Lake's incremental batch window views (`file_format='delta'` with batch_size): batches
replaced by predicate (predicate_batches.py); what is Delta's own is its conflicts' names and
its partitions, which SHOW PARTITIONS lists as bare values."""

from __future__ import annotations

import re
from typing import Any, Optional, Tuple

from dbt.adapters.window_views.batch.predicate_batches import FormatWrites, ReplacedByPredicate
from dbt.adapters.window_views.query import ddl
from dbt.adapters.window_views.spark import lakehouse

# Delta's write conflicts (sqlState 2D521): another transaction committed what this one read or replaces
_CONFLICT = re.compile(r"\[(DELTA_(?:CONCURRENT_[A-Z_]+|METADATA_CHANGED|PROTOCOL_CHANGED))(?:\.[A-Z_]+)?\]")


def conflict(text: str) -> Optional[str]:
    """`ConcurrentAppendException` for `[DELTA_CONCURRENT_APPEND]`: the Java class Delta throws."""
    found = _CONFLICT.search(text)
    if found is None:
        return None
    return "".join(part.capitalize() for part in found.group(1).removeprefix("DELTA_").split("_")) + "Exception"


def written(adapter: Any, name: str, column: str) -> Tuple[str, ...]:
    """The batches the table holds: Delta's SHOW PARTITIONS gives the batch column's values."""
    _, rows = adapter.execute(ddl.show_partitions(name), fetch=True)
    return tuple(sorted(str(row[0]) for row in rows.rows))


DELTA_BATCHES = ReplacedByPredicate(FormatWrites(lakehouse.DELTA_LAKE, conflict, written))
