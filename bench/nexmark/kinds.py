"""Nexmark's three event kinds, in the order of their offsets in each epoch of 50 events."""

from __future__ import annotations

from bench.nexmark.auction import Auction
from bench.nexmark.bid import Bid
from bench.nexmark.event_kind import EventKind
from bench.nexmark.person import Person

KINDS: tuple[EventKind, ...] = (Person(), Auction(), Bid())

__all__ = ["KINDS", "EventKind"]
