"""Nexmark's random strings (StringsGenerator), vectorised: each string is a slice of a seeded pool of
random characters, at an offset and of a length drawn for its event, so building a column is one
gather rather than a loop over characters."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.lib.stride_tricks import sliding_window_view

from bench.nexmark.draws import Draws

MIN_STRING_LENGTH = 3
POOL_SIZE = 1 << 22
MAX_SLICE = 1024  # longer than any string drawn: auction extras are at most ~600 characters
_SPACE_ODDS = 13  # nextString writes a space (or the special character) 1 time in 13


def seeded_rng(seed: int, purpose: int) -> np.random.Generator:
    """A numpy generator for the seeded tables built once (pools, channel URLs), one per purpose."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed & ((1 << 64) - 1), purpose])))


def java_next_string(rng: np.random.Generator, max_length: int, special: str = " ") -> str:
    """One string as StringsGenerator.nextString: 3 to max_length - 1 characters, a–z or (1 in 13)
    `special`, trimmed of spaces."""
    length = MIN_STRING_LENGTH + int(rng.integers(max_length - MIN_STRING_LENGTH))
    letters = rng.integers(ord("a"), ord("z") + 1, length)
    specials = rng.integers(_SPACE_ODDS, size=length) == 0
    return "".join(special if s else chr(c) for c, s in zip(letters, specials)).strip(" ")


class Text:
    """The seeded character pools and the string columns cut from them."""

    def __init__(self, seed: int) -> None:
        rng = seeded_rng(seed, 1)
        self._letters = rng.integers(ord("a"), ord("z") + 1, POOL_SIZE, dtype=np.uint8)
        words = rng.integers(ord("a"), ord("z") + 1, POOL_SIZE, dtype=np.uint8)
        words[rng.integers(_SPACE_ODDS, size=POOL_SIZE) == 0] = ord(" ")
        self._words = words

    def next_string(self, ids: np.ndarray, draws: Draws, field: int, max_length: int) -> pa.Array:
        """nextString(max_length) per event: 3 to max_length - 1 characters, a–z and (1 in 13) spaces,
        trimmed. Uses draws `field` and `field + 1`."""
        lengths = MIN_STRING_LENGTH + draws.below(ids, field, max_length - MIN_STRING_LENGTH)
        raw = _slices(self._words, draws.below(ids, field + 1, POOL_SIZE - MAX_SLICE), lengths)
        return pc.utf8_trim(raw, characters=" ")

    def next_extra(
        self, ids: np.ndarray, draws: Draws, field: int, current_size: np.ndarray, average_size: int
    ) -> pa.Array:
        """nextExtra: a–z padding so that current_size + its length averages average_size (±20%).
        Uses draws `field` and `field + 1`."""
        wanted = average_size - current_size
        delta = np.floor(wanted * 0.2 + 0.5).astype(np.int64)  # Java's Math.round
        spread = np.where(delta > 0, draws.below(ids, field, np.maximum(2 * delta, 1)), 0)
        lengths = np.where(current_size > average_size, 0, wanted - delta + spread)
        return _slices(self._letters, draws.below(ids, field + 1, POOL_SIZE - MAX_SLICE), lengths)


def _slices(pool: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """A string array of pool[start:start + length] per row."""
    lengths = lengths.astype(np.int64)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    widest = int(lengths.max()) if len(lengths) else 0
    assert widest <= MAX_SLICE
    if widest == 0:
        data = np.zeros(0, dtype=np.uint8)
    else:
        rows = sliding_window_view(pool, widest)[starts]  # (rows, widest): a copy, then the wanted prefixes
        data = rows[np.arange(widest) < lengths[:, None]]
    return pa.StringArray.from_buffers(len(lengths), pa.py_buffer(offsets), pa.py_buffer(data))


def lengths_of(strings: pa.Array) -> np.ndarray:
    """Each string's length in characters (all are ASCII), as int64."""
    return pc.utf8_length(strings).to_numpy(zero_copy_only=False).astype(np.int64)
