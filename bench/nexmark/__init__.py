"""A seeded, deterministic Nexmark event generator that lands parquet deliveries (README.md here)."""

from bench.nexmark.config import ConfigError, Landing, NexmarkConfig
from bench.nexmark.deliveries import Delivery, event_ids_in_arrival_order, generate
from bench.nexmark.kinds import KINDS, EventKind

__all__ = [
    "KINDS",
    "ConfigError",
    "Delivery",
    "EventKind",
    "Landing",
    "NexmarkConfig",
    "event_ids_in_arrival_order",
    "generate",
]
