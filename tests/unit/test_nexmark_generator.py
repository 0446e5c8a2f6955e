"""The Nexmark generator (bench/nexmark) without Spark: its events follow Nexmark's rules, the same
seed lands the same events in 1 or in N deliveries, arrivals are out of order by at most the
configured delay, bad options get a one-line error, and files land whole."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Dict, List

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bench.nexmark import KINDS, ConfigError, Landing, NexmarkConfig, event_ids_in_arrival_order, generate
from bench.nexmark.bid import Bid
from bench.nexmark.event_kind import Sources
from bench.nexmark.generate import main
from bench.nexmark.landing import DeliveryFiles

START = datetime(2026, 1, 1)
START_US = int((START - datetime(1970, 1, 1)).total_seconds()) * 1_000_000
# 1,000 events per second: one event per millisecond, so an event's number is its time since START
CONFIG = NexmarkConfig(events=5_000, seed=7, rate=1_000, start=START, max_delay_s=2.0, delayed_share=0.3)
MAX_DELAY_US = 2_000_000


def land(config: NexmarkConfig, out: Path, deliveries: int = 1) -> List[Dict[str, pa.Table]]:
    """Generate, and read back each delivery's tables by kind."""
    landed = []
    for delivery in generate(config, Landing(out, deliveries=deliveries)):
        landed.append({kind: pq.read_table(path) for kind, path in delivery.files.items()})
    return landed


def in_arrival_order(deliveries: List[Dict[str, pa.Table]], kind: str) -> pa.Table:
    return pa.concat_tables([delivery[kind] for delivery in deliveries])


def micros(table: pa.Table, column: str = "dateTime") -> np.ndarray:
    return table[column].cast(pa.int64()).to_numpy()


def numbers(table: pa.Table) -> np.ndarray:
    """The events' numbers, from their times (CONFIG's rate: one event per millisecond)."""
    return (micros(table) - START_US) // 1000


@pytest.fixture(scope="module")
def landed_once(tmp_path_factory) -> List[Dict[str, pa.Table]]:
    return land(CONFIG, tmp_path_factory.mktemp("once"))


@pytest.fixture(scope="module")
def landed_in_four(tmp_path_factory) -> List[Dict[str, pa.Table]]:
    return land(CONFIG, tmp_path_factory.mktemp("four"), deliveries=4)


def test_each_kind_has_nexmark_columns(landed_once):
    stamp = pa.timestamp("us", tz="UTC")
    assert {kind: list(zip(table.schema.names, table.schema.types)) for kind, table in landed_once[0].items()} == {
        "person": [
            ("id", pa.int64()),
            ("name", pa.string()),
            ("emailAddress", pa.string()),
            ("creditCard", pa.string()),
            ("city", pa.string()),
            ("state", pa.string()),
            ("dateTime", stamp),
            ("extra", pa.string()),
        ],
        "auction": [
            ("id", pa.int64()),
            ("itemName", pa.string()),
            ("description", pa.string()),
            ("initialBid", pa.int64()),
            ("reserve", pa.int64()),
            ("dateTime", stamp),
            ("expires", stamp),
            ("seller", pa.int64()),
            ("category", pa.int64()),
            ("extra", pa.string()),
        ],
        "bid": [
            ("auction", pa.int64()),
            ("bidder", pa.int64()),
            ("price", pa.int64()),
            ("channel", pa.string()),
            ("url", pa.string()),
            ("dateTime", stamp),
            ("extra", pa.string()),
        ],
    }


