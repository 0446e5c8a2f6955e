"""Names for a micro-batch's Spark jobs, as the Spark UI lists them
(`window_view daily_totals, micro-batch 7: output staged`), so that whoever reads the UI sees
which model and which step of its micro-batch a job runs, not the streaming query's call site."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from dbt.adapters.window_views.spark.connect import is_connect

DESCRIPTION = "spark.job.description"  # what setJobDescription sets


@contextmanager
def step(spark: Any, model: str, batch: Any, what: str) -> Iterator[None]:
    """The Spark jobs started inside, described as step `what` of micro-batch `batch`; the
    thread's description before is given back (an idle step runs on the user's thread). A
    Spark Connect session has no SparkContext to describe jobs with: they keep Spark's names."""
    if is_connect(spark):
        yield
        return
    context = spark.sparkContext
    before = context.getLocalProperty(DESCRIPTION)
    context.setJobDescription(f"window_view {model}, micro-batch {batch}: {what}")
    try:
        yield
    finally:
        context.setLocalProperty(DESCRIPTION, before)
