"""The order events arrive in: by event time, except that a seeded share of them (delayed_share)
arrive up to max_delay_s late. An event then never arrives after one more than max_delay_s younger
than itself, so a watermark max_delay_s behind the latest event time sees no late event."""

from __future__ import annotations

import numpy as np

from bench.nexmark.clock import EventClock
from bench.nexmark.config import NexmarkConfig
from bench.nexmark.draws import Draws
from bench.nexmark.event_kind import ARRIVAL_DELAY_FIELD, ARRIVAL_DELAYED_FIELD

_CHUNK = 1 << 22  # events per step while drawing the arrival times, to bound the temporaries


def arrival_micros(ids: np.ndarray, config: NexmarkConfig, draws: Draws, clock: EventClock) -> np.ndarray:
    """When each event arrives, in event-time microseconds: its time plus its delay (0 if on time)."""
    delayed = draws.unit(ids, ARRIVAL_DELAYED_FIELD) < config.delayed_share
    delay = np.where(delayed, draws.below(ids, ARRIVAL_DELAY_FIELD, config.max_delay_us + 1), 0)
    return clock.micros(ids) + delay


def arrival_order(config: NexmarkConfig, draws: Draws, clock: EventClock) -> np.ndarray:
    """Every event id (int64), in the order the events arrive; ties by event id."""
    arrives = np.empty(config.events, dtype=np.int64)
    for first in range(0, config.events, _CHUNK):
        ids = np.arange(first, min(first + _CHUNK, config.events), dtype=np.int64)
        arrives[first : first + len(ids)] = arrival_micros(ids, config, draws, clock)
    return np.argsort(arrives, kind="stable")


def delivery_bounds(events: int, deliveries: int) -> list[int]:
    """Where each delivery starts in the arrival order, then the end: as equal as whole events allow."""
    return [k * events // deliveries for k in range(deliveries + 1)]
