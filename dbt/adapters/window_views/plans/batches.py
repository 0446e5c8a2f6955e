"""An incremental batch window view's batches (docs/batch.md "Incremental batch window views"):
the periods of dbt's `batch_size`, which of them a run (re)computes, and whether it records the
batches it plans before writing them (the record itself, PendingBatches, is in records.py).

Times are naive UTC datetimes, as dbt's batch bounds. A batch [start, end) owns the output rows
whose event_time it holds; its key (its start) is the value of the table's batch column.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from dbt.adapters.window_views.model.config import Batches, BatchSize
from dbt.adapters.window_views.records import PendingBatches

KEY_FORMAT = "%Y-%m-%d %H:%M:%S"
# the table property holding the PendingBatches record (records.py), as JSON
RECORD_PROPERTY = "window_views.pending_batches"


class Period(ABC):
    """The calendar arithmetic of one batch_size."""

    @abstractmethod
    def floor(self, t: datetime) -> datetime:
        """The start of the batch holding t."""

    @abstractmethod
    def shift(self, start: datetime, n: int) -> datetime:
        """The start of the batch n batches after the one starting at `start` (n may be < 0)."""


@dataclass(frozen=True)
class FixedPeriod(Period):
    """hour, day: a fixed length, from the epoch."""

    length: timedelta

    def floor(self, t: datetime) -> datetime:
        return t - (t - datetime(1970, 1, 1)) % self.length

    def shift(self, start: datetime, n: int) -> datetime:
        return start + n * self.length


@dataclass(frozen=True)
class MonthPeriod(Period):
    """month, year: `months` calendar months, from January."""

    months: int

    def floor(self, t: datetime) -> datetime:
        month = (t.month - 1) // self.months * self.months
        return datetime(t.year, month + 1, 1)

    def shift(self, start: datetime, n: int) -> datetime:
        index = start.year * 12 + start.month - 1 + n * self.months
        return datetime(index // 12, index % 12 + 1, 1)


PERIODS: Dict[BatchSize, Period] = {
    BatchSize.HOUR: FixedPeriod(timedelta(hours=1)),
    BatchSize.DAY: FixedPeriod(timedelta(days=1)),
    BatchSize.MONTH: MonthPeriod(1),
    BatchSize.YEAR: MonthPeriod(12),
}


@dataclass(frozen=True, order=True)
class BatchSpan:
    """One batch's span of event time, [start, end): the output rows it owns."""

    start: datetime
    end: datetime

    @property
    def key(self) -> str:
        """The batch's value in the table's batch column (and in errors and the record)."""
        return self.start.strftime(KEY_FORMAT)


def batch_of(period: Period, start: datetime) -> BatchSpan:
    first = period.floor(start)
    return BatchSpan(first, period.shift(first, 1))


def covering(period: Period, start: datetime, end: datetime) -> List[BatchSpan]:
    """The batches from the one holding `start` to the one holding `end` - 1 µs (end exclusive)."""
    batches = []
    at = period.floor(start)
    while at < end:
        batches.append(batch_of(period, at))
        at = period.shift(at, 1)
    return batches


def from_key(period: Period, key: str) -> BatchSpan:
    return batch_of(period, datetime.strptime(key, KEY_FORMAT))


def record_first(
    batches: Sequence[BatchSpan], leaves_pending: Iterable[str], record: PendingBatches, backfill: bool, lookback: int
) -> bool:
    """Whether a run must record its planned batches as pending before it writes them, so that a
    run killed at any point leaves no batch the next run does not redo. A plain run need not: it
    writes its batches in time order, and the next plain run starts `lookback` batches before the
    current one, never after the batch that follows the last one written (select), so it takes
    every batch the killed run had not reached (as long as the input only grows, which a plain run
    assumes anyway). What it does not take again: a backfill's batches, and a batch written but
    meant to stay pending (`leaves_pending`: still growing, or not closed) unless the old record
    holds it already, or it is the run's last batch and `lookback` reaches back to it."""
    if backfill:
        return True
    last = batches[-1].key if batches else None
    return any((key != last or lookback == 0) and key not in record.pending for key in leaves_pending)


@dataclass(frozen=True)
class Selection:
    """What a run computes, and why (the run's log line)."""

    batches: Tuple[BatchSpan, ...]
    reason: str


@dataclass(frozen=True)
class Requested:
    """What the invocation asks of a run besides the batches it owes: every batch from begin
    (`everything`: dbt's --full-refresh, or a table with no batch yet), or only a backfill's
    range (dbt's --event-time-start / --event-time-end; None: open on that side)."""

    everything: bool = False
    start: Optional[datetime] = None
    end: Optional[datetime] = None

    @property
    def backfill(self) -> bool:
        """Whether the run is a backfill (either bound given)."""
        return self.start is not None or self.end is not None


def select(
    config: Batches,
    last_time: Optional[datetime],
    written: Iterable[str],
    record: PendingBatches,
    requested: Requested,
) -> Selection:
    """The batches a run computes. `last_time`: the latest event_time the input can produce (None:
    no input rows); `written`: the keys of the batches the table holds.
    - a backfill (--event-time-start/--event-time-end): the batches of that range, only;
    - a first run or a full refresh: every batch from `begin` to the one holding `last_time`;
    - later runs: `lookback` batches before the current one (dbt's meaning: the one holding
      `last_time`, but never one after the last batch written, so no batch is skipped) to the
      current one, plus the batches a previous run left pending."""
    period = PERIODS[config.size]
    if requested.backfill:
        first = requested.start if requested.start is not None else config.begin
        stop = requested.end if requested.end is not None else _after(period, last_time, first)
        return Selection(tuple(covering(period, first, stop)), "the --event-time-start/--event-time-end range")
    keys = sorted(written)
    if requested.everything or not keys:
        why = "a full refresh" if requested.everything else "the first run"
        return Selection(tuple(covering(period, config.begin, _after(period, last_time, config.begin))), why)
    last = from_key(period, keys[-1])
    current = min(batch_of(period, last_time).start if last_time is not None else last.start, last.end)
    first = max(period.shift(current, -config.lookback), period.floor(config.begin))
    new = covering(period, first, _after(period, last_time, last.end))
    pending = [from_key(period, key) for key in record.pending]
    after, latest = batch_of(period, current).key, batch_of(period, new[-1].start if new else current).key
    why = f"the current batch ({latest}) and {config.lookback} before it (lookback)"
    if after != latest:  # runs were missed: every batch since the last written
        why = f"the batches from {after} (the first after the last written) to the current one ({latest}), and "
        why += f"{config.lookback} before {after} (lookback)"
    if pending:
        why += f", and {len(pending)} batch(es) a previous run left unfinished"
    return Selection(tuple(sorted(set(new) | set(pending))), why)


def _after(period: Period, last_time: Optional[datetime], at_least: datetime) -> datetime:
    """The end of the batch holding `last_time` (no input: `at_least`, so no batch)."""
    if last_time is None:
        return at_least
    return max(batch_of(period, last_time).end, at_least)


def keys(batches: Sequence[BatchSpan]) -> List[str]:
    return [b.key for b in batches]
