"""Bids (BidGenerator): 46 per 50 events, each on a recent auction (half of them the hot one) by a
recent person (three in four the hot bidder), through a channel (half of them one of four hot ones)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from bench.nexmark.channels import CHANNELS_NUMBER, HOT_CHANNELS
from bench.nexmark.event_kind import FIRST_KIND_FIELD, TIMESTAMP, EventKind, Sources
from bench.nexmark.ids import (
    AUCTION_PROPORTION,
    FIRST_AUCTION_ID,
    FIRST_PERSON_ID,
    HOT_RATIO,
    PERSON_PROPORTION,
    TOTAL_PROPORTION,
    hot,
    last_base0_auction_id,
    last_base0_person_id,
    next_base0_auction_id,
    next_base0_person_id,
)
from bench.nexmark.prices import next_price

HOT_CHANNELS_RATIO = 2
AVERAGE_SIZE = 100  # avgBidByteSize
FIXED_SIZE = 8 * 4  # auction, bidder, price, dateTime: what nextExtra pads up to AVERAGE_SIZE

_F = FIRST_KIND_FIELD
HOT_AUCTION, AUCTION, HOT_BIDDER, BIDDER, PRICE, HOT_CHANNEL, CHANNEL, EXTRA = (
    _F,
    _F + 1,
    _F + 2,
    _F + 3,
    _F + 4,
    _F + 5,
    _F + 6,
    _F + 7,
)


class Bid(EventKind):
    name = "bid"
    schema = pa.schema(
        [
            ("auction", pa.int64()),
            ("bidder", pa.int64()),
            ("price", pa.int64()),
            ("channel", pa.string()),
            ("url", pa.string()),
            ("dateTime", TIMESTAMP),
            ("extra", pa.string()),
        ]
    )
    first_offset = PERSON_PROPORTION + AUCTION_PROPORTION
    end_offset = TOTAL_PROPORTION

    def table(self, ids: np.ndarray, sources: Sources) -> pa.Table:
        config, draws = sources.config, sources.draws
        hot_auction = (last_base0_auction_id(ids) // HOT_RATIO) * HOT_RATIO
        auction = np.where(
            hot(ids, draws, HOT_AUCTION, config.hot_auction_ratio),
            hot_auction,
            next_base0_auction_id(ids, draws, AUCTION, config),
        )
        # the second person of the batch of 100, so that hot bidders and hot sellers differ
        hot_bidder = (last_base0_person_id(ids) // HOT_RATIO) * HOT_RATIO + 1
        bidder = np.where(
            hot(ids, draws, HOT_BIDDER, config.hot_bidders_ratio),
            hot_bidder,
            next_base0_person_id(ids, draws, BIDDER, config),
        )
        # a row of the channel table: one of the hot channels for 1 - 1/HOT_CHANNELS_RATIO of the bids
        pick = draws.below(ids, CHANNEL, CHANNELS_NUMBER)
        is_hot = draws.below(ids, HOT_CHANNEL, HOT_CHANNELS_RATIO) > 0
        channel = np.where(is_hot, pick % len(HOT_CHANNELS), len(HOT_CHANNELS) + pick)
        channels = sources.channels
        size = np.full(len(ids), FIXED_SIZE, dtype=np.int64)
        return pa.table(
            [
                pa.array(auction + FIRST_AUCTION_ID, pa.int64()),
                pa.array(bidder + FIRST_PERSON_ID, pa.int64()),
                pa.array(next_price(ids, draws, PRICE), pa.int64()),
                channels.names.take(channel),
                channels.urls.take(channel),
                pa.array(sources.clock.micros(ids), TIMESTAMP),
                sources.text.next_extra(ids, draws, EXTRA, size, AVERAGE_SIZE),
            ],
            schema=self.schema,
        )
