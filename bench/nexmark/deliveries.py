"""Deliveries: the events in arrival order, split into consecutive parts and landed one part at a
time. `generate(NexmarkConfig(...), Landing(out, deliveries))` yields each delivery once its files
are in place, so a caller can run a stream between deliveries."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

import numpy as np

from bench.nexmark.arrival import arrival_order, delivery_bounds
from bench.nexmark.config import Landing, NexmarkConfig
from bench.nexmark.event_kind import Sources
from bench.nexmark.kinds import KINDS
from bench.nexmark.landing import DeliveryFiles, prepare

SEGMENT = 1 << 19  # arrivals built and written at a time (a row group per kind), to bound memory


@dataclass(frozen=True)
class Delivery:
    """A landed delivery: its number (from 1), its file and row count per kind (`person`, `auction`, `bid`)."""

    number: int
    files: Mapping[str, Path]
    rows: Mapping[str, int]

    @property
    def events(self) -> int:
        return sum(self.rows.values())


def generate(config: NexmarkConfig, landing: Landing) -> Iterator[Delivery]:
    """Land the events in `landing.deliveries` deliveries, in arrival order, yielding each once its
    files are in place. Checks the landing (raising ConfigError) before anything is written."""
    landing.check(config)
    prepare(landing, KINDS)
    return _deliveries(config, landing)


def _deliveries(config: NexmarkConfig, landing: Landing) -> Iterator[Delivery]:
    sources = Sources.of(config)
    order = arrival_order(config, sources.draws, sources.clock)
    bounds = delivery_bounds(config.events, landing.deliveries)
    for number in range(1, landing.deliveries + 1):
        with DeliveryFiles(landing, number, KINDS) as files:
            for first in range(bounds[number - 1], bounds[number], SEGMENT):
                ids = order[first : min(first + SEGMENT, bounds[number])]
                for kind in KINDS:
                    files.write(kind, kind.table(ids[kind.owns(ids)], sources))
        yield Delivery(number, dict(files.paths), dict(files.rows))


def event_ids_in_arrival_order(config: NexmarkConfig) -> np.ndarray:
    """Every event id in the order the events arrive (what the deliveries split)."""
    sources = Sources.of(config)
    return arrival_order(config, sources.draws, sources.clock)
