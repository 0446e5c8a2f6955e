"""A Kafka topic as a dbt source (docs/kafka.md), on a real broker (tests/support/kafka.py): a
streaming TUMBLE window view over JSON messages in three deliveries equals the batch build of the
same model minus its late rows; a payload that does not parse is a late row with its text kept;
a missing topic, a stopped broker and a wrong declaration are named with the fix."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Optional, Sequence, Tuple

import pytest
import yaml

from dbt.adapters.window_views.spark import kafka_jars
from tests.support import kafka
from tests.support.dbt_projects import errors

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(
        not (kafka.cached() and kafka_jars.jars_if_cached()),
        reason="Kafka's jars are not fetched (scripts/setup.sh; WINDOW_VIEWS_KAFKA=0 skips them)",
    ),
]

TUMBLE = """
    {{{{ config(materialized='window_view', execution='{execution}', emit='on_window_close',
                watermark={{'column': 'bidtime', 'delay': '1 minute'}}) }}}}
    select window_start, window_end, count(*) as bids, sum(price) as total
    from {{{{ window_views.tumble(source('events', '{table}'), 'bidtime', '10 minutes') }}}}
    group by window_start, window_end
"""


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    started = kafka.Broker(tmp_path_factory.mktemp("kafka")).start()
    try:
        yield started
    finally:
        started.stop()


def sources(project, bootstrap: str, tables: Sequence[Tuple[str, str]], key: Optional[str] = "bid_key") -> None:
    """events.<table> reading <topic> for each (table, topic), JSON payloads of bids."""
    declared = {"bootstrap_servers": bootstrap, "format": "json", "starting_offsets": "earliest"}
    if key:
        declared["key"] = key
    columns = [
        {"name": "bidtime", "data_type": "timestamp"},
        {"name": "price", "data_type": "int"},
        {"name": "item", "data_type": "string"},
    ]
    entries = [
        {"name": table, "meta": {"window_views": {"kafka": {**declared, "topic": topic}}}, "columns": columns}
        for table, topic in tables
    ]
    project.write(
        "models/sources.yml",
        yaml.safe_dump({"version": 2, "sources": [{"name": "events", "schema": project.schema, "tables": entries}]}),
    )


def t(hhmm: str) -> datetime:
    h, m = hhmm.split(":")
    return datetime(2020, 4, 15, int(h), int(m))


def bids(rows: Sequence[Tuple[str, int, str]]):
    return [
        (item, json.dumps({"bidtime": f"2020-04-15 {hhmm}:00", "price": price, "item": item}))
        for hhmm, price, item in rows
    ]


def test_stream_equals_batch_minus_late(project, broker):
    # a topic named with `url`: Spark would show its declaration redacted if it were kept as plain JSON
    broker.create_topic("bid_urls")
    sources(project, broker.bootstrap, [("bids", "bid_urls")])
    project.model("stream", TUMBLE.format(execution="streaming", table="bids"))
    project.model("batch", TUMBLE.format(execution="batch", table="bids"))
    # three deliveries: the watermark reaches 08:19 after the second, so 08:05 in the third is late
    broker.produce("bid_urls", bids([("08:07", 2, "A"), ("08:11", 3, "B"), ("08:05", 4, "C")]))
    project.dbt("run", "-s", "stream")
    broker.produce("bid_urls", bids([("08:13", 5, "D"), ("08:20", 1, "E")]))
    broker.produce("bid_urls", [(None, "not json"), (None, "{}")])
    project.dbt("run", "-s", "stream")
    broker.produce("bid_urls", bids([("08:05", 7, "F"), ("08:31", 6, "G")]))
    (node,) = project.dbt("run", "-s", "stream").result
    assert node.adapter_response["late_rows"] == 1
    # exactly once by the offsets in the checkpoint: a run without new messages reads none again
    (again,) = project.dbt("run", "-s", "stream").result
    assert again.adapter_response["rows_in"] == 0
    project.dbt("run", "-s", "batch")
    # the late row keeps its columns and key; a payload that does not parse has NULL columns and
    # its text in _unparsed, one that parses without an event time is late as any such row
    late = [r[:5] for r in project.rows("stream__late", "item, _unparsed")]
    assert late == [
        (None, None, None, None, None),
        (None, None, None, None, "not json"),
        (t("08:05"), 7, "F", "F", None),
    ]
    # stream = batch - late: the window the late bid F (price 7) would have joined lacks it
    batch = [r[:1] + r[2:] for r in project.rows("batch", "window_start")]
    assert batch == [(t("08:00"), 3, 13), (t("08:10"), 2, 8), (t("08:20"), 1, 1)]
    stream = [r[:1] + r[2:] for r in project.rows("stream", "window_start")]
    assert stream == [(t("08:00"), 2, 6), (t("08:10"), 2, 8), (t("08:20"), 1, 1)]


def test_another_topic_needs_a_rebuild(project, broker):
    """The checkpoint holds one topic's offsets: a source declared again on another is refused
    until the model is rebuilt from it."""
    for topic in ("first", "second"):
        broker.create_topic(topic)
    broker.produce("first", bids([("08:07", 2, "A"), ("08:21", 3, "B")]))
    broker.produce("second", bids([("09:07", 5, "C"), ("09:21", 7, "D")]))
    sources(project, broker.bootstrap, [("bids", "first")])
    project.model("m", TUMBLE.format(execution="streaming", table="bids"))
    project.dbt("run", "-s", "m")
    sources(project, broker.bootstrap, [("bids", "second")])
    message = errors(project.dbt("run", "-s", "m", ok=False))
    assert (
        "is at another location than when this stream last read it (kafka topic first, now kafka topic second)"
        in message
    )
    assert "--full-refresh -s m" in message
    project.dbt("run", "-s", "m", "--full-refresh")
    assert [(r[0].hour, *r[2:]) for r in project.rows("m", "window_start")] == [(9, 1, 5)]


def test_missing_topic_is_named(project, broker):
    sources(project, broker.bootstrap, [("nothing", "no_such_topic")])
    project.model("m", TUMBLE.format(execution="streaming", table="nothing"))
    message = errors(project.dbt("run", "-s", "m", ok=False))
    assert "Kafka source 'events.nothing'" in message
    assert "the broker has no such topic" in message and "fix: create the topic" in message
    assert "at org.apache" not in message


def test_stopped_broker_is_named(project, tmp_path):
    """A broker of its own, stopped after a first run: the next run names it, and the table stays."""
    own = kafka.Broker(tmp_path).start()
    try:
        own.create_topic("bids")
        sources(project, own.bootstrap, [("bids", "bids")])
        project.model("m", TUMBLE.format(execution="streaming", table="bids"))
        own.produce("bids", bids([("08:07", 2, "A"), ("08:21", 3, "B")]))
        project.dbt("run", "-s", "m")
    finally:
        own.stop()
    message = errors(project.dbt("run", "-s", "m", ok=False))
    assert f"Kafka source 'events.bids': topic 'bids' at {own.bootstrap}: no broker answers" in message
    assert "fix: start the broker" in message
    assert "at org.apache" not in message
    assert [r[2:] for r in project.rows("m", "window_start")] == [(1, 2)]
