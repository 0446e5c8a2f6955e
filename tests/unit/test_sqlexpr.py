"""The expression builders generated SQL is made of, run on DuckDB (transpiled from Spark SQL)."""

import duckdb
import sqlglot
from sqlglot import exp

from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.query.sqlexpr import column


def rows(node: exp.Expression) -> list:
    con = duckdb.connect()
    con.execute("create table t as select * from (values (1, 10), (2, 20), (3, null)) t(a, b)")
    return sorted(con.execute(sqlglot.transpile(sqlexpr.to_sql(node), read="spark", write="duckdb")[0]).fetchall())


def test_wrap_adds_columns_hides_others_and_filters():
    query = sqlexpr.parse("select a, b, a * 2 as h from t")
    double = sqlexpr.wrap(query, [("c", column("h") + column("b"))], hidden=["h"], where=column("a") >= 2)
    assert rows(double) == [(2, 20, 24), (3, None, None)]
    assert rows(sqlexpr.wrap(double, [("n", sqlexpr.coalesce(column("c"), 0))], star=False)) == [(0,), (24,)]


def test_wrap_moves_a_with_out_so_the_wrapper_stands_where_the_query_stood():
    query = sqlexpr.parse("with u as (select a from t where a > 1) select a from u")
    outer = sqlexpr.parse("select * from (select 1) x")
    outer.find(exp.Select, bfs=False).args["from_"].this.set("this", sqlexpr.wrap(query, [("z", column("a") * 10)]))
    assert rows(outer) == [(2, 20), (3, 30)]


def test_windows_order_nulls_as_spark_does():
    desc = sqlexpr.window(exp.RowNumber(), order_by=[sqlexpr.ordered(column("b"), descending=True)])
    asc = sqlexpr.window(exp.RowNumber(), order_by=[sqlexpr.ordered(column("b"))])
    frame = sqlexpr.frame("rows", ("UNBOUNDED", "PRECEDING"), ("CURRENT ROW", None))
    total = sqlexpr.window(exp.Sum(this=column("a")), order_by=[sqlexpr.ordered(column("a"))], frame=frame)
    query = sqlexpr.wrap(sqlexpr.parse("select a, b from t"), [("d", desc), ("u", asc), ("s", total)])
    # descending: NULLs last; ascending: NULLs first
    assert rows(query) == [(1, 10, 2, 2, 1), (2, 20, 1, 3, 3), (3, None, 3, 1, 6)]


def test_fill_and_least():
    template = sqlexpr.parse("coalesce(:a + :b, :a)")
    filled = sqlexpr.fill(template, a=column("a"), b=column("b"))
    assert sqlexpr.to_sql(filled) == "COALESCE(`a` + `b`, `a`)" and ":a" in sqlexpr.to_sql(template)
    assert sqlexpr.least([column("a")]) == column("a")
    assert rows(
        sqlexpr.wrap(sqlexpr.parse("select a from t"), [("m", sqlexpr.least([column("a"), 2]))], star=False)
    ) == [(1,), (2,), (2,)]


def test_replaced_swaps_a_node_or_the_whole_tree():
    tree = sqlexpr.parse("a + b")
    assert sqlexpr.to_sql(sqlexpr.replaced(tree, tree.find(exp.Column), column("c"))) == "`c` + b"
    assert sqlexpr.replaced(tree, tree, column("d")) == column("d")


def test_qualified_names_the_table_of_unqualified_columns_only():
    qualified = sqlexpr.qualified(sqlexpr.parse("coalesce(a, u.b) + 1"), "t")
    assert sqlexpr.to_sql(qualified) == "COALESCE(t.a, u.b) + 1"


def test_ctes_of_one_name_in_different_scopes_are_named_apart():
    # sqlglot moves every CTE to the top: unrenamed, both `p`s would clash there, or `p` would
    # name the wrong one
    two = (
        "select * from (with p as (select 1 as a) select a from p) x join (with p as (select 2 as a) select a from p) y"
    )
    assert sqlexpr.to_sql(sqlexpr.parse(two)) == (
        "WITH p_0 AS (SELECT 1 AS a), p_1 AS (SELECT 2 AS a) SELECT * FROM (SELECT a FROM p_0) AS x "
        "JOIN (SELECT a FROM p_1) AS y ON TRUE"
    )
    nested = "with p as (select 0 as a), q as (select * from p) select * from q, (with P as (select 2 as a) select a from p) y"
    assert sqlexpr.to_sql(sqlexpr.parse(nested)) == (
        "WITH p_0 AS (SELECT 0 AS a), q AS (SELECT * FROM p_0), P_1 AS (SELECT 2 AS a) SELECT * FROM q "
        "CROSS JOIN (SELECT a FROM P_1) AS y"
    )
    # names used once stay as written
    assert sqlexpr.to_sql(sqlexpr.parse("with p as (select 1 as a) select a from p")) == (
        "WITH p AS (SELECT 1 AS a) SELECT a FROM p"
    )
