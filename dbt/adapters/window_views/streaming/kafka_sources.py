"""A Kafka source in the catalog (docs/kafka.md): `<relation>__kafka`, a table over the topic
(`USING kafka`: Spark's Kafka columns), and `<relation>`, a view over it that parses the payload
into the declared columns, carrying the declaration as a table property (read back by
streaming/inputs/kafka.py). A batch build reads the view as any table: the topic's retained
messages, earliest to latest. Made before a window view over the source runs, and the topic
probed, so that a missing topic or a broker that does not answer is named with its fix."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from dbt.adapters.window_views.model.kafka_source import PROPERTY, KafkaSource, KafkaSourceError
from dbt.adapters.window_views.query import ddl
from dbt.adapters.window_views.query.sqlexpr import DIALECT, to_sql
from dbt.adapters.window_views.spark import kafka_jars
from dbt.adapters.window_views.spark.connect import is_connect
from dbt.adapters.window_views.streaming.inputs.kafka import KAFKA_PROVIDER, declared

# the probe's own timeouts: a broker that does not answer is named in seconds, not minutes
PROBE_OPTIONS = {
    "kafka.request.timeout.ms": "4000",
    "kafka.default.api.timeout.ms": "4000",
    "fetchOffset.numRetries": "1",
}


def declare(spark: Any, source: KafkaSource) -> None:
    """The source's table and parsing view in the catalog, made again only when its declaration
    changed (a stream's input identity follows the view's creation time); then the topic probed."""
    try:
        before = declared(spark, source.relation)
        theirs = before is None and spark.catalog.tableExists(source.relation)
    except KafkaSourceError:  # a view an earlier version made, its declaration shown redacted: ours
        before, theirs = None, False
    if theirs:
        raise KafkaSourceError(
            source.name,
            f"{source.relation} is a table of its own, not the view this plugin makes over the topic",
            f"drop it, or give the Kafka source another identifier (the plugin creates {source.relation} "
            f"and {source.raw_table})",
        )
    if before is None or before.to_json() != source.to_json():
        schema = ddl.table(source.relation).args.get("db")
        if schema is not None:
            spark.sql(to_sql(exp.Create(this=exp.Table(this=schema.copy()), kind="SCHEMA", exists=True)))
        spark.sql(ddl.drop_table(source.raw_table))
        try:
            spark.catalog.createTable(source.raw_table, source=KAFKA_PROVIDER, **source.read_options())
        except Exception as exc:
            if "DATA_SOURCE_NOT_FOUND" not in str(exc):
                raise
            raise KafkaSourceError(
                source.name,
                "this Spark has no Kafka connector (spark-sql-kafka-0-10)",
                f"run `{kafka_jars.FETCH_COMMAND}` once and set `kafka: true` in the profile (the Spark the plugin "
                "starts), or give your Spark server the connector's jars",
            ) from None
        spark.sql(view_statement(source))
    probe(spark, source)


def view_statement(source: KafkaSource) -> str:
    """CREATE OR REPLACE VIEW <relation> over the raw table, its declaration a table property."""
    prop = exp.Property(this=exp.Literal.string(PROPERTY), value=exp.Literal.string(source.to_property()))
    view = exp.Create(
        this=exp.to_table(source.relation, dialect=DIALECT),
        kind="VIEW",
        replace=True,
        expression=source.view_query(),
        properties=exp.Properties(expressions=[prop]),
    )
    return to_sql(view)


def probe(spark: Any, source: KafkaSource) -> None:
    """Plan a read of the topic (its offsets fetched, no job run), so that a missing topic or a
    broker that does not answer is named with its fix, not as Spark's stack. Spark Connect plans
    on the server: there the first read reports it."""
    rows = spark.read.format(KAFKA_PROVIDER).options(**{**source.read_options(), **PROBE_OPTIONS}).load()
    if is_connect(spark):
        return
    try:
        rows.rdd.getNumPartitions()
    except Exception as exc:  # py4j's error, whose text holds the Kafka client's exception
        raise unreachable(source, str(exc)) from None


def unreachable(source: KafkaSource, text: str) -> KafkaSourceError:
    """What a failed read of the topic says, by the Kafka client's exception in `text`."""
    where = f"topic '{source.topic}' at {source.bootstrap_servers}"
    if "UnknownTopicOrPartition" in text:
        return KafkaSourceError(
            source.name,
            f"{where}: the broker has no such topic",
            "create the topic (kafka-topics.sh --create --topic ...), or correct `topic` in the source's meta",
        )
    if "TimeoutException" in text or "Failed to create new KafkaAdminClient" in text or "node assignment" in text:
        return KafkaSourceError(
            source.name,
            f"{where}: no broker answers",
            "start the broker, or correct `bootstrap_servers` in the source's meta (host:port of a listener "
            "this machine reaches)",
        )
    first = next((line for line in text.splitlines() if "Exception" in line), text.splitlines()[0] if text else "")
    return KafkaSourceError(source.name, f"{where}: {first.strip()}", "check the source's options and the broker")