def test_event_n_is_a_person_an_auction_or_a_bid_by_n_mod_50(landed_once):
    person, auction, bid = (landed_once[0][kind] for kind in ("person", "auction", "bid"))
    n_person, n_auction, n_bid = numbers(person), numbers(auction), numbers(bid)
    # every event exactly once, and each epoch of 50 holds 1 person, 3 auctions, 46 bids
    assert sorted(np.concatenate([n_person, n_auction, n_bid]).tolist()) == list(range(CONFIG.events))
    for n, per_epoch in ((n_person, 1), (n_auction, 3), (n_bid, 46)):
        assert np.bincount(n // 50, minlength=100).tolist() == [per_epoch] * 100
    assert set((n_person % 50).tolist()) == {0}
    assert set((n_auction % 50).tolist()) == {1, 2, 3}
    assert set((n_bid % 50).tolist()) == set(range(4, 50))
    # ids count up from 1000 with the events: person n // 50, auction 3 (n // 50) + (n % 50 - 1)
    assert (person["id"].to_numpy() == 1000 + n_person // 50).all()
    assert (auction["id"].to_numpy() == 1000 + 3 * (n_auction // 50) + n_auction % 50 - 1).all()


def test_the_same_seed_lands_the_same_events_in_one_or_four_deliveries(landed_once, landed_in_four, tmp_path):
    assert len(landed_in_four) == 4
    assert [sum(t.num_rows for t in delivery.values()) for delivery in landed_in_four] == [1250] * 4
    for kind in ("person", "auction", "bid"):
        assert in_arrival_order(landed_in_four, kind).equals(landed_once[0][kind]), kind
    again = land(CONFIG, tmp_path / "again")
    assert all(again[0][kind].equals(landed_once[0][kind]) for kind in again[0])
    other = land(replace(CONFIG, seed=8), tmp_path / "other")
    assert not other[0]["bid"]["price"].equals(landed_once[0]["bid"]["price"])
    assert not other[0]["person"]["name"].equals(landed_once[0]["person"]["name"])


def test_bids_name_open_auctions_and_recent_people_as_nexmark_does(landed_once):
    person, auction, bid = (landed_once[0][kind] for kind in ("person", "auction", "bid"))
    n = numbers(bid)
    last_auction = 3 * (n // 50) + 2  # the last auction made before bid n (ids from 0)
    last_person = n // 50
    chosen = bid["auction"].to_numpy() - 1000
    # a recent auction: among the last 100 (the hot one is the last multiple of 100), or up to 10 ahead
    assert (chosen >= np.maximum(last_auction - 100, 0)).all()
    assert (chosen <= last_auction + 10).all()
    bidder = bid["bidder"].to_numpy() - 1000
    assert (bidder >= np.maximum(last_person + 1 - 1000, 0)).all()
    assert (bidder <= last_person + 10).all()
    seller = auction["seller"].to_numpy() - 1000
    assert (seller <= numbers(auction) // 50 + 10).all()
    # every id named is one generated, or one of the 10 Nexmark lets run ahead of the last generated
    auctions, people = set(auction["id"].to_pylist()), set(person["id"].to_pylist())
    assert set(bid["auction"].to_pylist()) <= auctions | set(range(max(auctions) + 1, max(auctions) + 11))
    assert set(bid["bidder"].to_pylist()) | set(auction["seller"].to_pylist()) <= people | set(
        range(max(people) + 1, max(people) + 11)
    )
    # most name one made before them
    assert (chosen <= last_auction).mean() > 0.9


def hot_shares(config: NexmarkConfig) -> Dict[str, float]:
    """The share of bids on the hot auction and by the hot bidder, and of auctions by the hot seller."""
    sources = Sources.of(config)
    kinds = {kind.name: kind for kind in KINDS}
    ids = np.arange(config.events, dtype=np.int64)
    bid_ids, auction_ids = ids[kinds["bid"].owns(ids)], ids[kinds["auction"].owns(ids)]
    bids, auctions = kinds["bid"].table(bid_ids, sources), kinds["auction"].table(auction_ids, sources)
    hot_auction = (3 * (bid_ids // 50) + 2) // 100 * 100 + 1000
    hot_bidder = (bid_ids // 50) // 100 * 100 + 1 + 1000
    hot_seller = (auction_ids // 50) // 100 * 100 + 1000
    return {
        "auction": float((bids["auction"].to_numpy() == hot_auction).mean()),
        "bidder": float((bids["bidder"].to_numpy() == hot_bidder).mean()),
        "seller": float((auctions["seller"].to_numpy() == hot_seller).mean()),
    }


def test_hot_auction_bidder_and_seller_take_their_share():
    config = NexmarkConfig(events=50_000, seed=3)
    shares = hot_shares(config)  # Nexmark's ratios 2, 4, 4: 1/2, 3/4, 3/4, plus random picks of the hot id
    assert 0.48 < shares["auction"] < 0.53
    assert 0.73 < shares["bidder"] < 0.77
    assert 0.72 < shares["seller"] < 0.79
    skewed = hot_shares(NexmarkConfig(events=50_000, seed=3, hot_auction_ratio=10, hot_bidders_ratio=1))
    assert 0.88 < skewed["auction"] < 0.92
    assert skewed["bidder"] < 0.05


def test_arrivals_are_out_of_order_by_at_most_the_delay(landed_in_four):
    order = event_ids_in_arrival_order(CONFIG)
    assert sorted(order.tolist()) == list(range(CONFIG.events))
    times = START_US + order * 1000
    behind = np.maximum.accumulate(times) - times  # how far each arrival is behind the latest before it
    assert behind.max() <= MAX_DELAY_US
    assert behind.max() > MAX_DELAY_US // 2  # out of order indeed
    assert 0.25 < (behind > 0).mean() < 0.35  # the delayed share: an event on time is behind none
    # the deliveries: no event is more than the delay older than the newest of an earlier delivery
    newest = -1
    for delivery in landed_in_four:
        times = np.concatenate([micros(table) for table in delivery.values()])
        assert times.min() >= newest - MAX_DELAY_US
        newest = max(newest, times.max())
    # and the files' rows are in arrival order
    bids = micros(in_arrival_order(landed_in_four, "bid"))
    assert (np.maximum.accumulate(bids) - bids).max() <= MAX_DELAY_US
    on_time = event_ids_in_arrival_order(replace(CONFIG, max_delay_s=0.0))
    assert order.tolist() != on_time.tolist() == list(range(CONFIG.events))


def test_values_follow_nexmark(landed_once):
    person, auction, bid = (landed_once[0][kind] for kind in ("person", "auction", "bid"))
    assert all(re.fullmatch(r"\d{4} \d{4} \d{4} \d{4}", card) for card in person["creditCard"].to_pylist())
    word = r"([a-z]([a-z ]*[a-z])?)?"  # nextString: letters and spaces, trimmed
    assert all(re.fullmatch(f"{word}@{word}\\.com", e) for e in person["emailAddress"].to_pylist())
    assert set(person["state"].to_pylist()) <= {"AZ", "CA", "ID", "OR", "WA", "WY"}
    assert set(auction["category"].to_pylist()) == {10, 11, 12, 13, 14}
    assert (auction["reserve"].to_numpy() > auction["initialBid"].to_numpy()).all()
    assert (micros(auction, "expires") > micros(auction)).all()
    prices = bid["price"].to_numpy()
    assert prices.min() >= 100 and prices.max() < 100_000_000
    assert 0.3 < (prices < 10_000).mean() < 0.37  # log-uniform: $1 to $100 is a third of the range
    channels = bid["channel"].to_pylist()
    hot = np.isin(channels, ["Google", "Facebook", "Baidu", "Apple"])
    assert 0.45 < hot.mean() < 0.55
    assert all(re.fullmatch(r"channel-\d{1,4}", c) for c, is_hot in zip(channels, hot) if not is_hot)
    assert all(url.startswith("https://www.nexmark.com/") for url in bid["url"].to_pylist())
    # extra pads each kind to Nexmark's average size: bids 100 bytes, 32 of them fixed
    assert 66 < np.mean([len(e) for e in bid["extra"].to_pylist()]) < 69


@pytest.mark.parametrize(
    "argv, option",
    [
        (["--events", "0"], "--events"),
        (["--events", "-5"], "--events"),
        (["--events", "many"], "--events"),
        (["--rate", "-1"], "--rate"),
        (["--rate", "0"], "--rate"),
        (["--rate", "nan"], "--rate"),
        (["--deliveries", "0"], "--deliveries"),
        (["--events", "5", "--deliveries", "6"], "--deliveries"),
        (["--max-delay-s", "-0.5"], "--max-delay-s"),
        (["--delayed-share", "1.5"], "--delayed-share"),
        (["--start", "soon"], "--start"),
        (["--hot-auction-ratio", "0"], "--hot-auction-ratio"),
    ],
)
def test_a_bad_option_is_one_line_naming_it_and_exit_2(argv, option, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--events", "100", "--out", str(tmp_path / "out"), *argv])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert option in err and ("pass" in err or "invalid" in err), err
    assert not (tmp_path / "out" / "bid").exists()


def test_an_earlier_run_is_kept_unless_overwrite(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["--events", "200", "--out", str(out), "--deliveries", "2"]) == 0
    assert "delivery 2/2" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main(["--events", "100", "--out", str(out)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--overwrite" in err and err.count("\n") == 1
    assert len(list((out / "bid").iterdir())) == 2  # untouched
    assert main(["--events", "100", "--out", str(out), "--overwrite"]) == 0
    assert sorted(p.name for p in (out / "bid").iterdir()) == ["delivery-00001.parquet"]
    assert pq.read_table(out / "bid" / "delivery-00001.parquet").num_rows == 92
    with pytest.raises(ConfigError, match="--events must be a whole number of at least 1"):
        NexmarkConfig(events=0)


def listing(out: Path) -> List[str]:
    return sorted(f"{p.parent.name}/{p.name}" for p in out.glob("*/*"))


def test_files_land_whole_one_delivery_at_a_time(tmp_path, monkeypatch):
    out = tmp_path / "out"
    seen: List[List[str]] = []
    write = DeliveryFiles.write

    def watching(self, kind, table):
        seen.append(listing(out))
        write(self, kind, table)

    monkeypatch.setattr(DeliveryFiles, "write", watching)
    deliveries = generate(CONFIG, Landing(out, deliveries=3))
    first = next(deliveries)
    # while a delivery is written, its files are hidden (Spark skips names starting with a dot)
    assert seen[0] and all(name.split("/")[1].startswith(".") for names in seen for name in names)
    assert listing(out) == [f"{kind}/delivery-00001.parquet" for kind in ("auction", "bid", "person")]
    assert set(first.files) == {"person", "auction", "bid"} and first.events == sum(first.rows.values()) > 0
    rest = list(deliveries)
    assert [d.number for d in rest] == [2, 3]
    assert listing(out) == sorted(
        f"{k}/delivery-0000{i}.parquet" for k in ("auction", "bid", "person") for i in (1, 2, 3)
    )


def test_a_failed_delivery_leaves_no_file(tmp_path, monkeypatch):
    out = tmp_path / "out"
    table = Bid.table
    calls = []

    def failing(self, ids, sources):
        calls.append(len(ids))
        if len(calls) == 2:
            raise OSError("disk full")
        return table(self, ids, sources)

    monkeypatch.setattr(Bid, "table", failing)
    deliveries = generate(CONFIG, Landing(out, deliveries=2))
    next(deliveries)
    with pytest.raises(OSError, match="disk full"):
        next(deliveries)
    assert listing(out) == [f"{kind}/delivery-00001.parquet" for kind in ("auction", "bid", "person")]
    assert not [p for p in out.rglob("*") if p.name.startswith(".")]
