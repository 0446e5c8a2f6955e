"""How a micro-batch's shuffles are planned, by how many rows it handles.

Adaptive execution runs each shuffle stage as a Spark job of its own and re-plans the query
between them: worth it for an initial load of millions of rows, a fixed cost that outweighs
its gain when a micro-batch's rows fit in a few tasks, as an incremental run's do. So a small
batch is planned once over a few partitions sized to its rows, and a large one gets the
session's own settings. The settings are those of the stream's session (Spark clones the user's
session for a streaming query), set again for every batch.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

SMALL_BATCH_ROWS = 1_000_000  # new rows plus the state's rows
ROWS_PER_PARTITION = 250_000
KEYS = ("spark.sql.adaptive.enabled", "spark.sql.shuffle.partitions")


def session_settings(spark: Any) -> Dict[str, Optional[str]]:
    """The stream's session's own settings, to give back to large batches."""
    return {key: spark.conf.get(key, None) for key in KEYS}


def small(rows: int) -> bool:
    """Whether a batch of `rows` (new and kept) rows is planned as one job of a few partitions."""
    return rows <= SMALL_BATCH_ROWS


def plan_for(spark: Any, rows: int, own: Dict[str, Optional[str]]) -> bool:
    """Set the stream's session up for a batch of `rows` (new and kept) rows; returns whether it is `small`."""
    if not small(rows):
        for key, value in own.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
        return False
    configured = int(own["spark.sql.shuffle.partitions"] or 200)
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    spark.conf.set("spark.sql.shuffle.partitions", str(max(1, min(configured, -(-rows // ROWS_PER_PARTITION)))))
    return True
