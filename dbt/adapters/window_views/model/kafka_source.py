"""A Kafka topic declared as a dbt source (docs/kafka.md): the source's yml names the broker, the
topic and the payload's format in `meta: {window_views: {kafka: {...}}}`, and the payload's
columns and types as the source's columns. Parsed and checked once here, Spark-free; the
catalog objects and the stream are made from it by streaming/inputs/kafka.py.

A payload that does not parse as the declared JSON is kept, not refused: its row has NULL in
every declared column and the payload's text in `_unparsed` (NULL on rows that parse), so a
stream counts it as a late row (no event time) and keeps it in the late table, and a batch build
puts it in no window."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from dbt_common.exceptions import DbtRuntimeError
from sqlglot import exp
from sqlglot.errors import SqlglotError

from dbt.adapters.window_views.names import NAME_PATTERN, internal, is_reserved
from dbt.adapters.window_views.query.sqlexpr import DIALECT

META_KEY, KAFKA_KEY = "window_views", "kafka"
PROPERTY = "window_views.kafka"  # the parsing view's table property: the declaration it was made from
HEX = "hex:"  # the property's value: the declaration's JSON in hex (KafkaSource.to_property)
UNPARSED = "_unparsed"  # a payload that did not parse, as text (NULL on rows that parse)
RAW_SUFFIX = "__kafka"  # the catalog table over the topic, beside the parsing view
FORMATS = ("json",)
STARTING = ("earliest", "latest")
PAYLOAD = internal("payload")
# without these, a broker that does not answer holds a run for a minute per attempt
DEFAULT_OPTIONS = {"kafka.request.timeout.ms": "10000", "kafka.default.api.timeout.ms": "20000"}
# set from the declaration's own keys, never through `options`
OWN_OPTIONS = ("kafka.bootstrap.servers", "subscribe", "subscribepattern", "assign", "startingoffsets")


class KafkaSourceError(DbtRuntimeError):
    """A Kafka source's declaration, topic or broker that a window view cannot read."""

    def __init__(self, source: str, problem: str, fix: str) -> None:
        self.source = source
        super().__init__(f"Kafka source '{source}': {problem}; fix: {fix}")


@dataclass(frozen=True)
class KafkaSource:
    """A Kafka source: where the topic is, how its payload parses, and its catalog names."""

    name: str  # source_name.table_name, as the yml declares it
    relation: str  # the parsing view, as the model SQL names it (schema.identifier)
    bootstrap_servers: str
    topic: str
    columns: Tuple[Tuple[str, str], ...]  # the payload's (name, Spark type)
    key: Optional[str] = None  # the column holding the message key, as text
    starting_offsets: str = "earliest"
    options: Tuple[Tuple[str, str], ...] = field(default=())

    @classmethod
    def from_node(cls, node: Mapping[str, Any]) -> Optional["KafkaSource"]:
        """From a source node ({'name', 'source_name', 'relation', 'meta', 'columns'}, as
        macros/_internal/kafka_sources.sql gives it); None when it declares no Kafka topic."""
        declared = ((node.get("meta") or {}).get(META_KEY) or {}).get(KAFKA_KEY)
        if declared is None:
            return None
        name = f"{node.get('source_name')}.{node['name']}"
        if not isinstance(declared, Mapping):
            raise KafkaSourceError(name, f"meta.{META_KEY}.{KAFKA_KEY} is {declared!r}", "make it a mapping")
        unknown = sorted(set(declared) - {"bootstrap_servers", "topic", "format", "key", "starting_offsets", "options"})
        if unknown:
            raise KafkaSourceError(
                name,
                f"unknown key(s) {', '.join(unknown)}",
                "use bootstrap_servers, topic, format, key, starting_offsets and options (Spark's Kafka options)",
            )
        for required in ("bootstrap_servers", "topic"):
            if not declared.get(required):
                raise KafkaSourceError(name, f"meta.{META_KEY}.{KAFKA_KEY} has no {required}", f"declare {required}")
        found = cls(
            name=name,
            relation=str(node["relation"]),
            bootstrap_servers=str(declared["bootstrap_servers"]),
            topic=str(declared["topic"]),
            columns=_columns(name, node.get("columns") or {}),
            key=_key(name, declared.get("key")),
            starting_offsets=str(declared.get("starting_offsets", "earliest")),
            options=_options(name, declared.get("options") or {}),
        )
        found._check(str(declared.get("format", "json")))
        return found

    def _check(self, format_: str) -> None:
        if format_ not in FORMATS:
            raise KafkaSourceError(self.name, f"format {format_!r} is not supported", "use format: json")
        if self.starting_offsets not in STARTING:
            raise KafkaSourceError(
                self.name,
                f"starting_offsets {self.starting_offsets!r} is not one of {', '.join(STARTING)}",
                "use earliest (the topic's retained messages first) or latest (only messages from the first run on)",
            )
        names = [c.lower() for c, _ in self.columns] + ([self.key.lower()] if self.key else [])
        if UNPARSED in names or len(set(names)) != len(names):
            raise KafkaSourceError(
                self.name,
                f"its columns and key name a column twice, or name {UNPARSED} (the column of payloads that do not parse)",
                "give each column its own name",
            )

    @property
    def raw_table(self) -> str:
        """The catalog table over the topic (Spark's Kafka columns: key, value, offset, ...)."""
        table = exp.to_table(self.relation, dialect=DIALECT)
        table.set("this", exp.to_identifier(table.name + RAW_SUFFIX, quoted=True))
        return table.sql(DIALECT)

    def read_options(self) -> Dict[str, str]:
        """Spark's Kafka source options common to a batch read and a stream."""
        return {
            **DEFAULT_OPTIONS,
            **dict(self.options),
            "kafka.bootstrap.servers": self.bootstrap_servers,
            "subscribe": self.topic,
        }

    def stream_options(self) -> Dict[str, str]:
        """A stream's: where a first run starts; later runs start where the checkpoint's offsets end."""
        return {**self.read_options(), "startingOffsets": self.starting_offsets}

    def payload_schema(self) -> str:
        """The declared columns as from_json reads them, with the column of unparsed payloads."""
        return ", ".join(f"`{c}` {t}" for c, t in (*self.columns, (UNPARSED, "string")))

    def parsing(self) -> Tuple[List[exp.Expr], List[exp.Expr]]:
        """The two selects from Spark's Kafka columns to the source's: the payload parsed (and the
        key kept), then its fields as columns. One rule for the view (batch) and the stream."""
        options = exp.VarMap(
            keys=exp.array(exp.Literal.string("columnNameOfCorruptRecord"), exp.Literal.string("mode")),
            values=exp.array(exp.Literal.string(UNPARSED), exp.Literal.string("PERMISSIVE")),
        )
        text = exp.cast(exp.column("value"), "string")
        parsed = exp.FromJson(this=text, expression=exp.Literal.string(self.payload_schema()), options=options)
        inner: List[exp.Expr] = [exp.alias_(parsed, PAYLOAD), exp.column("key")]
        outer: List[exp.Expr] = [
            exp.alias_(exp.column(c, table=PAYLOAD, quoted=True), c, quoted=True) for c, _ in self.columns
        ]
        if self.key:
            outer.append(exp.alias_(exp.cast(exp.column("key"), "string"), self.key, quoted=True))
        outer.append(exp.alias_(exp.column(UNPARSED, table=PAYLOAD, quoted=True), UNPARSED, quoted=True))
        return inner, outer

    def view_query(self) -> exp.Select:
        """The parsing view's query over the raw table."""
        inner, outer = self.parsing()
        raw = exp.to_table(self.raw_table, dialect=DIALECT)
        return exp.select(*outer).from_(exp.select(*inner).from_(raw).subquery())

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": 1,
                "bootstrap_servers": self.bootstrap_servers,
                "topic": self.topic,
                "columns": [list(c) for c in self.columns],
                "key": self.key,
                "starting_offsets": self.starting_offsets,
                "options": [list(o) for o in self.options],
            },
            sort_keys=True,
        )

    def to_property(self) -> str:
        """The declaration as the view's property, in hex: Spark shows a property whose value holds
        `url`, `token`, `password`, ... (its redaction settings) as `*********(redacted)`."""
        return HEX + self.to_json().encode().hex()

    @classmethod
    def from_json(cls, name: str, relation: str, text: str) -> "KafkaSource":
        data = json.loads(text)
        return cls(
            name=name,
            relation=relation,
            bootstrap_servers=data["bootstrap_servers"],
            topic=data["topic"],
            columns=tuple((c, t) for c, t in data["columns"]),
            key=data.get("key"),
            starting_offsets=data["starting_offsets"],
            options=tuple((k, v) for k, v in data["options"]),
        )


