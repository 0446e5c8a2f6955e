"""A Kafka source's declaration (model/kafka_source.py) and the connector's jars (kafka_jars.py),
without Spark: what is read from the yml, what is refused with its fix, and what the session gets."""

from __future__ import annotations

import dataclasses
import json

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.model.kafka_source import UNPARSED, KafkaSource, KafkaSourceError, from_property
from dbt.adapters.window_views.spark import kafka_jars, lakehouse
from dbt.adapters.window_views.streaming.kafka_sources import unreachable


def node(kafka=None, columns=None, meta=None):
    declared = {"bootstrap_servers": "127.0.0.1:9092", "topic": "bids", **(kafka or {})}
    return {
        "name": "bids",
        "source_name": "events",
        "relation": "raw.bids",
        "meta": meta if meta is not None else {"window_views": {"kafka": declared}},
        "columns": columns
        if columns is not None
        else {
            "bidtime": {"name": "bidtime", "data_type": "timestamp"},
            "price": {"name": "price", "data_type": "decimal(10,2)"},
        },
    }


def test_a_declared_topic_is_read():
    source = KafkaSource.from_node(node({"key": "bid_key", "options": {"failOnDataLoss": False}}))
    assert source is not None
    assert source.columns == (("bidtime", "timestamp"), ("price", "decimal(10, 2)"))
    assert source.raw_table == "raw.`bids__kafka`"
    assert source.stream_options()["startingOffsets"] == "earliest"
    assert "startingOffsets" not in source.read_options()  # a batch reads the retained range
    assert source.read_options()["failOnDataLoss"] == "false"
    assert source.payload_schema().endswith(f"`{UNPARSED}` string")
    assert KafkaSource.from_json(source.name, source.relation, source.to_json()) == source


def test_the_declaration_is_kept_in_hex_as_spark_redacts_none_of_it():
    """Spark shows a property whose value holds `url`, `token`, `password` ... as `*********(redacted)`:
    the view keeps the declaration in hex; a plain JSON one (an earlier version's) still reads, a
    redacted one is named with the fix (its next run makes the view again)."""
    columns = {"url": {"name": "url", "data_type": "string"}, "t": {"name": "t", "data_type": "timestamp"}}
    source = KafkaSource.from_node(node({"options": {"kafka.sasl.jaas.config": "password='x'"}}, columns))
    assert source is not None
    kept = source.to_property()
    assert kept.startswith("hex:") and set(kept[4:]) <= set("0123456789abcdef")
    assert from_property(source.relation, kept) == dataclasses.replace(source, name=source.relation)
    assert from_property(source.relation, source.to_json()).columns == source.columns
    with pytest.raises(KafkaSourceError) as redacted:
        from_property(source.relation, "*********(redacted)")
    assert "cannot be read ('*********(redacted)'); fix: run the model again" in str(redacted.value)


def test_a_source_without_kafka_meta_is_none():
    assert KafkaSource.from_node(node(meta={"owner": "me"})) is None


@pytest.mark.parametrize(
    "kafka, columns, says",
    [
        ({"format": "avro"}, None, "format 'avro' is not supported; fix: use format: json"),
        ({"topic": ""}, None, "has no topic; fix: declare topic"),
        ({"starting_offsets": "now"}, None, "starting_offsets 'now' is not one of earliest, latest"),
        ({"options": {"subscribe": "other"}}, None, "options set subscribe, which the declaration's own keys set"),
        ({"partitions": 3}, None, "unknown key(s) partitions"),
        ({"key": "price"}, None, "name a column twice"),
        ({}, {}, "it declares no columns"),
        ({}, {"t": {"name": "t"}}, "column t has no data_type"),
        ({}, {"t": {"name": "t", "data_type": "no such type("}}, "which is not a Spark type"),
    ],
)
def test_a_wrong_declaration_is_named_with_its_fix(kafka, columns, says):
    with pytest.raises(KafkaSourceError) as raised:
        KafkaSource.from_node(node(kafka, columns))
    assert raised.value.msg.startswith("Kafka source 'events.bids': ")
    assert says in raised.value.msg


def test_kafka_errors_are_named_by_cause():
    source = KafkaSource.from_node(node())
    assert source is not None
    missing = unreachable(source, "java.util.concurrent.ExecutionException: ...UnknownTopicOrPartitionException: x")
    assert "topic 'bids' at 127.0.0.1:9092: the broker has no such topic; fix: create the topic" in str(missing)
    down = unreachable(source, "org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node")
    assert "no broker answers; fix: start the broker" in str(down)


