"""The catalog statements of ddl.py: names stay names and values stay literals whatever they hold,
and what sqlglot can parse reads back as the same statement."""

import pytest
import sqlglot
from sqlglot import exp

from dbt.adapters.window_views.batch.watermark import _lowest_maximum
from dbt.adapters.window_views.query import analysis, ddl

ODD_TABLES = ["s.t", "`s`.`t`", "`my schema`.`it``s`", "t"]


def _round_trip(sql: str) -> str:
    return sqlglot.parse_one(sql, read="spark").sql("spark")


@pytest.mark.parametrize("name", ODD_TABLES)
def test_statements_sqlglot_parses_read_back_unchanged(name):
    for sql in [
        ddl.drop_table(name),
        ddl.drop_table(name, if_exists=False),
        ddl.set_location(name, "file:/data/it's here"),
        ddl.add_columns(name, [("a b", "double"), ("c`d", "decimal(10,2)"), ("e", "array<struct<x:int,y:string>>")]),
        ddl.set_properties(name, {"window_views.k": "v'1", "x": ""}),
        ddl.describe_extended(name),
    ]:
        assert _round_trip(sql) == sql


def test_a_table_name_is_one_table_however_it_is_written():
    dropped = sqlglot.parse_one(ddl.drop_table("`my schema`.`it``s`"), read="spark")
    assert isinstance(dropped, exp.Drop)
    (table,) = dropped.args["tables"]
    assert (table.db, table.name) == ("my schema", "it`s")
    refreshed = sqlglot.parse_one(ddl.refresh(ddl.qualified("sch", "na`me; drop table x")), read="spark")
    assert isinstance(refreshed, exp.Refresh)
    assert (refreshed.this.db, refreshed.this.name) == ("sch", "na`me; drop table x")


def test_values_stay_literals():
    sql = ddl.set_properties("s.t", {"k": "v'); drop table x; --"})
    (action,) = sqlglot.parse_one(sql, read="spark").args["actions"]
    (prop,) = action.expressions[0].expressions
    assert (prop.this.this, prop.args["value"].this) == ("k", "v'); drop table x; --")
    location = sqlglot.parse_one(ddl.set_location("s.t", "/a'b"), read="spark").args["actions"][0]
    assert location.args["location"].this == "/a'b"


def test_added_columns_keep_their_names_and_types():
    sql = ddl.add_columns("s.t", [("a b", "double"), ("m", "map<string,bigint>"), ("ts", "timestamp_ntz")])
    (schema,) = sqlglot.parse_one(sql, read="spark").args["actions"]
    got = [(d.name, d.args["kind"].sql("spark")) for d in schema.expressions]
    assert got == [("a b", "DOUBLE"), ("m", "MAP<STRING, BIGINT>"), ("ts", "TIMESTAMP_NTZ")]


def test_commands_sqlglot_has_no_node_for_render_names_and_literals():
    assert ddl.unset_property("`a`.`b`", "it's") == "ALTER TABLE `a`.`b` UNSET TBLPROPERTIES IF EXISTS ('it\\'s')"
    assert ddl.show_properties("`my schema`.`t`") == "SHOW TBLPROPERTIES `my schema`.`t`"
    assert ddl.describe_query("select 1 as a") == "DESCRIBE QUERY select 1 as a"


def test_the_batch_watermark_query_takes_the_lowest_maximum_over_every_input():
    sql = _lowest_maximum("Event Time", ["s.a", "`s`.`b c`"])
    tree = sqlglot.parse_one(sql, read="spark")
    assert [s.alias for s in tree.selects] == ["all_seen", "w"]
    inner = tree.find(exp.Union)
    assert inner is not None and not inner.args.get("distinct")
    tables = {(t.db, t.name) for t in tree.find_all(exp.Table)}
    assert tables == {("s", "a"), ("s", "b c")}
    assert {c.name for c in tree.find_all(exp.Column) if c.find_ancestor(exp.Max)} == {"Event Time"}


def test_a_batch_is_written_with_its_tables_types():
    """A batch's running calls can widen a type (a decimal SUM plus its summary), so its files are
    cast to the table's columns; names quoted as they are."""
    query = analysis.parse("with a as (select 1 as x) select x, 2.5 as `y z` from a")
    sql = ddl.write_directory("/d/it's", query, [("x", "int"), ("y z", "decimal(20,2)")])
    written = sqlglot.parse_one(sql.split("USING parquet ", 1)[1], read="spark")
    assert [(e.alias, e.this.to.sql("spark")) for e in written.expressions] == [("x", "INT"), ("y z", "DECIMAL(20, 2)")]
    assert sql.startswith("INSERT OVERWRITE DIRECTORY '/d/it\\'s' USING parquet ")
    # without types, the query as sqlglot writes it
    untyped = ddl.write_directory("/d", analysis.parse("select 1 as x"))
    assert untyped == "INSERT OVERWRITE DIRECTORY '/d' USING parquet SELECT 1 AS x"


def test_partitions_are_added_in_one_statement_with_their_values_and_locations_as_literals():
    sql = ddl.add_partitions("s.t", "day", [("2024-01-01 00:00:00", "/d/it's 1"), ("2024-01-02 00:00:00", "/d/2")])
    assert sql == (
        "ALTER TABLE s.t ADD PARTITION (`day` = '2024-01-01 00:00:00') LOCATION '/d/it\\'s 1' "
        "PARTITION (`day` = '2024-01-02 00:00:00') LOCATION '/d/2'"
    )
