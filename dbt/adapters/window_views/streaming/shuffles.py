"""How a micro-batch's shuffles and code are planned, by how many rows it handles.

Adaptive execution runs each shuffle stage as a Spark job of its own and re-plans the query
between them: worth it for an initial load of millions of rows, a fixed cost that outweighs
its gain when a micro-batch's rows fit in a few tasks, as an incremental run's do. So a small
batch is planned once over a few partitions sized to its rows, and a large one gets the
session's own settings. Likewise code generation: each batch's plans hold its own watermarks
and bounds as literals, so Spark compiles new classes for every batch (measured in
bench/history.md); a batch of few rows is evaluated interpreted instead. The
settings are those of the stream's session (Spark clones the user's session for a streaming
query), set again for every batch.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

SMALL_BATCH_ROWS = 1_000_000  # new rows plus the state's rows
ROWS_PER_PARTITION = 250_000
# up to here, interpreting a batch's expressions costs less than compiling them (bench/history.md)
INTERPRETED_ROWS = 10_000
PLANNING = ("spark.sql.adaptive.enabled", "spark.sql.shuffle.partitions")
# whole-stage code, and the projections and predicates outside it (Spark's fallback setting)
CODEGEN = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
KEYS = (*PLANNING, *CODEGEN)


def session_settings(spark: Any) -> Dict[str, Optional[str]]:
    """The stream's session's own settings, to give back to large batches."""
    return {key: spark.conf.get(key, None) for key in KEYS}


def small(rows: int) -> bool:
    """Whether a batch of `rows` (new and kept) rows is planned as one job of a few partitions."""
    return rows <= SMALL_BATCH_ROWS


def _restore(spark: Any, own: Dict[str, Optional[str]], keys: Any) -> None:
    for key in keys:
        value = own.get(key)
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def plan_for(spark: Any, rows: int, own: Dict[str, Optional[str]]) -> bool:
    """Set the stream's session up for a batch of `rows` (new and kept) rows; returns whether it is `small`."""
    if not small(rows):
        _restore(spark, own, KEYS)
        return False
    configured = int(own["spark.sql.shuffle.partitions"] or 200)
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    spark.conf.set("spark.sql.shuffle.partitions", str(max(1, min(configured, -(-rows // ROWS_PER_PARTITION)))))
    if rows <= INTERPRETED_ROWS:
        for key, value in CODEGEN.items():
            spark.conf.set(key, value)
    else:
        _restore(spark, own, CODEGEN)
    return True