def from_property(relation: str, text: str) -> KafkaSource:
    """The declaration a parsing view was made from (plain JSON: a view an earlier version made)."""
    try:
        return KafkaSource.from_json(
            relation, relation, bytes.fromhex(text[len(HEX) :]).decode() if text.startswith(HEX) else text
        )
    except (ValueError, KeyError, TypeError):
        raise KafkaSourceError(
            relation,
            f"the declaration kept with its view {relation} cannot be read ({text[:40]!r})",
            "run the model again: its run makes the view again from the source's declaration",
        ) from None


def _columns(source: str, declared: Mapping[str, Any]) -> Tuple[Tuple[str, str], ...]:
    """The payload's columns from the source's `columns`, each with its data_type checked."""
    out = []
    for column in declared.values():
        name, kind = str(column.get("name")), column.get("data_type")
        if not re.match(NAME_PATTERN, name) or is_reserved(name):
            raise KafkaSourceError(source, f"column {name!r} is not a plain column name", "rename it")
        if not kind:
            raise KafkaSourceError(
                source, f"column {name} has no data_type", "declare each payload column's data_type (e.g. timestamp)"
            )
        try:
            rendered = exp.DataType.build(str(kind), dialect=DIALECT).sql(DIALECT).lower()
        except (SqlglotError, ValueError):
            raise KafkaSourceError(
                source, f"column {name} has data_type {kind!r}, which is not a Spark type", "use a Spark SQL type"
            ) from None
        out.append((name, rendered))
    if not out:
        raise KafkaSourceError(
            source,
            "it declares no columns: the payload's JSON fields are read by the source's columns",
            "declare the payload's fields as the source's columns, each with its data_type",
        )
    return tuple(out)


def _key(source: str, key: Any) -> Optional[str]:
    """The column the message key goes to (as text), or None: the key is not read."""
    if key is None:
        return None
    if not isinstance(key, str) or not re.match(NAME_PATTERN, key) or is_reserved(key):
        raise KafkaSourceError(source, f"key {key!r} is not a column name", "name the column the message key goes to")
    return key


def _options(source: str, options: Any) -> Tuple[Tuple[str, str], ...]:
    if not isinstance(options, Mapping):
        raise KafkaSourceError(source, f"options is {options!r}", "make it a mapping of Spark's Kafka source options")
    own = [k for k in options if str(k).lower() in OWN_OPTIONS]
    if own:
        raise KafkaSourceError(
            source,
            f"options set {', '.join(map(str, own))}, which the declaration's own keys set",
            "use bootstrap_servers, topic and starting_offsets",
        )
    return tuple(sorted((str(k), str(v).lower() if isinstance(v, bool) else str(v)) for k, v in options.items()))
