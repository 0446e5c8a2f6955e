"""FLIP-145's Bid table through each window TVF, on the real local Spark."""

from datetime import datetime

BID = """
bidtime,price,item
2020-04-15 08:07:00,2,A
2020-04-15 08:11:00,3,B
2020-04-15 08:05:00,4,C
2020-04-15 08:09:00,5,D
2020-04-15 08:13:00,1,E
2020-04-15 08:17:00,6,F
"""


def t(hhmm: str) -> datetime:
    h, m = hhmm.split(":")
    return datetime(2020, 4, 15, int(h), int(m))


def test_tumble_aggregate(project):
    project.seed("bid", BID)
    project.model(
        "tumble_agg",
        """
        {{ config(materialized='window_view') }}
        select window_start, window_end, sum(price) as price
        from {{ window_views.tumble(ref('bid'), 'bidtime', '10 minutes') }}
        group by window_start, window_end
        """,
    )
    project.dbt("build")
    assert project.rows("tumble_agg") == [(t("8:00"), t("8:10"), 11), (t("8:10"), t("8:20"), 10)]
