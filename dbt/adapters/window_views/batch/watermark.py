"""The watermark W = max(event time seen) - delay, computed from a batch model's inputs."""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from sqlglot import exp

from dbt.adapters.window_views.errors import AnalysisError
from dbt.adapters.window_views.model.config import Watermark
from dbt.adapters.window_views.query import ddl, sqlexpr

EPOCH = dt.datetime(1970, 1, 1)


@dataclass(frozen=True)
class WatermarkReached:
    micros: Optional[int]  # None: some input has no event time yet, so nothing is closed

    def describe(self) -> str:
        if self.micros is None:
            return "none (no event time seen)"
        return (EPOCH + dt.timedelta(microseconds=self.micros)).isoformat(sep=" ")


def batch_watermark(
    adapter: Any, inputs: Sequence[Tuple[Optional[str], str]], watermark: Watermark
) -> WatermarkReached:
    """In batch the input is the whole truth: W over every input relation (the plan's `inputs`) that has the watermark
    column; with several (a window join) the smallest, as an operator's watermark is the min of
    its inputs'."""
    column = watermark.column.lower()
    with_column = []
    for schema, name in inputs:
        relation = adapter.Relation.create(schema=schema, identifier=name)
        if any(c.name.lower() == column for c in adapter.get_columns_in_relation(relation)):
            with_column.append(relation)
    if not with_column:
        names = ", ".join(f"{s}.{n}" if s else n for s, n in inputs) or "none"
        raise AnalysisError(
            f"the watermark column `{watermark.column}` is not a column of any input relation "
            f"(inputs: {names}); fix: set watermark.column to the event-time column of an input"
        )
    _, table = adapter.execute(_lowest_maximum(watermark.column, [str(r) for r in with_column]), fetch=True)
    all_seen, lowest = table.rows[0]
    if not all_seen or lowest is None:
        return WatermarkReached(None)
    return WatermarkReached(int(lowest) - watermark.delay.micros)


def _lowest_maximum(column: str, relations: Sequence[str]) -> str:
    """One row: whether every relation has an event time, and the lowest of their maxima (micros)."""
    maxima: List[exp.Query] = [
        exp.select(*sqlexpr.aliased([("m", sqlexpr.epoch_micros(exp.Max(this=sqlexpr.column(column))))])).from_(
            ddl.table(r)
        )
        for r in relations
    ]
    union = functools.reduce(lambda a, b: exp.union(a, b, distinct=False), maxima)
    seen = exp.EQ(this=exp.Count(this=exp.column("m")), expression=exp.Count(this=exp.Star()))
    lowest = exp.select(*sqlexpr.aliased([("all_seen", seen), ("w", exp.Min(this=exp.column("m")))]))
    return sqlexpr.to_sql(lowest.from_(union.subquery("maxima")))
