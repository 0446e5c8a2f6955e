"""An event kind (person, auction, bid): which event ids it owns and how it builds their rows, from
the shared seeded sources."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pyarrow as pa

from bench.nexmark.channels import Channels
from bench.nexmark.clock import EventClock
from bench.nexmark.config import NexmarkConfig
from bench.nexmark.draws import Draws
from bench.nexmark.ids import offsets
from bench.nexmark.text import Text

# the draws of an event's arrival; a kind numbers its own draws from FIRST_KIND_FIELD
ARRIVAL_DELAYED_FIELD = 0
ARRIVAL_DELAY_FIELD = 1
FIRST_KIND_FIELD = 2

TIMESTAMP = pa.timestamp("us", tz="UTC")  # Spark's TIMESTAMP, as the landing tables declare it


@dataclass(frozen=True)
class Sources:
    """Everything an event's values are drawn from: the config, the per-event draws, the clock and the
    seeded tables (text pools, channels)."""

    config: NexmarkConfig
    draws: Draws
    clock: EventClock
    text: Text
    channels: Channels

    @classmethod
    def of(cls, config: NexmarkConfig) -> Sources:
        return cls(config, Draws(config.seed), EventClock(config), Text(config.seed), Channels(config.seed))


class EventKind(ABC):
    """One of Nexmark's three kinds. Event n is of the kind whose offsets hold n mod 50."""

    name: ClassVar[str]
    schema: ClassVar[pa.Schema]
    first_offset: ClassVar[int]  # its offsets in the epoch of 50: first_offset <= n % 50 < end_offset
    end_offset: ClassVar[int]

    def owns(self, ids: np.ndarray) -> np.ndarray:
        """True for the event ids of this kind."""
        offset = offsets(ids)
        return (offset >= self.first_offset) & (offset < self.end_offset)

    @abstractmethod
    def table(self, ids: np.ndarray, sources: Sources) -> pa.Table:
        """The rows of these events (all of this kind), in the order given, with `schema`."""

    def __repr__(self) -> str:
        return self.name
