"""What stopped a micro-batch, said so a person can act on it: Spark's own error on one line,
Spark itself gone, the store unreachable; a job cancelled by a processing-time run's end is no
failure."""

from __future__ import annotations

import re
from typing import Any, Optional

from pyspark.errors import PySparkException

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.names import RESERVED_PREFIX
from dbt.adapters.window_views.session import MORE_MEMORY, spark_gone
from dbt.adapters.window_views.streaming.locations import Locations
from dbt.adapters.window_views.streaming.records import BatchId

# Spark's way of saying a job was stopped rather than failed (a processing-time run's query.stop())
CANCELLED = ("SPARK_JOB_CANCELLED", "OPERATION_CANCELED", "InterruptedException", "cancelled")
INTERNAL = re.compile(rf"`?{RESERVED_PREFIX}\w*`?")  # the plugin's views and columns, which the user never wrote


def _cancelled(exc: PySparkException) -> bool:
    text = f"{exc.getCondition() or ''} {exc}"
    return any(word in text for word in CANCELLED)


def spark_error(exc: PySparkException) -> str:
    """Spark's error class and message on one line, without the query context that follows it
    (`== SQL ... ==`, the plugin's SQL), a JVM stack or internal names:
    `[DIVIDE_BY_ZERO] Division by zero. ... SQLSTATE: 22012`."""
    lines = []
    for line in str(exc.getMessage() or exc).strip().splitlines():
        if line.startswith("==") or line.strip().startswith("at ") or line.startswith("JVM stacktrace"):
            break
        lines.append(line.strip())
    text = " ".join(line for line in lines if line) or type(exc).__name__
    condition = exc.getCondition()
    if condition and not text.startswith("["):
        text = f"[{condition}] {text}"
    return INTERNAL.sub("(internal)", text)


def spark_stopped(model: str, gone: str, path: str, batch: Optional[BatchId] = None) -> StreamFailure:
    """A stream stopped by Spark itself stopping (session.spark_gone says why)."""
    return StreamFailure(
        model,
        f"Spark stopped while the stream ran: {gone}",
        f"give Spark more memory ({MORE_MEMORY}) and run again, in a new dbt process: committed "
        "micro-batches are kept, the failed one is redone",
        batch=batch,
        path=path,
    )


def batch_failure(
    spark: Any, exc: Exception, model: str, where: Locations, batch_id: BatchId
) -> Optional[StreamFailure]:
    """What stopped a batch. Spark itself gone comes first: what the batch calls then fails as
    a cancelled job, an internal error or a refused connection. None: not a failure (a
    processing-time run stopping cancels its jobs; the batch is redone next run), or not one of
    the batch's own (passed on)."""
    gone = spark_gone(spark)
    if gone is not None:
        return spark_stopped(model, gone, where.checkpoint, batch_id)
    if isinstance(exc, PySparkException):  # Spark failed a job of the batch: the model's SQL on its rows, ...
        if _cancelled(exc):
            return None
        return StreamFailure(
            model,
            f"Spark failed the micro-batch: {spark_error(exc)}",
            "fix the model's SQL or the input rows it fails on, and run again: committed micro-batches are "
            "kept, this one is redone",
            batch=batch_id,
        )
    if isinstance(exc, OSError):  # the store: unreachable, refused, gone mid-publish
        return StreamFailure(
            model,
            f"cannot read or write its files ({exc.strerror or exc})",
            "make the table, late table and checkpoint locations reachable and writable, and run again: "
            "committed micro-batches are kept, this one is finished or redone",
            batch=batch_id,
            path=exc.filename or where.table,
        )
    return None
