"""A keyed Top-N read from the SQL (topn.py): the ranking per key kept by its rank in the outer
WHERE, in its forms (subquery or CTE, `<=`, `<`, `=`, the bound on either side); what a stream
cannot keep per key is refused naming the call and its rank filter; a ranking by the watermark
column ascending stays with over windows."""

import pytest
from sqlglot import exp

from dbt.adapters.window_views.errors import AnalysisError, ModelSqlError
from dbt.adapters.window_views.kinds import topn
from dbt.adapters.window_views.query import analysis
from dbt.adapters.window_views.streaming.batch_writer import shape_of
from dbt.adapters.window_views.streaming.shapes.topn_shapes import TopNOnUpdate
from tests.support.streams import build
from tests.unit.test_refusals import Q18, Q19, config

RANKED = "SELECT *, {call} AS r FROM s.bid"
BY_PRICE = "ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC)"


def found(sql: str) -> topn.TopN:
    ranking = topn.find(analysis.parse(sql), "dateTime")
    assert ranking is not None, sql
    return ranking.top_n()


def refused(sql: str) -> str:
    with pytest.raises(AnalysisError) as raised:
        topn.find(analysis.parse(sql), "dateTime")
    return str(raised.value)


@pytest.mark.parametrize(
    "where, limit",
    [("r <= 3", 3), ("r < 3", 2), ("r = 1", 1), ("3 >= r", 3), ("1 = r", 1), ("r <= 5 AND price > 2 AND r < 3", 2)],
)
def test_the_rank_filter_bounds_the_rows_kept(where, limit):
    top = found(f"SELECT * FROM ({RANKED.format(call=BY_PRICE)}) WHERE {where}")
    assert (top.keys, top.limit, top.call) == (("auction",), limit, BY_PRICE)
    assert top.state_sql.endswith(f"WHERE _wv_rank <= {limit}")


def test_a_cte_ranked_and_read_is_a_top_n_too():
    top = found(f"WITH ranked AS ({RANKED.format(call=BY_PRICE)}) SELECT auction, price FROM ranked WHERE r <= 2")
    assert top.limit == 2 and top.kept_by == "r <= 2"


@pytest.mark.parametrize("func", ["RANK()", "DENSE_RANK()"])
def test_rank_and_dense_rank_keep_every_row_ranked_within_the_bound(func):
    top = found(
        f"SELECT * FROM ({RANKED.format(call=f'{func} OVER (PARTITION BY auction ORDER BY price)')}) WHERE r <= 2"
    )
    assert f"{func} OVER (PARTITION BY auction ORDER BY price) AS _wv_rank" in top.state_sql


def test_the_state_ranks_over_the_models_own_where():
    top = found("SELECT * FROM (SELECT *, " + BY_PRICE + " AS r FROM s.bid WHERE price > 0) WHERE r <= 1")
    assert "FROM s.bid WHERE price > 0) AS _wv_rows WHERE _wv_rank <= 1" in top.state_sql


@pytest.mark.parametrize(
    "sql, output_sql",
    [
        (  # q18's: the rank read from the ranked rows, the home selected beside the model's columns
            "SELECT auction, bidder FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY "
            "dateTime DESC) AS rn FROM s.bid) WHERE rn <= 1",
            "SELECT auction, bidder, _wv_home FROM (SELECT *, _wv_rank AS rn FROM s.bid) WHERE rn <= 1",
        ),
        (  # q19's `*` on both levels passes the home as it is
            f"SELECT * FROM ({RANKED.format(call=BY_PRICE)}) WHERE r <= 10",
            "SELECT * FROM (SELECT *, _wv_rank AS r FROM s.bid) WHERE r <= 10",
        ),
        (  # a CTE that selects columns, and a GROUP BY of the key around it: grouped by the home too
            f"WITH t AS (SELECT auction, price, {BY_PRICE} AS r FROM s.bid WHERE price > 0) "
            "SELECT auction, max(price) AS top FROM t WHERE r <= 3 GROUP BY auction",
            "WITH t AS (SELECT auction, price, _wv_rank AS r, _wv_home FROM s.bid WHERE price > 0) "
            "SELECT auction, MAX(price) AS top, _wv_home FROM t WHERE r <= 3 GROUP BY auction, _wv_home",
        ),
    ],
)
def test_the_output_reads_the_rank_of_the_ranked_rows_and_passes_their_home(sql, output_sql):
    tree = analysis.parse(sql)
    ranking = topn.find(tree, "dateTime")
    assert ranking is not None and ranking.top_n().output_sql == output_sql
    assert tree.sql("spark") == analysis.parse(sql).sql("spark")  # the model's own tree as it was


