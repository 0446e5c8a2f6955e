"""A Kafka topic as a stream's input (docs/kafka.md; the declaration: model/kafka_source.py; its
catalog objects: streaming/kafka_sources.py).

A Kafka source's view parses the payload into the declared columns and carries the declaration
as a table property; a batch build reads it as any table. A stream cannot read a Kafka catalog table (Spark hands its stored schema to the Kafka source, which refuses one), so the
stream of a view with that property is read from the topic itself and parsed by the same
expressions; its checkpoint keeps the topic's offsets, which is what makes it exactly-once.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from pyspark.errors import AnalysisException

from dbt.adapters.window_views.model.kafka_source import PROPERTY, KafkaSource, from_property
from dbt.adapters.window_views.query import ddl
from dbt.adapters.window_views.query.sqlexpr import to_sql

KAFKA_PROVIDER = "kafka"
KAFKA_JAR = "spark-sql-kafka"  # the connector's jar, as spark.jars lists it (kafka_jars.py)


def declared(spark: Any, relation: str) -> Optional[KafkaSource]:
    """The Kafka source a catalog view was made from; None for any other table or view."""
    try:
        properties = {r[0]: r[1] for r in spark.sql(ddl.show_properties(relation)).collect()}
    except AnalysisException:
        return None
    text = properties.get(PROPERTY)
    return from_property(relation, text) if text else None


def location(source: KafkaSource) -> str:
    """Where a Kafka source's stream reads, as the inputs' identity records it (input_identity.py)."""
    return f"kafka topic {source.topic}"


def stream(spark: Any, source: KafkaSource) -> Any:
    """The source's rows as a stream: from the topic, parsed as the view parses them."""
    inner, outer = source.parsing()
    rows = spark.readStream.format(KAFKA_PROVIDER).options(**source.stream_options()).load()
    return rows.selectExpr(*map(to_sql, inner)).selectExpr(*map(to_sql, outer))


def stream_reader(spark: Any) -> Callable[[str], Any]:
    """A stream's reader of its inputs: a Kafka source's view from its topic, any other table
    by readStream.table."""

    # only a session started with the connector (the profile's kafka: true) reads a topic
    topics = KAFKA_JAR in spark.conf.get("spark.jars", "")

    def reading(name: str) -> Any:
        source = declared(spark, name) if topics else None
        return spark.readStream.table(name) if source is None else stream(spark, source)

    return reading
