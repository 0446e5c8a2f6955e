"""Which kind of Spark session a caller holds: Spark Connect's has no JVM in this process."""

from __future__ import annotations

from typing import Any


def is_connect(spark: Any) -> bool:
    """A Spark Connect session (no JVM in this process)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")
