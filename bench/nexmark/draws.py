"""Random draws that are a function of (seed, event id, field) alone — SplitMix64 over a counter — so
an event's values do not depend on which other events are generated with it, in what order or how
many at once: the same seed gives the same events in 1 delivery or in N."""

from __future__ import annotations

import numpy as np

FIELDS = 32  # draws per event id; each kind numbers its own (an event id is of one kind)
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_MASK = (1 << 64) - 1
_UNIT = 1.0 / (1 << 53)


def _mix(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


class Draws:
    """Uniform draws for arrays of event ids; `field` (0 ≤ field < FIELDS) names one draw of an event."""

    def __init__(self, seed: int) -> None:
        self._key = np.uint64(int(_mix(np.array([seed & _MASK], dtype=np.uint64))[0]))

    def bits(self, ids: np.ndarray, field: int) -> np.ndarray:
        """64 random bits per id (uint64)."""
        assert 0 <= field < FIELDS
        counter = ids.astype(np.uint64) * np.uint64(FIELDS) + np.uint64(field)
        return _mix(counter * _GAMMA + self._key)

    def unit(self, ids: np.ndarray, field: int) -> np.ndarray:
        """A float in [0, 1) per id."""
        return (self.bits(ids, field) >> np.uint64(11)).astype(np.float64) * _UNIT

    def below(self, ids: np.ndarray, field: int, bound: np.ndarray | int) -> np.ndarray:
        """An int64 in [0, bound) per id (Java's `random.nextInt(bound)`); `bound` ≥ 1, scalar or per id."""
        return np.floor(self.unit(ids, field) * bound).astype(np.int64)
