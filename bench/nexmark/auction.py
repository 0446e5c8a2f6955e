"""New auctions (AuctionGenerator): three per 50 events, ids counting up from 1000, each by a recent
seller (mostly the hot one) and open until a time about numInFlightAuctions auctions ahead."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from bench.nexmark.event_kind import FIRST_KIND_FIELD, TIMESTAMP, EventKind, Sources
from bench.nexmark.ids import (
    AUCTION_PROPORTION,
    FIRST_AUCTION_ID,
    FIRST_CATEGORY_ID,
    FIRST_PERSON_ID,
    HOT_RATIO,
    PERSON_PROPORTION,
    TOTAL_PROPORTION,
    hot,
    last_base0_auction_id,
    last_base0_person_id,
    next_base0_person_id,
)
from bench.nexmark.prices import next_price
from bench.nexmark.text import lengths_of

NUM_CATEGORIES = 5
AVERAGE_SIZE = 500  # avgAuctionByteSize

_F = FIRST_KIND_FIELD
HOT_SELLER, SELLER, CATEGORY, INITIAL_BID, RESERVE, LENGTH, ITEM_NAME, DESCRIPTION, EXTRA = (
    _F,
    _F + 1,
    _F + 2,
    _F + 3,
    _F + 4,
    _F + 5,
    _F + 6,
    _F + 8,
    _F + 10,
)


class Auction(EventKind):
    name = "auction"
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("itemName", pa.string()),
            ("description", pa.string()),
            ("initialBid", pa.int64()),
            ("reserve", pa.int64()),
            ("dateTime", TIMESTAMP),
            ("expires", TIMESTAMP),
            ("seller", pa.int64()),
            ("category", pa.int64()),
            ("extra", pa.string()),
        ]
    )
    first_offset = PERSON_PROPORTION
    end_offset = PERSON_PROPORTION + AUCTION_PROPORTION

    def table(self, ids: np.ndarray, sources: Sources) -> pa.Table:
        config, draws, clock, text = sources.config, sources.draws, sources.clock, sources.text
        hot_seller = (last_base0_person_id(ids) // HOT_RATIO) * HOT_RATIO
        seller = np.where(
            hot(ids, draws, HOT_SELLER, config.hot_sellers_ratio),
            hot_seller,
            next_base0_person_id(ids, draws, SELLER, config),
        )
        initial_bid = next_price(ids, draws, INITIAL_BID)
        millis = clock.millis_after_start(ids)
        # open for 1 ms to twice the time until numInFlightAuctions more auctions are made (nextAuctionLengthMs)
        ahead = (config.num_in_flight_auctions * TOTAL_PROPORTION) // AUCTION_PROPORTION
        horizon = clock.millis_after_start(ids + ahead) - millis
        expires = millis + 1 + draws.below(ids, LENGTH, np.maximum(horizon * 2, 1))
        item_name = text.next_string(ids, draws, ITEM_NAME, 20)
        description = text.next_string(ids, draws, DESCRIPTION, 100)
        size = 8 + lengths_of(item_name) + lengths_of(description) + 8 * 5
        return pa.table(
            [
                pa.array(last_base0_auction_id(ids) + FIRST_AUCTION_ID, pa.int64()),
                item_name,
                description,
                pa.array(initial_bid, pa.int64()),
                pa.array(initial_bid + next_price(ids, draws, RESERVE), pa.int64()),
                pa.array(clock.to_micros(millis), TIMESTAMP),
                pa.array(clock.to_micros(expires), TIMESTAMP),
                pa.array(seller + FIRST_PERSON_ID, pa.int64()),
                pa.array(FIRST_CATEGORY_ID + draws.below(ids, CATEGORY, NUM_CATEGORIES), pa.int64()),
                text.next_extra(ids, draws, EXTRA, size, AVERAGE_SIZE),
            ],
            schema=self.schema,
        )
