"""The command: generate Nexmark events and land them as parquet deliveries (README.md here).

    python -m bench.nexmark.generate --events 200000 --seed 1 --deliveries 4 --out /tmp/nexmark

A bad option ends with one line naming it and the fix, and exit code 2."""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import NoReturn, Optional, Sequence

from bench.nexmark import config as defaults
from bench.nexmark.config import ConfigError, Landing, NexmarkConfig
from bench.nexmark.deliveries import generate
from bench.nexmark.kinds import KINDS


def _start(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO 8601 time; pass e.g. --start 2026-01-01T00:00:00"
        ) from None


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m bench.nexmark.generate",
        description="Generate Nexmark events (seeded) into parquet landing folders out/person, out/auction, "
        "out/bid: the events in arrival order split into --deliveries consecutive parts, one file per kind each.",
    )
    parser.add_argument("--events", type=int, required=True, help="how many events (persons, auctions and bids)")
    parser.add_argument("--out", type=Path, required=True, help="the folder to make person/, auction/, bid/ in")
    parser.add_argument("--seed", type=int, default=0, help="the same seed and --events give the same events")
    parser.add_argument("--deliveries", type=int, default=1, help="how many files per kind (default 1)")
    parser.add_argument(
        "--rate", type=float, default=defaults.DEFAULT_RATE, help="events per second of event time (Nexmark: 10000)"
    )
    parser.add_argument(
        "--start",
        type=_start,
        default=defaults.DEFAULT_START,
        help="the first event's time, ISO 8601, UTC unless an offset is given (default 2026-01-01T00:00:00)",
    )
    parser.add_argument(
        "--max-delay-s",
        type=float,
        default=defaults.DEFAULT_MAX_DELAY_S,
        help="a delayed event arrives up to this many seconds after its time (Nexmark's occasionalDelaySec: 3)",
    )
    parser.add_argument(
        "--delayed-share",
        type=float,
        default=defaults.DEFAULT_DELAYED_SHARE,
        help="the share of events that arrive delayed (Nexmark's probDelayedEvent: 0.1)",
    )
    parser.add_argument("--hot-auction-ratio", type=int, default=2, help="1 - 1/ratio of bids on the hot auction")
    parser.add_argument("--hot-sellers-ratio", type=int, default=4, help="1 - 1/ratio of auctions by the hot seller")
    parser.add_argument("--hot-bidders-ratio", type=int, default=4, help="1 - 1/ratio of bids by the hot bidder")
    parser.add_argument("--overwrite", action="store_true", help="replace the files of an earlier run in --out")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        config = NexmarkConfig(
            events=args.events,
            seed=args.seed,
            rate=args.rate,
            start=args.start,
            max_delay_s=args.max_delay_s,
            delayed_share=args.delayed_share,
            hot_auction_ratio=args.hot_auction_ratio,
            hot_sellers_ratio=args.hot_sellers_ratio,
            hot_bidders_ratio=args.hot_bidders_ratio,
        )
        landing = Landing(args.out, deliveries=args.deliveries, overwrite=args.overwrite)
        for delivery in generate(config, landing):
            counts = ", ".join(f"{rows:,} {kind}" for kind, rows in delivery.rows.items())
            print(f"delivery {delivery.number}/{landing.deliveries}: {counts}", flush=True)
    except ConfigError as error:
        parser.exit(2, f"{parser.prog}: {error}\n")
    seconds = time.perf_counter() - started
    print(f"{config.events:,} events in {seconds:.1f} s into {landing.out} ({', '.join(k.name for k in KINDS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
