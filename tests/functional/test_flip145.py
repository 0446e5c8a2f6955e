"""FLIP-145's Bid table through each window TVF, on the real local Spark."""

from datetime import datetime

from tests.support.data import FLIP145_BID as BID


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
