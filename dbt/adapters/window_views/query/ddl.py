"""The catalog statements the plugin runs itself (outside dbt's macros), built as sqlglot
expressions: table names are parsed as names and values rendered as literals, so no statement
splices text. Spark's UNSET TBLPROPERTIES, SHOW TBLPROPERTIES and DESCRIBE QUERY have no sqlglot
node; they are sqlglot Commands whose names and literals sqlglot renders all the same."""

from __future__ import annotations

from typing import Mapping, Sequence, Tuple

from sqlglot import exp

from dbt.adapters.window_views import names
from dbt.adapters.window_views.query.sqlexpr import DIALECT, to_sql

# a column to add: (name, Spark type as DataType.simpleString() writes it)
ColumnType = Tuple[str, str]


def table(name: str) -> exp.Table:
    """A table name as Spark writes it (`schema`.`name`, schema.name, name)."""
    return exp.to_table(name, dialect=DIALECT)


def qualified(schema: str, name: str) -> exp.Table:
    """A table from its schema and name, both quoted: they come from the catalog as they are."""
    return exp.table_(exp.to_identifier(name, quoted=True), db=exp.to_identifier(schema, quoted=True))


def _command(verb: str, *parts: exp.Expression | str) -> str:
    """A statement sqlglot keeps as a Command: the verb, then each part as sqlglot renders it."""
    rest = " ".join(part if isinstance(part, str) else to_sql(part) for part in parts)
    return to_sql(exp.Command(this=verb, expression=exp.Literal.string(rest)))


def show_setting(key: str) -> str:
    """`SET key`: Spark answers one row, the key and its value in this session."""
    return _command("SET", key)


def drop_table(name: str, if_exists: bool = True) -> str:
    return to_sql(exp.Drop(tables=[table(name)], kind="TABLE", exists=if_exists))


def set_location(name: str, uri: str) -> str:
    action = exp.AlterSet(location=exp.Literal.string(uri))
    return to_sql(exp.Alter(this=table(name), kind="TABLE", actions=[action]))


def add_columns(name: str, columns: Sequence[ColumnType]) -> str:
    defs = [
        exp.ColumnDef(this=exp.to_identifier(column, quoted=True), kind=exp.DataType.build(kind, dialect=DIALECT))
        for column, kind in columns
    ]
    return to_sql(exp.Alter(this=table(name), kind="TABLE", actions=[exp.Schema(expressions=defs)]))


def set_properties(name: str, properties: Mapping[str, str]) -> str:
    pairs = [exp.Property(this=exp.Literal.string(k), value=exp.Literal.string(v)) for k, v in properties.items()]
    action = exp.AlterSet(expressions=[exp.Properties(expressions=pairs)])
    return to_sql(exp.Alter(this=table(name), kind="TABLE", actions=[action]))


def unset_property(name: str, key: str) -> str:
    return _command(
        "ALTER", "TABLE", table(name), "UNSET TBLPROPERTIES IF EXISTS", exp.Tuple(expressions=[exp.Literal.string(key)])
    )


def show_properties(name: str) -> str:
    return _command("SHOW", "TBLPROPERTIES", table(name))


def describe_extended(name: str) -> str:
    return to_sql(exp.Describe(this=table(name), style="EXTENDED"))


def describe_query(text: str) -> str:
    """The output columns of a query without running it. The query stays its own text (the
    model's, where sqlglot cannot parse it): rendering it back could change what Spark reads."""
    return _command("DESCRIBE", "QUERY", text)


def refresh(relation: exp.Table) -> str:
    return to_sql(exp.Refresh(this=relation, kind="TABLE"))


def create_partitioned(
    name: str, columns: Sequence[ColumnType], partition: str, location: str | None, properties: Mapping[str, str]
) -> str:
    """An empty parquet table of `columns` plus the STRING column `partition` it is partitioned by
    (an incremental batch window view: one partition per batch)."""
    defs = [
        exp.ColumnDef(this=exp.to_identifier(column, quoted=True), kind=exp.DataType.build(kind, dialect=DIALECT))
        for column, kind in [*columns, (partition, "string")]
    ]
    props: list[exp.Expression] = [
        exp.FileFormatProperty(this=exp.var("parquet")),
        exp.PartitionedByProperty(this=exp.Schema(expressions=[exp.to_identifier(partition, quoted=True)])),
    ]
    if location is not None:
        props.append(exp.LocationProperty(this=exp.Literal.string(location)))
    props += [exp.Property(this=exp.Literal.string(k), value=exp.Literal.string(v)) for k, v in properties.items()]
    schema = exp.Schema(this=table(name), expressions=defs)
    return to_sql(exp.Create(this=schema, kind="TABLE", properties=exp.Properties(expressions=props)))


def _partition(column: str, value: str) -> exp.Tuple:
    return exp.Tuple(
        expressions=[exp.EQ(this=exp.to_identifier(column, quoted=True), expression=exp.Literal.string(value))]
    )


def add_partitions(name: str, column: str, partitions: Sequence[Tuple[str, str]]) -> str:
    """One statement adding each (value, location) partition: the metastore adds them together."""
    parts: list[exp.Expression | str] = ["ADD"]
    for value, location in partitions:
        parts += ["PARTITION", _partition(column, value), "LOCATION", exp.Literal.string(location)]
    return _command("ALTER", "TABLE", table(name), *parts)


def set_partition_location(name: str, column: str, value: str, location: str) -> str:
    spec = _partition(column, value)
    return _command("ALTER", "TABLE", table(name), "PARTITION", spec, "SET LOCATION", exp.Literal.string(location))


def show_partitions(name: str) -> str:
    return _command("SHOW", "PARTITIONS", table(name))


def typed(query: exp.Expression, columns: Sequence[ColumnType], *more: exp.Expr) -> exp.Select:
    """The query's columns, each cast to its type (a batch's files read as its table declares),
    and `more` after them."""
    casts = [
        exp.alias_(
            exp.cast(exp.column(exp.to_identifier(name, quoted=True)), exp.DataType.build(kind, dialect=DIALECT)),
            exp.to_identifier(name, quoted=True),
        )
        for name, kind in columns
    ]
    if not isinstance(query, exp.Query):
        raise TypeError(f"not a query: {query!r}")
    return exp.select(*casts, *more).from_(query.subquery(names.internal("typed")))


def write_directory(location: str, query: exp.Expression, columns: Sequence[ColumnType] = ()) -> str:
    """The query's rows as the parquet files of a new directory (Spark's job commit: all or none);
    with `columns`, each cast to its type there (typed)."""
    rows = typed(query, columns) if columns else query
    return _command("INSERT", "OVERWRITE DIRECTORY", exp.Literal.string(location), "USING parquet", rows)
