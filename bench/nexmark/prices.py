"""Nexmark's prices (PriceGenerator): log-uniform from $1 to $1,000,000, in cents."""

from __future__ import annotations

import numpy as np

from bench.nexmark.draws import Draws


def next_price(ids: np.ndarray, draws: Draws, field: int) -> np.ndarray:
    """round(10^(6u) * 100) cents per event (int64), u uniform in [0, 1)."""
    return np.floor(np.power(10.0, draws.unit(ids, field) * 6.0) * 100.0 + 0.5).astype(np.int64)
