"""Event time (GeneratorConfig.timestampForEvent): event n happens n / rate seconds after the start,
truncated to the millisecond as Nexmark's are."""

from __future__ import annotations

import numpy as np

from bench.nexmark.config import NexmarkConfig


class EventClock:
    def __init__(self, config: NexmarkConfig) -> None:
        self._start_us = config.start_us
        self._inter_event_delay_us = 1_000_000.0 / config.rate

    def millis_after_start(self, ids: np.ndarray) -> np.ndarray:
        """Milliseconds from the start to each event (int64)."""
        return np.floor(ids.astype(np.float64) * self._inter_event_delay_us).astype(np.int64) // 1000

    def micros(self, ids: np.ndarray) -> np.ndarray:
        """Each event's time in microseconds since 1970-01-01 UTC (int64)."""
        return self.to_micros(self.millis_after_start(ids))

    def to_micros(self, millis_after_start: np.ndarray) -> np.ndarray:
        return self._start_us + millis_after_start * 1000
