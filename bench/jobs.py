"""Spark jobs a run started, from the session's status store (what the Spark UI lists): how
many each streaming micro-batch costs, and where its time goes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List


@dataclass(frozen=True)
class Job:
    id: int
    group: str  # a streaming query's micro-batches run in the query's job group
    description: str  # the job's description (`window_view m, micro-batch 3: output staged`) or call site
    started: float  # epoch seconds
    seconds: float


class Jobs:
    def __init__(self, spark: Any) -> None:
        self._store = spark.sparkContext._jsc.sc().statusStore()
        self._seen = self._last()

    def _all(self) -> List[Any]:
        seq = self._store.jobsList(None)  # a Scala Seq
        return [seq.apply(i) for i in range(seq.size())]

    def _last(self) -> int:
        return max((j.jobId() for j in self._all()), default=-1)

    def since_last(self) -> List[Job]:
        """The jobs started since the previous call (or since this object was made)."""
        jobs = []
        for j in self._all():
            if j.jobId() <= self._seen:
                continue
            start, end = j.submissionTime(), j.completionTime()
            started = start.get().getTime() / 1000 if start.isDefined() else 0.0
            seconds = end.get().getTime() / 1000 - started if start.isDefined() and end.isDefined() else 0.0
            jobs.append(Job(j.jobId(), _text(j.jobGroup()), _text(j.description()) or j.name(), started, seconds))
        jobs.sort(key=lambda job: job.id)
        self._seen = max([self._seen, *(job.id for job in jobs)])
        return jobs


def describe(batch_jobs: List[Job]) -> str:
    """Each job's seconds and description (its call site when it has none), and the micro-batch's
    span from first start to last end."""
    if not batch_jobs:
        return "none"
    span = max(j.started + j.seconds for j in batch_jobs) - min(j.started for j in batch_jobs)
    return f"{span:.2f} s from first to last: " + ", ".join(f"{j.seconds:.2f} s {j.description}" for j in batch_jobs)


def streaming(jobs: List[Job]) -> List[Job]:
    """The jobs of streaming micro-batches (run in a query's job group)."""
    return [j for j in jobs if j.group]


def _text(option: Any) -> str:
    """A Scala Option[String]'s value, or ''."""
    return option.get() if option.isDefined() else ""


def met(ok: bool) -> str:
    """A target's verdict, as every bench prints it."""
    return "met" if ok else "NOT met"