def test_the_session_gets_the_connector_only_when_asked(tmp_path, monkeypatch):
    monkeypatch.setenv(lakehouse.CACHE_ENV, str(tmp_path))
    assert kafka_jars.with_kafka({"spark.master": "local[2]"}) == {"spark.master": "local[2]"}
    runtime = kafka_jars.connector("4.3.0")
    assert runtime.coordinates == "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0"
    with pytest.raises(Exception) as raised:
        kafka_jars.with_kafka({kafka_jars.KAFKA_KEY: "true"})
    assert runtime.coordinates in str(raised.value) and kafka_jars.FETCH_COMMAND in str(raised.value)
    folder = tmp_path / runtime.folder
    folder.mkdir()
    (folder / "a.jar").write_bytes(b"")
    (folder / lakehouse.MANIFEST).write_text(json.dumps({"coordinates": runtime.coordinates, "jars": ["a.jar"]}))
    settings = kafka_jars.with_kafka({kafka_jars.KAFKA_KEY: "true", "spark.jars": "/x.jar"})
    assert settings == {"spark.jars": f"/x.jar,{folder / 'a.jar'}"}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kafka": "yes"}, "profile setting 'kafka' = 'yes' is not valid; expected true or false"),
        ({"kafka": True, "method": "thrift"}, "adds Spark's Kafka connector to the Spark the plugin starts"),
        ({"kafka": True, "warm_spark": True}, "(method: session, without warm_spark)"),
    ],
)
def test_profile_refuses_a_bad_kafka(fields, message):
    from dbt.adapters.window_views.connections import WindowViewsCredentials

    data = {"schema": "s", "database": "s", "host": "h", **fields}
    with pytest.raises(DbtRuntimeError) as raised:
        WindowViewsCredentials.from_dict(WindowViewsCredentials.__pre_deserialize__(data))
    assert message in str(raised.value)


def test_profile_hands_kafka_to_the_session():
    from dbt.adapters.window_views.connections import WindowViewsCredentials

    data = {"schema": "s", "database": "s", "kafka": True}
    creds = WindowViewsCredentials.from_dict(WindowViewsCredentials.__pre_deserialize__(data))
    assert creds.server_side_parameters[kafka_jars.KAFKA_KEY] == "true"
    plain = WindowViewsCredentials.from_dict(
        WindowViewsCredentials.__pre_deserialize__({"schema": "s", "database": "s"})
    )
    assert kafka_jars.KAFKA_KEY not in plain.server_side_parameters


def test_an_unreachable_maven_is_named_with_the_connector_and_its_fetch(tmp_path, monkeypatch):
    import subprocess

    monkeypatch.setenv(lakehouse.CACHE_ENV, str(tmp_path))
    ivy_says = "[unresolved dependency: org.apache.spark#spark-sql-kafka-0-10_2.13;4.2.0: not found]\n"
    monkeypatch.setattr(
        lakehouse.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 1, stdout="", stderr=ivy_says)
    )
    assert kafka_jars.main(["fetch"]) == 1
    with pytest.raises(DbtRuntimeError) as raised:
        lakehouse.fetch(kafka_jars.connector("4.3.0"), kafka_jars.FETCH_COMMAND)
    message = str(raised.value)
    assert "could not fetch org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0 from Maven Central" in message
    assert "spark-sql-kafka-0-10_2.13;4.2.0: not found" in message and kafka_jars.FETCH_COMMAND in message


class FakeCatalog:
    def __init__(self, exists: bool) -> None:
        self.exists = exists

    def tableExists(self, name):  # noqa: N802 (Spark's name)
        return self.exists

    def createTable(self, name, source=None, **options):  # noqa: N802
        raise RuntimeError("[DATA_SOURCE_NOT_FOUND] Failed to find the data source: kafka. SQLSTATE: 42K02")


class FakeSpark:
    """A Spark without the connector, whose catalog has `exists` at the source's name."""

    def __init__(self, exists: bool = False) -> None:
        self.catalog = FakeCatalog(exists)

    def sql(self, text):
        return type("Rows", (), {"collect": lambda self: []})()


def test_a_spark_without_the_connector_is_named_with_the_fix():
    from dbt.adapters.window_views.streaming import kafka_sources

    source = KafkaSource.from_node(node())
    with pytest.raises(KafkaSourceError) as raised:
        kafka_sources.declare(FakeSpark(), source)
    assert "this Spark has no Kafka connector (spark-sql-kafka-0-10)" in raised.value.msg
    assert kafka_jars.FETCH_COMMAND in raised.value.msg and "kafka: true" in raised.value.msg


def test_a_table_of_its_own_at_the_source_is_not_replaced():
    from dbt.adapters.window_views.streaming import kafka_sources

    with pytest.raises(KafkaSourceError) as raised:
        kafka_sources.declare(FakeSpark(exists=True), KafkaSource.from_node(node()))
    assert "raw.bids is a table of its own" in raised.value.msg and "fix: drop it" in raised.value.msg
