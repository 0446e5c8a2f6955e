"""What to generate (`NexmarkConfig`) and where to land it (`Landing`), checked when made: a bad value
raises `ConfigError` with one line naming the command-line option and the fix."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

# Nexmark's defaults (NexmarkConfiguration): the rate and the skews
DEFAULT_RATE = 10_000.0  # firstEventRate, events per second of event time
DEFAULT_DELAYED_SHARE = 0.1  # probDelayedEvent
DEFAULT_MAX_DELAY_S = 3.0  # occasionalDelaySec
DEFAULT_START = datetime(2026, 1, 1)
EPOCH = datetime(1970, 1, 1)
LAST_TIME = datetime(9999, 12, 31)


class ConfigError(ValueError):
    """A value the generator cannot use; the message is one line: the option, what was wrong, the fix."""


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


@dataclass(frozen=True)
class NexmarkConfig:
    """The events: how many, their seed, their event-time rate and start, how far out of order they
    arrive, and Nexmark's skews. The same config gives the same events, however they are landed."""

    events: int
    seed: int = 0
    rate: float = DEFAULT_RATE
    start: datetime = DEFAULT_START  # the first event's time; a naive time is UTC
    max_delay_s: float = DEFAULT_MAX_DELAY_S  # a delayed event arrives up to this much after its time
    delayed_share: float = DEFAULT_DELAYED_SHARE  # the share of events that arrive delayed
    hot_auction_ratio: int = 2  # 1 - 1/ratio of the bids go to the hot auction
    hot_sellers_ratio: int = 4  # 1 - 1/ratio of the auctions are the hot seller's
    hot_bidders_ratio: int = 4  # 1 - 1/ratio of the bids are the hot bidder's
    num_in_flight_auctions: int = 100  # a bid's auction is among this many recent ones (or a hot one)
    num_active_people: int = 1000  # a bidder or seller is among this many recent people (or a hot one)
    start_us: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _whole(self, "events", minimum=1, example="--events 200000")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ConfigError(f"--seed must be a whole number (got {self.seed!r}); pass e.g. --seed 1")
        _positive(self, "rate", example="--rate 10000")
        _at_least_zero(self, "max_delay_s", example="--max-delay-s 2")
        if not _real(self.delayed_share) or not 0.0 <= self.delayed_share <= 1.0:
            raise ConfigError(
                f"--delayed-share must be between 0 and 1 (got {self.delayed_share!r}); "
                "pass the share of events that arrive late, e.g. --delayed-share 0.1"
            )
        for name in ("hot_auction_ratio", "hot_sellers_ratio", "hot_bidders_ratio"):
            _whole(self, name, minimum=1, example=f"{_option(name)} 2 (1 turns the hot {name.split('_')[1]} off)")
        _whole(self, "num_in_flight_auctions", minimum=1, example="--num-in-flight-auctions 100")
        _whole(self, "num_active_people", minimum=1, example="--num-active-people 1000")
        start = self.start
        if start.tzinfo is not None:
            start = start.astimezone(timezone.utc).replace(tzinfo=None)
        object.__setattr__(self, "start", start)
        last = (start - EPOCH).total_seconds() + (self.events - 1) / self.rate
        if start < EPOCH or last + self.max_delay_s > (LAST_TIME - EPOCH).total_seconds():
            raise ConfigError(
                f"--start {start.isoformat()} with --events {self.events} at --rate {self.rate:g} puts events "
                "outside 1970-01-01 .. 9999-12-31; pass a --start in that range or a higher --rate"
            )
        delta = start - EPOCH
        object.__setattr__(self, "start_us", (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds)

    @property
    def max_delay_us(self) -> int:
        return round(self.max_delay_s * 1_000_000)


@dataclass(frozen=True)
class Landing:
    """Where the events land: one folder per kind under `out`, the events in arrival order split into
    `deliveries` consecutive parts, each part one parquet file per kind."""

    out: Path
    deliveries: int = 1
    overwrite: bool = False  # replace the kind folders' files of an earlier generation

    def __post_init__(self) -> None:
        object.__setattr__(self, "out", Path(self.out))
        _whole(self, "deliveries", minimum=1, example="--deliveries 4")

    def check(self, config: NexmarkConfig) -> None:
        """Raise `ConfigError` if these deliveries cannot split those events."""
        if self.deliveries > config.events:
            raise ConfigError(
                f"--deliveries {self.deliveries} is more than --events {config.events}: every delivery needs an "
                f"event; pass at most --deliveries {config.events}"
            )


def _whole(owner: object, name: str, *, minimum: int, example: str) -> None:
    value = getattr(owner, name)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(
            f"{_option(name)} must be a whole number of at least {minimum} (got {value!r}); pass e.g. {example}"
        )


def _positive(owner: object, name: str, *, example: str) -> None:
    value = getattr(owner, name)
    if not _real(value) or not value > 0:
        raise ConfigError(f"{_option(name)} must be a number above 0 (got {value!r}); pass e.g. {example}")


def _at_least_zero(owner: object, name: str, *, example: str) -> None:
    value = getattr(owner, name)
    if not _real(value) or not value >= 0:
        raise ConfigError(f"{_option(name)} must be a number of 0 or more (got {value!r}); pass e.g. {example}")


def _real(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
