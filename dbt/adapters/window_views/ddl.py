"""The catalog statements the plugin runs itself (outside dbt's macros), built as sqlglot
expressions: table names are parsed as names and values rendered as literals, so no statement
splices text. Spark's UNSET TBLPROPERTIES, SHOW TBLPROPERTIES and DESCRIBE QUERY have no sqlglot
node; they are sqlglot Commands whose names and literals sqlglot renders all the same."""

from __future__ import annotations

from typing import Mapping, Sequence, Tuple

from sqlglot import exp

from dbt.adapters.window_views.sqlexpr import DIALECT, to_sql

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


def describe_query(sql: str) -> str:
    """The output columns of a query without running it. The query stays the model's own text:
    rendering it back through sqlglot could change what Spark reads."""
    return _command("DESCRIBE", "QUERY", sql)


def refresh(relation: exp.Table) -> str:
    return to_sql(exp.Refresh(this=relation, kind="TABLE"))
