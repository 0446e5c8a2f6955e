"""Nexmark's event ids and the ids events refer to (GeneratorConfig, PersonGenerator,
AuctionGenerator): event n is a person, an auction or a bid by n mod 50; a bid names a recent
auction and person, an auction a recent person, up to a few ids ahead as Nexmark does."""

from __future__ import annotations

import numpy as np

from bench.nexmark.config import NexmarkConfig
from bench.nexmark.draws import Draws

PERSON_PROPORTION = 1
AUCTION_PROPORTION = 3
BID_PROPORTION = 46
TOTAL_PROPORTION = PERSON_PROPORTION + AUCTION_PROPORTION + BID_PROPORTION

FIRST_PERSON_ID = 1000
FIRST_AUCTION_ID = 1000
FIRST_CATEGORY_ID = 10
PERSON_ID_LEAD = 10  # a random person may be up to this many ids ahead of the last one generated
AUCTION_ID_LEAD = 10
HOT_RATIO = 100  # the hot auction / seller / bidder is the first (bidder: second) of each 100 ids


def offsets(ids: np.ndarray) -> np.ndarray:
    """Where each event falls in its epoch of 50: 0 a person, 1–3 an auction, 4–49 a bid."""
    return ids % TOTAL_PROPORTION


def last_base0_person_id(ids: np.ndarray) -> np.ndarray:
    """The last person id (from 0) generated at or before each event."""
    offset = np.minimum(offsets(ids), PERSON_PROPORTION - 1)
    return (ids // TOTAL_PROPORTION) * PERSON_PROPORTION + offset


def last_base0_auction_id(ids: np.ndarray) -> np.ndarray:
    """The last auction id (from 0) generated at or before each auction or bid event."""
    epoch = ids // TOTAL_PROPORTION
    offset = offsets(ids)
    is_person = offset < PERSON_PROPORTION
    is_bid = offset >= PERSON_PROPORTION + AUCTION_PROPORTION
    epoch = np.where(is_person, epoch - 1, epoch)
    offset = np.where(is_person | is_bid, AUCTION_PROPORTION - 1, offset - PERSON_PROPORTION)
    return epoch * AUCTION_PROPORTION + offset


def next_base0_person_id(ids: np.ndarray, draws: Draws, field: int, config: NexmarkConfig) -> np.ndarray:
    """A random person among the active (recent) ones, or up to PERSON_ID_LEAD ids ahead."""
    people = last_base0_person_id(ids) + 1
    active = np.minimum(people, config.num_active_people)
    return people - active + draws.below(ids, field, active + PERSON_ID_LEAD)


def next_base0_auction_id(ids: np.ndarray, draws: Draws, field: int, config: NexmarkConfig) -> np.ndarray:
    """A random auction among those likely still open (the last numInFlightAuctions), or a few ahead."""
    last = last_base0_auction_id(ids)
    low = np.maximum(last - config.num_in_flight_auctions, 0)
    return low + draws.below(ids, field, last - low + 1 + AUCTION_ID_LEAD)


def hot(ids: np.ndarray, draws: Draws, field: int, ratio: int) -> np.ndarray:
    """True for the events that pick the hot id: `random.nextInt(ratio) > 0`, 1 - 1/ratio of them."""
    return draws.below(ids, field, ratio) > 0
