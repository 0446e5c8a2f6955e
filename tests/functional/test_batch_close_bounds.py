"""Batch emit='on_window_close' closes a window TVF's windows by the column that is window_end,
under whatever name the model selects it (Nexmark's `window_end AS endtime`), or by a hidden
one when the model selects none: the same windows as the model with the plain names."""

from tests.support.data import FLIP145_BID
from tests.support.dbt_projects import sources_yml

EOWC = "materialized='window_view', emit='on_window_close', watermark={'column': 'bidtime', 'delay': '1 minute'}"
TUMBLE = "{{ window_views.tumble(ref('bid'), 'bidtime', '10 minutes') }}"
MODELS = {
    "plain": f"select window_start, window_end, sum(price) as price from {TUMBLE} group by window_start, window_end",
    "renamed": (
        "select window_start as starttime, window_end as endtime, sum(price) as price\n"
        f"from {TUMBLE} group by window_start, window_end"
    ),
    # Nexmark q5's shape: window_end only in the GROUP BY
    "unselected": f"select window_start as starttime, sum(price) as price from {TUMBLE} group by window_start, window_end",
    "updated": f"select window_start, window_end, sum(price) as price from {TUMBLE} group by window_start, window_end",
}


def test_renamed_window_end_closes_the_same_windows(project):
    project.seed("bid", FLIP145_BID)
    for name, sql in MODELS.items():
        config = "materialized='window_view'" if name == "updated" else EOWC
        project.model(name, f"{{{{ config({config}) }}}}\n{sql}")
    project.dbt("build")
    (watermark,) = project.spark.sql(f"select max(bidtime) - interval 1 minute from {project.schema}.bid").first()
    plain, updated = project.rows("plain"), project.rows("updated")
    # some window is still open at W, and only the closed ones are written
    assert 0 < len(plain) < len(updated)
    assert all(end <= watermark for _, end, _ in plain)
    assert plain == [row for row in updated if row[1] <= watermark]
    assert project.columns("renamed") == ["starttime", "endtime", "price"]
    assert project.rows("renamed") == plain
    # a bound the model does not select closes its windows all the same, and is not written
    assert project.columns("unselected") == ["starttime", "price"]
    assert project.rows("unselected") == [(start, price) for start, _, price in plain]


def test_batch_equals_streaming_with_renamed_bounds(project):
    """Batch on_window_close of renamed or unselected bounds writes the windows a stream writes
    over the same rows, delivered in order (no late rows)."""
    project.spark.sql(f"create database if not exists {project.schema}")
    project.spark.sql(f"create table {project.schema}.bid (bidtime timestamp, price int, item string) using parquet")
    project.write("models/sources.yml", sources_yml("bid"))
    rows = sorted(FLIP145_BID.splitlines()[1:])
    for name in ("renamed", "unselected"):
        sql = MODELS[name].replace("ref('bid')", "source('raw', 'bid')")
        project.model(f"batch_{name}", f"{{{{ config({EOWC}) }}}}\n{sql}")
        project.model(f"stream_{name}", f"{{{{ config({EOWC}, execution='streaming') }}}}\n{sql}")
    for delivery in (rows[:3], rows[3:]):
        values = ", ".join(f"(timestamp'{t}', {p}, '{i}')" for t, p, i in (r.split(",") for r in delivery))
        project.spark.sql(f"insert into {project.schema}.bid values {values}")
        project.dbt("run", "-s", "stream_renamed", "stream_unselected")
    project.dbt("run", "-s", "batch_renamed", "batch_unselected")
    for name in ("renamed", "unselected"):
        assert project.columns(f"batch_{name}") == project.columns(f"stream_{name}")
        assert project.rows(f"batch_{name}") == project.rows(f"stream_{name}"), name
        assert project.rows(f"batch_{name}"), name