def test_the_state_reads_the_from_as_the_tree_has_it_when_rendered():
    # the stream plan finds the ranking, then points the input at its view, then renders
    tree = analysis.parse(f"SELECT * FROM ({RANKED.format(call=BY_PRICE)}) WHERE r <= 3")
    ranking = topn.find(tree, "dateTime")
    assert ranking is not None and "FROM s.bid)" in ranking.top_n().state_sql
    next(tree.find_all(exp.Table)).replace(exp.alias_(exp.to_table("v"), "bid", table=True))
    assert "FROM v AS bid)" in ranking.top_n().state_sql


@pytest.mark.parametrize(
    "sql",
    [
        RANKED.format(call=BY_PRICE),  # no rank filter: not a Top-N (over windows refuse it)
        f"SELECT * FROM ({RANKED.format(call=BY_PRICE)}) WHERE price <= 3",
        # ranked by the event time ascending: rows final as W passes them, over windows keep it
        f"SELECT * FROM ({RANKED.format(call='ROW_NUMBER() OVER (PARTITION BY auction ORDER BY dateTime)')}) WHERE r = 1",
    ],
    ids=["no-filter", "other-filter", "ascending-time"],
)
def test_what_is_not_a_top_n(sql):
    assert topn.find(analysis.parse(sql), "dateTime") is None


@pytest.mark.parametrize(
    "sql, says",
    [
        (
            "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY price DESC) AS r FROM s.bid) WHERE r <= 3",
            "ranks every row together (no PARTITION BY)",
        ),
        (
            "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction % 2 ORDER BY price) AS r FROM s.bid) "
            "WHERE r <= 3",
            "is partitioned by expressions",
        ),
        (
            f"SELECT price FROM ({RANKED.format(call=BY_PRICE)}) WHERE r <= 3",
            "must output its PARTITION BY column(s) `auction` unchanged; fix: add them to the output columns",
        ),
        (
            f"SELECT * FROM (SELECT *, {BY_PRICE} AS r, LAG(price) OVER (ORDER BY dateTime) AS p FROM s.bid) "
            "WHERE r <= 3",
            "also computes `LAG(price) OVER (ORDER BY dateTime)`",
        ),
        (
            f"SELECT * FROM (SELECT auction, max(price) AS price, {BY_PRICE} AS r FROM s.bid GROUP BY auction) "
            "WHERE r <= 3",
            "must rank the upstream table's rows directly",
        ),
        (f"SELECT * FROM ({RANKED.format(call=BY_PRICE)}) WHERE r <= 3 LIMIT 5", "must be the model's outermost"),
    ],
    ids=["no-keys", "key-expression", "keys-not-selected", "another-call", "group-by", "limit"],
)
def test_a_top_n_a_stream_cannot_keep_is_refused_naming_it(sql, says):
    message = refused(sql)
    assert message.startswith("the Top-N `") and "` kept by `r <= 3`" in message, message
    assert says in message and "fix:" in message, message


@pytest.mark.parametrize("sql, keys, limit", [(Q18, ("bidder", "auction"), 1), (Q19, ("auction",), 10)])
def test_nexmark_q18_and_q19_stream_as_a_keyed_top_n_on_update(sql, keys, limit):
    plan = build("q", sql, config("on_update"), ())
    assert plan.over is None and plan.window is None and plan.top_n is not None
    assert (plan.top_n.keys, plan.top_n.limit) == (keys, limit)
    # the state's query reads the view a micro-batch fills, not the upstream table
    assert f"FROM {plan.view} AS bid" in plan.top_n.state_sql
    assert isinstance(shape_of(plan), TopNOnUpdate)


def test_a_top_n_refusal_names_the_model():
    sql = f"SELECT price FROM ({RANKED.format(call=BY_PRICE)}) WHERE r <= 3"
    with pytest.raises(ModelSqlError) as raised:
        build("q", sql, config("on_update"), ())
    assert raised.value.msg.startswith("window_view model 'q': the Top-N `" + BY_PRICE + "` kept by `r <= 3`")
