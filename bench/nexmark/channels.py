"""The channels bids come through (BidGenerator): four hot ones and channel-0 .. channel-9999, each
with a URL drawn once per seed."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from bench.nexmark.text import java_next_string, seeded_rng

HOT_CHANNELS = ["Google", "Facebook", "Baidu", "Apple"]
CHANNELS_NUMBER = 10_000


class Channels:
    """The seeded channel table: row i < 4 is hot channel i, row 4 + i is channel-i."""

    def __init__(self, seed: int) -> None:
        rng = seeded_rng(seed, 2)
        names = list(HOT_CHANNELS)
        urls = [_base_url(rng) for _ in HOT_CHANNELS]
        for i in range(CHANNELS_NUMBER):
            url = _base_url(rng)
            if rng.integers(10) > 0:  # 9 in 10 URLs name their channel
                url += f"&channel_id={_java_abs_reversed(i)}"
            names.append(f"channel-{i}")
            urls.append(url)
        self.names = pa.array(names)
        self.urls = pa.array(urls)


def _base_url(rng: np.random.Generator) -> str:
    parts = [java_next_string(rng, 5, "_") for _ in range(3)]
    return "https://www.nexmark.com/" + "/".join(parts) + "/item.htm?query=1"


def _java_abs_reversed(i: int) -> int:
    """Math.abs(Integer.reverse(i)), with Java's 32-bit wrap-around (i = 1 gives -2147483648)."""
    reversed_bits = int(f"{i:032b}"[::-1], 2)
    signed = reversed_bits - (1 << 32) if reversed_bits >= 1 << 31 else reversed_bits
    return signed if signed == -(1 << 31) else abs(signed)
