"""Streaming over windows in both emit modes: rows delivered out of order over several runs;
after every run each streaming table equals the batch view with the same emit mode over the rows
delivered so far minus the late ones (the batch views are checked against oracles elsewhere)."""

import json
import random
import shutil
from datetime import datetime, timedelta
from itertools import takewhile
from pathlib import Path
from typing import Tuple
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from dbt.adapters.window_views.kinds import topn
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.streaming import shuffles
from dbt.adapters.window_views.streaming.shapes import state, topn_shapes
from tests.support.dbt_projects import errors, sources_yml

CONFIG = "materialized='window_view', emit='on_window_close', watermark={'column': 'ts', 'delay': '2 minutes'}"
OVER = """
select stock, ts, seq, price,
  price - lag(price) over (partition by stock order by ts, seq) as change,
  lag(price, 2, -1) over (partition by stock order by ts, seq) as two_back,
  lead(price) over (partition by stock order by ts, seq) as next_price,
  avg(price) over (partition by stock order by ts, seq rows between 2 preceding and current row) as avg3,
  sum(price) over (partition by stock order by ts, seq rows between 1 preceding and 1 following) as around,
  count(*) over (partition by stock order by ts range between interval 5 minutes preceding and current row) as last5min,
  max(price) over (partition by stock order by ts range between interval 2 minutes preceding and interval 1 minute following) as peak,
  -- descending over the event time: streamed as the mirrored ascending calls
  first_value(price) over (partition by stock order by ts desc, seq desc rows between current row and 2 following) as first3_desc,
  sum(price) over (partition by stock order by ts desc, seq desc rows between 1 preceding and current row) as pair_desc,
  lag(price) over (partition by stock order by ts desc, seq desc) as next_desc,
  nth_value(price, 2) over (partition by stock order by ts, seq rows between 3 preceding and current row) as second_of4,
  last_value(price) ignore nulls over (partition by stock order by ts, seq rows between 3 preceding and current row) as last_known,
  -- no per-partition summary serves it: the state keeps the whole partition
  last_value(price) over (partition by stock order by ts, seq rows between unbounded preceding and 2 preceding) as third_last
from {{ relation }}
"""
UNBOUNDED = """
select stock, ts, seq,
  -- first: the summaries' first group has no PARTITION BY (the kept rows go with the next one's)
  min(price) over (order by ts, seq rows between unbounded preceding and current row) as low_all,
  row_number() over (partition by stock order by ts, seq) as n,
  sum(price) over (partition by stock order by ts, seq rows between unbounded preceding and current row) as running,
  rank() over (partition by stock order by ts) as rank_ts,
  dense_rank() over (partition by stock order by ts) as dense_ts,
  first_value(price) over (partition by stock order by ts range between unbounded preceding and current row) as opening,
  avg(price) over (partition by stock order by ts, seq rows between unbounded preceding and 1 preceding) as avg_before,
  count(*) over (partition by stock order by ts range between unbounded preceding and interval 1 minute preceding) as older,
  max(price) over (partition by stock order by ts, seq rows between unbounded preceding and 1 following) as peak_next,
  sum(price) over (order by ts range between unbounded preceding and current row) as total_all
from {{ relation }}
where price is not null
"""


# one PARTITION BY for every summary: the rows kept and the summary come from one aggregate (state.py)
RUNNING = """
select stock, ts, seq,
  row_number() over (partition by stock order by ts, seq) as n,
  sum(price) over (partition by stock order by ts, seq rows between unbounded preceding and current row) as running,
  dense_rank() over (partition by stock order by ts) as dense_ts,
  first_value(price) over (partition by stock order by ts range between unbounded preceding and current row) as opening,
  avg(price) over (partition by stock order by ts, seq rows between unbounded preceding and 1 preceding) as avg_before,
  max(price) over (partition by stock order by ts, seq rows between unbounded preceding and 1 following) as peak_next
from {{ relation }}
"""


# a LEAD makes each partition's last row wait for its next one
QUIET = """
select {cols}ts, seq, price,
  lead(price) over (partition by stock order by ts, seq) as next_price,
  avg(price) over (partition by stock order by ts, seq rows between 2 preceding and current row) as avg3
from {{{{ relation }}}}
"""


def last_commit_file(project, model: str) -> Path:
    """The last commit of the stream's checkpoint folder of the plugin."""
    location = (
        project.spark.sql(f"describe table extended {project.schema}.{model}").where("col_name = 'Location'").first()[1]
    )
    table = Path(urlparse(location).path)
    root = table.with_name(table.name + "__checkpoint") / "window_views"
    return max(root.glob("commits/*.json"), key=lambda p: int(p.stem))


def last_commit(project, model: str) -> dict:
    return json.loads(last_commit_file(project, model).read_text())


def state_folder(project, model: str) -> Tuple[Path, str]:
    """The stream's checkpoint folder of the plugin, and the state folder its last commit names."""
    last = last_commit_file(project, model)
    return last.parent.parent, json.loads(last.read_text())["state_batch"]


def batch_jobs(project, model: str) -> int:
    """The Spark jobs of the model's last micro-batch (streaming/labels.py names them): the last
    ones of its name (an earlier test's model of the same name ran in this session too)."""
    jobs = project.spark.sparkContext._jsc.sc().statusStore().jobsList(None)
    prefix = f"window_view {model}, micro-batch "
    batches = []
    for job in sorted((jobs.apply(i) for i in range(jobs.size())), key=lambda j: j.jobId()):
        described = job.description()
        if described.isDefined() and described.get().startswith(prefix):
            batches.append(int(described.get()[len(prefix) :].split(":")[0]))
    return sum(1 for _ in takewhile(lambda b: b == batches[-1], reversed(batches)))


class Ticks:
    """Ticks delivered to both sources (`ticks` for the stream, `ticks_kept` for the batch view):
    each minute from `start`, one row per stock, `None` the NULL stock."""

    def __init__(self, project, start: datetime) -> None:
        self.project, self.start, self.seq = project, start, 0

    def deliver(self, stocks, first: int, minutes: int) -> None:
        rows = []
        for m in range(first, first + minutes):
            for s in stocks:
                self.seq += 1
                stock = "NULL" if s is None else f"'{s}'"
                rows.append(
                    f"({stock}, timestamp'{self.start + timedelta(minutes=m):%Y-%m-%d %H:%M:%S}', {self.seq}, {self.seq % 7 + 1.0})"
                )
        for table in ("ticks", "ticks_kept"):
            self.project.spark.sql(f"insert into {self.project.schema}.{table} values {', '.join(rows)}")


def state_rows(project, model: str) -> int:
    """How many input rows the stream's state keeps after its last batch."""
    root, name = state_folder(project, model)
    rows = project.spark.read.option("mergeSchema", "true").parquet(str(root / "state" / name))
    # the prefix summaries are written beside the rows, with their group in _wv_part
    return rows.where("_wv_part is null").count() if "_wv_part" in rows.columns else rows.count()


def setup(project, models, emits=("on_window_close",)):
    project.spark.sql(f"create database if not exists {project.schema}")
    for table in ("ticks", "ticks_kept"):
        project.spark.sql(
            f"create table {project.schema}.{table} (stock string, ts timestamp, seq int, price double) using parquet"
        )
    project.write("models/sources.yml", sources_yml("ticks", "ticks_kept"))
    for emit in emits:
        config = CONFIG.replace("on_window_close", emit)
        suffix = "" if emit == "on_window_close" else "_upd"
        for name, sql in models.items():
            project.model(
                f"{name}{suffix}_stream",
                f"{{{{ config({config}, execution='streaming') }}}}\n"
                + sql.replace("{{ relation }}", "{{ source('raw', 'ticks') }}"),
            )
            project.model(
                f"{name}{suffix}_batch",
                f"{{{{ config({config}) }}}}\n" + sql.replace("{{ relation }}", "{{ source('raw', 'ticks_kept') }}"),
            )


def keep_on_time(project, late: str) -> None:
    """The batch views' input: every tick delivered to the stream but the late ones (streaming
    equals batch minus late)."""
    project.spark.sql(f"truncate table {project.schema}.ticks_kept")
    project.spark.sql(
        f"insert into {project.schema}.ticks_kept select * from {project.schema}.ticks "
        f"except all select stock, ts, seq, price from {project.schema}.{late}"
    )


def test_over_windows_stream_equals_batch_after_every_run(project):
    setup(project, {"over": OVER, "unbounded": UNBOUNDED, "running": RUNNING}, emits=("on_window_close", "on_update"))
    models = ["over", "unbounded", "running", "over_upd", "unbounded_upd", "running_upd"]
    rng = random.Random(11)
    start = datetime(2024, 1, 1, 9, 0)
    rows = []
    for seq in range(120):
        ts = start + timedelta(seconds=rng.randrange(0, 2700))
        price = None if rng.random() < 0.05 else float(rng.randrange(90, 110))
        rows.append((rng.choice(["A", "B", "C", None]), ts, seq, price))  # NULL: a partition of its own
    rows.sort(key=lambda r: r[1])
    # deliveries in time order, each shuffled and with a few stragglers from earlier
    batches = [rows[i : i + 40] for i in range(0, 120, 40)]
    batches[0] += [("A", None, 900, 1.0), ("B", None, 901, 2.0)]  # no event time: late, kept aside
    for i in range(1, len(batches)):
        stragglers = rng.sample(batches[i - 1], 3)
        batches[i - 1] = [r for r in batches[i - 1] if r not in stragglers]
        batches[i] = stragglers + batches[i]
    total_late = 0
    for batch in batches:
        rng.shuffle(batch)
        values = ", ".join(
            f"({'null' if s is None else repr(s)}, {'null' if ts is None else 'timestamp' + repr(f'{ts:%Y-%m-%d %H:%M:%S}')}, {seq}, {'null' if p is None else p})"
            for s, ts, seq, p in batch
        )
        project.spark.sql(f"insert into {project.schema}.ticks values {values}")
        result = project.dbt("run", "-s", *[f"{m}_stream" for m in models])
        late = {r.node.name: r.adapter_response["late_rows"] for r in result.result}
        reported = {r.node.name: r.adapter_response["state_rows"] for r in result.result}
        assert len(set(late.values())) == 1, late
        total_late += late["over_stream"]
        keep_on_time(project, "over_stream__late")
        project.dbt("run", "-s", *[f"{m}_batch" for m in models])
        for m in models:
            stream = project.rows(f"{m}_stream", "stock, ts, seq")
            assert stream == project.rows(f"{m}_batch", "stock, ts, seq"), m
    assert total_late > 2, "the deliveries were meant to make some rows late"
    assert len(project.rows("over_stream")) > 75
    # frames from UNBOUNDED PRECEDING and ranks keep a summary per partition, not the rows
    assert all(
        state_rows(project, f"{m}_stream") < 25 for m in ("unbounded", "unbounded_upd", "running", "running_upd")
    )
    assert state_rows(project, "over_stream") > 75  # LAST_VALUE from UNBOUNDED PRECEDING keeps them all
    # the run result reports the state it left (run_results.json, and a table property)
    assert all(reported[f"{m}_stream"] == state_rows(project, f"{m}_stream") for m in models), reported
    properties = dict(project.spark.sql(f"show tblproperties {project.schema}.over_stream").collect())
    assert properties["window_views.state_rows"] == str(reported["over_stream"])


@pytest.mark.parametrize(
    "select, message",
    [
        (
            "select ts, lag(price) over (order by seq) as p from {{ source('raw', 'ticks') }}",
            "is not ordered by the watermark column",
        ),
        (
            "select ts, sum(price) over (order by ts rows between current row and unbounded following) as p from {{ source('raw', 'ticks') }}",
            "has a frame ending in UNBOUNDED FOLLOWING, which never closes",
        ),
        (
            "select ts, first_value(price) over (order by ts desc) as p from {{ source('raw', 'ticks') }}",
            "orders the watermark column descending",
        ),
        (
            "select ts, ntile(4) over (order by ts) as p from {{ source('raw', 'ticks') }}",
            "depends on the whole partition",
        ),
        (
            "select * from (select ts, stock, lag(price) over (partition by stock order by ts) as p from {{ source('raw', 'ticks') }}) "
            "join {{ source('raw', 'ticks') }} using (ts)",
            "ticks 2 times; a stream is consumed once",
        ),
        (
            "with priced as (select * from {{ source('raw', 'ticks') }} where price > 0) "
            "select ts, lag(price) over (order by ts) as p from priced",
            "the query with the window functions reads the CTE `priced`",
        ),
    ],
    ids=["order-not-watermark", "unbounded-following", "descending", "whole-partition", "self-join", "cte"],
)
def test_over_windows_streaming_cannot_maintain_are_refused(project, select, message):
    setup(project, {})
    project.model("refused", f"{{{{ config({CONFIG}, execution='streaming') }}}}\n{select}")
    result = project.dbt("run", "-s", "refused", ok=False)
    assert "window_view model 'refused'" in errors(result) and message in errors(result)
    assert "fix:" in errors(result)


def test_on_update_over_windows_need_the_event_time_in_their_output(project):
    setup(project, {})
    project.model(
        "updating",
        "{{ config(materialized='window_view', execution='streaming', watermark={'column': 'ts', 'delay': '1 minute'}) }}\n"
        "select stock, lag(price) over (order by ts) as p from {{ source('raw', 'ticks') }}",
    )
    result = project.dbt("run", "-s", "updating", ok=False)
    assert "must output the watermark column `ts` unchanged; fix: add it to the select list" in errors(result)


def test_on_update_revises_the_rows_a_new_row_follows(project):
    setup(project, {})
    project.model(
        "next_tick",
        "{{ config(materialized='window_view', execution='streaming', watermark={'column': 'ts', 'delay': '1 minute'}) }}\n"
        "select stock, ts, lead(price) over (partition by stock order by ts) as next_price from {{ source('raw', 'ticks') }}",
    )

    def deliver(*rows):
        values = ", ".join(f"('{s}', timestamp'2024-01-01 09:{m:02d}:00', {m}, {p})" for s, m, p in rows)
        project.spark.sql(f"insert into {project.schema}.ticks values {values}")

    deliver(("A", 1, 10.0), ("A", 3, 30.0), ("B", 2, 20.0))
    project.dbt("run", "-s", "next_tick")
    at = lambda m: datetime(2024, 1, 1, 9, m)
    assert project.rows("next_tick") == [("A", at(1), 30.0), ("A", at(3), None), ("B", at(2), None)]
    # 09:04 changes A's 09:03 row; 09:01 is at or before W (09:02), so late
    deliver(("A", 4, 40.0), ("B", 1, 5.0))
    result = project.dbt("run", "-s", "next_tick")
    assert result.result[0].adapter_response["late_rows"] == 1
    assert project.rows("next_tick") == [("A", at(1), 30.0), ("A", at(3), 40.0), ("A", at(4), None), ("B", at(2), None)]


def test_a_descending_tie_breaker_keeps_the_rows_its_frames_read(project):
    """`order by ts, seq desc`: among ticks tied on ts, the last in the calls' order has the
    lowest seq. The state must keep the rows a frame reaches back to in that order, or the next
    batch's LAG and ROWS frames read the wrong tied row."""
    select = """
    select stock, ts, seq, price,
      lag(price) over (partition by stock order by ts, seq desc) as before,
      sum(price) over (partition by stock order by ts, seq desc rows between 2 preceding and current row) as last3
    from {{ relation }}
    """
    setup(project, {"ties": select}, emits=("on_window_close", "on_update"))
    models = ["ties", "ties_upd"]
    rng = random.Random(5)
    seq = 0
    for minute in range(0, 40, 8):
        rows = []
        for m in range(minute, minute + 8):  # three or four ticks a minute, tied on ts
            for _ in range(rng.choice([3, 4])):
                seq += 1
                rows.append((rng.choice("AB"), m, seq, float(rng.randrange(1, 100))))
        rng.shuffle(rows)
        values = ", ".join(f"('{s}', timestamp'2024-01-01 09:{m:02d}:00', {q}, {p})" for s, m, q, p in rows)
        project.spark.sql(f"insert into {project.schema}.ticks values {values}")
        project.spark.sql(f"insert into {project.schema}.ticks_kept values {values}")
        project.dbt("run", "-s", *[f"{m}_stream" for m in models])
        project.dbt("run", "-s", *[f"{m}_batch" for m in models])
        for m in models:
            assert project.rows(f"{m}_stream", "stock, ts, seq") == project.rows(f"{m}_batch", "stock, ts, seq"), (
                m,
                minute,
            )


@pytest.mark.parametrize("large", [False, True], ids=["small batches", "large batches"])
def test_on_update_recomputes_from_the_point_its_last_batch_recorded(project, monkeypatch, large):
    """An on_update batch recomputes from the point the batch before kept its state for, which
    that batch recorded in its commit (no job of its own to find it): a window over every row in
    a small batch, a scalar subquery in a large one (here every batch counts as large); the
    stream equals the batch view."""
    if large:
        monkeypatch.setattr(shuffles, "SMALL_BATCH_ROWS", 0)
    setup(project, {"over": OVER}, emits=("on_update",))
    spark = project.spark
    start = datetime(2024, 1, 1, 9, 0)

    def deliver(rows):
        values = ", ".join(
            f"('{s}', timestamp'{start + timedelta(minutes=m):%Y-%m-%d %H:%M:%S}', {q}, {p})" for s, m, q, p in rows
        )
        for table in ("ticks", "ticks_kept"):
            spark.sql(f"insert into {project.schema}.{table} values {values}")

    deliver(
        [
            ("A", 0, 1, 10.0),
            ("B", 1, 2, 20.0),
            ("A", 2, 3, 11.0),
            ("A", 9, 4, 9.0),
            ("B", 10, 5, 21.0),
            ("A", 30, 6, 8.0),
        ]
    )
    project.dbt("run", "-s", "over_upd_stream")
    last = last_commit_file(project, "over_upd_stream")
    commit = json.loads(last.read_text())
    # W is 28 min; a row after it may come before A's row at 30 min, so change the LEAD (and
    # `around`) of A's row at 9 min: the earliest row a later one changes
    assert commit["recompute_from"] == int(
        (start + timedelta(minutes=9) - datetime(1970, 1, 1)).total_seconds() * 10**6
    )
    # and each partition's own point beside its kept rows (every call has PARTITION BY stock, a
    # LEAD looks ahead, and the output holds `stock`)
    assert commit["recompute_by"] == ["stock"]
    for rows in ([("B", 31, 7, 23.0), ("A", 33, 8, 12.0)], [("A", 40, 9, 15.0), ("B", 41, 10, 22.0)]):
        deliver(rows)
        project.dbt("run", "-s", "over_upd_stream", "over_upd_batch")
        assert project.rows("over_upd_stream", "stock, ts, seq") == project.rows("over_upd_batch", "stock, ts, seq")
    last = last_commit(project, "over_upd_stream")
    assert "recompute_from" in last and last["recompute_by"] == ["stock"]


def test_on_update_keeps_each_partitions_rows_apart_when_one_goes_quiet(project):
    """A LEAD makes a partition's last row wait for the next one. When a partition stops getting
    rows, that wait must not hold back the others: each partition keeps and recomputes from its
    own point (its PARTITION BY columns are in the output), so the state and the rows a run
    rewrites stay flat while the quiet partition's last row waits, and the row is revised when
    its next row comes at last. That run rewrites the hours of the revised rows and of the new
    ones, not the hours between. A run starts no more Spark jobs than one with none held back,
    whether its new rows reach a held-back partition or not: the state recorded where they are
    and the hours of their rows. A NULL stock is a partition too, held back and revised the same
    way. A model whose output lacks the PARTITION BY columns keeps one point for all partitions
    (the stream still equals the batch view)."""
    setup(project, {"quiet": QUIET.format(cols="stock, "), "blind": QUIET.format(cols="")}, emits=("on_update",))
    start = datetime(2024, 1, 1, 9, 0)
    ticks = Ticks(project, start)

    models = ["quiet_upd_stream", "blind_upd_stream"]
    kept, rewritten, jobs = {m: [] for m in models}, {m: [] for m in models}, []
    for run in range(5):  # Z's and NULL's last rows are at 9:09; then A and B each get 20 rows an hour apart
        ticks.deliver(["A", "B", "Z", None] if run == 0 else ["A", "B"], 60 * run, 10 if run == 0 else 20)
        result = project.dbt("run", "-s", *models, "quiet_upd_batch", "blind_upd_batch")
        for r in result.result:
            if r.node.name in models:
                kept[r.node.name].append(r.adapter_response["state_rows"])
                rewritten[r.node.name].append(r.adapter_response["rows_out"])
        jobs.append(batch_jobs(project, "quiet_upd_stream"))
        assert project.rows("quiet_upd_stream", "stock, ts, seq") == project.rows("quiet_upd_batch", "stock, ts, seq")
        assert project.rows("blind_upd_stream", "ts, seq") == project.rows("blind_upd_batch", "ts, seq")
    # per partition: A and B keep their last rows and what their frames reach; Z and NULL their
    # last rows, which wait for a next one, and the two before that their avg3 reads
    assert kept["quiet_upd_stream"][1:] == [kept["quiet_upd_stream"][1]] * 4, kept
    assert kept["quiet_upd_stream"][-1] <= 2 * 6 + 2 * 3, kept
    # once Z and NULL are held back (more than an hour), each run rewrites its 40 new rows and
    # the few before them that the new rows change
    assert max(rewritten["quiet_upd_stream"][2:]) <= 40 + 2 * 3, rewritten
    # and as many jobs as run 1, before any was held back: the new rows are in none of them, as
    # the state's record of where Z and NULL are tells
    assert jobs[2:] == [jobs[1]] * 3, jobs
    assert len(last_commit(project, "quiet_upd_stream")["held_back_at"]) == 2
    # one point for all: the 9:09 rows hold it back, so the state and the rows rewritten grow
    assert kept["blind_upd_stream"][-1] >= kept["blind_upd_stream"][1] + 3 * 40, kept
    assert rewritten["blind_upd_stream"][-1] > 3 * 40, rewritten
    # the next rows of Z and NULL revise their 9:09 rows, however long they waited
    ticks.deliver(["Z", None], 5 * 60, 1)
    project.dbt("run", "-s", *models, "quiet_upd_batch", "blind_upd_batch")
    # new rows in held-back partitions: no job more, the state recorded the hours of their rows
    assert batch_jobs(project, "quiet_upd_stream") == jobs[1], jobs
    # the run rewrote the 9:00 hour (the revised rows), the 13:00 hour (where A and B's shared
    # point lies, as any run does) and the 14:00 hour (the new rows), not the three hours
    # between, which hold no row of Z or NULL; one point for all rewrites every hour
    replaced = {}
    for m in models:
        replaced[m] = sorted(int(b[1:]) for b in last_commit(project, m)["replaced_buckets"])
    first = replaced["quiet_upd_stream"][0]
    assert replaced["quiet_upd_stream"] == [first, first + 4, first + 5], replaced
    assert replaced["blind_upd_stream"] == list(range(first, first + 6)), replaced
    assert project.rows("quiet_upd_stream", "stock, ts, seq") == project.rows("quiet_upd_batch", "stock, ts, seq")
    assert project.rows("blind_upd_stream", "ts, seq") == project.rows("blind_upd_batch", "ts, seq")
    for stock in ("Z", None):
        waited = [r for r in project.rows("quiet_upd_stream", "stock, ts, seq") if r[0] == stock]
        assert waited[-2][1] == start + timedelta(minutes=9) and waited[-2][4] is not None, (
            stock
        )  # next_price now known


def test_on_update_without_the_hours_of_held_back_partitions_finds_them_in_a_job(project, monkeypatch):
    """The state records where the held-back partitions are and the hours of their rows, up to
    HELD_MAX of them. Past the cap it records none: a batch cannot tell whether its new rows reach
    one, so it finds each partition's cut and the hours it rewrites (one more Spark job), and its
    rows equal the batch view's."""
    monkeypatch.setattr(state, "HELD_MAX", 1)
    setup(project, {"quiet": QUIET.format(cols="stock, ")}, emits=("on_update",))
    ticks = Ticks(project, datetime(2024, 1, 1, 9, 0))
    jobs = []
    # Z's and NULL's last rows are at 9:09, A and B go on an hour apart: two held back, and Z's
    # next rows come in the third run
    for stocks in (["A", "B", "Z", None], ["A", "B"], ["A", "B", "Z"]):
        ticks.deliver(stocks, 60 * len(jobs), 10 if not jobs else 20)
        if len(jobs) == 2:  # Z and NULL held back: past the cap, not recorded
            commit = last_commit(project, "quiet_upd_stream")
            assert "held_back_at" not in commit and "held_back_hours" not in commit, commit
        project.dbt("run", "-s", "quiet_upd_stream", "quiet_upd_batch")
        jobs.append(batch_jobs(project, "quiet_upd_stream"))
        assert project.rows("quiet_upd_stream", "stock, ts, seq") == project.rows("quiet_upd_batch", "stock, ts, seq")
    assert jobs[2] == jobs[1] + 1, jobs
    last = last_commit(project, "quiet_upd_stream")  # NULL is still held back, alone: recorded
    assert last["recompute_by"] == ["stock"] and len(last["held_back_at"]) == len(last["held_back_hours"]) == 1, last


def test_on_update_moves_a_loaded_day_to_hours_when_a_held_back_row_is_revised(project):
    """An initial load writes the days before W's day as days ('b' buckets), hours after. A row
    there that waits for its partition's next row (LEAD) is revised when that row comes, a day
    later: the run reads and rewrites that day, which moves to hours, and keeps every other row
    of it; no row is lost or doubled."""
    select = """
    select stock, ts, seq, price, lead(price) over (partition by stock order by ts, seq) as next_price
    from {{ relation }}
    """
    setup(project, {"waits": select}, emits=("on_update",))
    spark = project.spark

    def deliver(*rows):
        values = ", ".join(f"('{s}', timestamp'{ts}', {seq}, {seq}.0)" for s, ts, seq in rows)
        for table in ("ticks", "ticks_kept"):
            spark.sql(f"insert into {project.schema}.{table} values {values}")

    def files():  # each row's file
        rows = spark.sql(f"select seq, input_file_name() as f from {project.schema}.waits_upd_stream").collect()
        return {r.seq: r.f.rsplit("/", 1)[1] for r in rows}

    def run():
        project.dbt("run", "-s", "waits_upd_stream", "waits_upd_batch")
        assert project.rows("waits_upd_stream", "seq") == project.rows("waits_upd_batch", "seq")

    deliver(
        ("Z", "2024-01-01 23:50:00", 1),
        ("Y", "2024-01-01 23:55:00", 2),
        ("Y", "2024-01-01 23:56:00", 3),
        ("A", "2024-01-02 09:00:00", 4),
        ("A", "2024-01-02 09:05:00", 5),
    )
    run()
    loaded = files()
    assert {seq: name[0] for seq, name in loaded.items()} == {1: "b", 2: "b", 3: "b", 4: "h", 5: "h"}
    deliver(("A", "2024-01-02 09:10:00", 6))
    run()
    assert {seq: files()[seq] for seq in (1, 2, 3)} == {seq: loaded[seq] for seq in (1, 2, 3)}  # the day untouched
    deliver(("Z", "2024-01-02 09:20:00", 7))
    run()
    moved = files()
    assert {seq: moved[seq][0] for seq in (1, 2, 3)} == {1: "h", 2: "h", 3: "h"}  # the day, rewritten as hours
    assert [r[4] for r in project.rows("waits_upd_stream", "seq") if r[0] == "Z"] == [7.0, None]  # 23:50 revised


# a keyed Top-N (topn.py): each stock's two highest prices (by ROW_NUMBER and by RANK, which keeps
# ties at the second place), and its last tick (deduplication)
TOP2 = """
select * from (
  select *, row_number() over (partition by stock order by price desc, seq) as r from {{ relation }}
) where r <= 2
"""
RANK2 = """
select * from (select *, rank() over (partition by stock order by price desc) as r from {{ relation }}) where r <= 2
"""
LAST = """
select stock, ts, seq, price from (
  select *, row_number() over (partition by stock order by ts desc, seq desc) as r from {{ relation }}
) where r = 1
"""


def test_a_keyed_top_n_replaces_a_keys_rows_as_later_rows_enter_its_top(project, monkeypatch):
    setup(project, {"top2": TOP2, "rank2": RANK2, "last": LAST}, emits=("on_update",))
    models = ["top2_upd", "rank2_upd", "last_upd"]
    at = lambda m: datetime(2024, 1, 1, 9, m)  # noqa: E731
    # the state in parts: the third batch would make a third, so it writes the state whole
    monkeypatch.setattr(topn_shapes, "PARTS_MAX", 3)
    # the output by the keys' homes: a batch of more than 2 new rows splits its new keys by time,
    # and every bucket is full (new keys go to a new one)
    monkeypatch.setattr(topn_shapes, "SPLIT_ROWS", 2)
    monkeypatch.setattr(topn_shapes, "OPEN_BYTES", 1)

    def parts(model):
        """The state's folders its last commit names, and those in its checkpoint."""
        root, last = state_folder(project, model)
        named = [*last_commit(project, model)["state_parts"], last]
        return named, sorted((p.name for p in (root / "state").iterdir()), key=int)

    # the keys whose rows each batch ranks: those of its new rows only, the state's others carried over
    ranked = {}
    retained = topn_shapes.TopNOnUpdate.retained

    def spied(self, *args):
        rows = retained(self, *args)
        ranked[self.plan.model] = sorted({r[0] for r in rows.select("stock").collect()}, key=str)
        return rows

    monkeypatch.setattr(topn_shapes.TopNOnUpdate, "retained", spied)

    def deliver(*rows):
        values = ", ".join(
            f"({'null' if s is None else repr(s)}, timestamp'{at(m):%Y-%m-%d %H:%M:%S}', {q}, {p})"
            for s, m, q, p in rows
        )
        project.spark.sql(f"insert into {project.schema}.ticks values {values}")
        result = project.dbt("run", "-s", *[f"{m}_stream" for m in models])
        keep_on_time(project, "top2_upd_stream__late")
        project.dbt("run", "-s", *[f"{m}_batch" for m in models])
        for m in models:
            assert project.rows(f"{m}_stream", "stock, seq") == project.rows(f"{m}_batch", "stock, seq"), m
        return {r.node.name: r.adapter_response for r in result.result}

    deliver(("A", 0, 1, 10.0), ("A", 1, 2, 12.0), ("A", 2, 3, 11.0), ("B", 1, 4, 5.0), (None, 1, 5, 1.0))
    assert project.rows("top2_upd_stream", "stock, r") == [
        (None, at(1), 5, 1.0, 1),
        ("A", at(1), 2, 12.0, 1),
        ("A", at(2), 3, 11.0, 2),
        ("B", at(1), 4, 5.0, 1),
    ]
    # 5 new rows from 09:00 to 09:02 in 3 parts: B and the NULL stock last seen 09:01, A 09:02
    assert table_buckets(project, "top2_upd_stream") == ["g1", "g2"]
    # A's 09:05 takes its first place: its 11.0 row, emitted before, goes and its 12.0 row moves
    # down; 09:00 is at or before W (09:02 less the 2 minutes' delay), so late, however high.
    # The keys joined without a broadcast (a batch of many new rows) here
    with monkeypatch.context() as patched:
        patched.setattr(topn_shapes, "BROADCAST_ROWS", 0)
        runs = deliver(("A", 5, 6, 20.0), ("A", 0, 7, 99.0))
    assert sorted(ranked.values()) == [["A"]] * 3
    assert runs["top2_upd_stream"]["late_rows"] == 1
    # the ranked rows a part of their own beside the first batch's; the state's rows counted
    # across both (A's 11.0 replaced under ROW_NUMBER and RANK, its 10.0 under its last tick)
    assert [parts(f"{m}_stream") for m in models] == [(["0", "1"], ["0", "1"])] * 3
    assert [runs[f"{m}_stream"]["state_rows"] for m in models] == [4, 4, 3]
    assert project.rows("top2_upd_stream", "stock, r") == [
        (None, at(1), 5, 1.0, 1),
        ("A", at(5), 6, 20.0, 1),
        ("A", at(1), 2, 12.0, 2),
        ("B", at(1), 4, 5.0, 1),
    ]
    assert project.rows("last_upd_stream", "stock") == [
        (None, at(1), 5, 1.0),
        ("A", at(5), 6, 20.0),
        ("B", at(1), 4, 5.0),
    ]
    # A's new 12.0 ties its second place: below its ROW_NUMBER top (ties by seq), so top2 changes
    # nothing of A and rewrites B's bucket only; RANK keeps it beside the other 12.0
    runs = deliver(("A", 6, 8, 12.0), ("B", 6, 9, 7.0), ("B", 7, 10, 6.0))
    assert sorted(ranked.values()) == [["A", "B"]] * 3  # the NULL stock's row not ranked again
    assert project.rows("top2_upd_stream", "stock, r")[-2:] == [("B", at(6), 9, 7.0, 1), ("B", at(7), 10, 6.0, 2)]
    assert last_commit(project, "top2_upd_stream")["replaced_buckets"] == ["g1"]  # B's home
    assert [r[2] for r in project.rows("rank2_upd_stream", "stock, r, seq") if r[0] == "A"] == [6, 2, 8]
    # the state keeps each key's top rows only: 2 per stock (3 stocks), A's tie too under RANK,
    # and the last tick of each; written whole as one part, the parts before it gone
    assert [runs[f"{m}_stream"]["state_rows"] for m in models] == [5, 6, 3]
    assert [parts(f"{m}_stream") for m in models] == [(["2"], ["2"])] * 3
    deliver(("B", 8, 11, 8.0), ("C", 8, 12, 3.0))
    assert project.rows("top2_upd_stream", "stock, r")[-3:] == [
        ("B", at(8), 11, 8.0, 1),
        ("B", at(6), 9, 7.0, 2),
        ("C", at(8), 12, 3.0, 1),
    ]
    assert [parts(f"{m}_stream") for m in models] == [(["2", "3"], ["2", "3"])] * 3
    # B rewritten in its home; C, new, in a bucket of its own (the latest, g2, is full)
    assert last_commit(project, "top2_upd_stream")["replaced_buckets"] == ["g1", "g3"]
    assert table_buckets(project, "top2_upd_stream") == ["g1", "g2", "g3"]


def table_buckets(project, model: str) -> list:
    """The buckets the files of a streaming window view's table are in."""
    location = project.spark.sql(f"describe table extended {project.schema}.{model}")
    table = Path(urlparse(location.where("col_name = 'Location'").first()[1]).path)
    return sorted({storage.bucket_of(p.name) for p in table.glob("*.parquet")})


def test_a_top_n_written_before_homes_keeps_its_keys_in_their_hash_buckets(project, monkeypatch):
    setup(project, {"top2": TOP2}, emits=("on_update",))
    # the layout before homes, as that release wrote it: each key's output in a bucket by a hash
    # of the key (here: that bucket as every key's home), and no home in the state's rows
    with monkeypatch.context() as before:
        retained = topn_shapes.TopNOnUpdate.retained

        def hashed(self, *args):
            return retained(self, *args).withColumn(topn.HOME, F.expr(sqlexpr.to_sql(self.hashed_home)))

        before.setattr(topn_shapes.TopNOnUpdate, "retained", hashed)
        project.spark.sql(
            f"insert into {project.schema}.ticks values ('A', timestamp'2024-01-01 09:00:00', 1, 10.0), "
            "('B', timestamp'2024-01-01 09:00:00', 1, 5.0), ('C', timestamp'2024-01-01 09:00:00', 1, 7.0)"
        )
        project.dbt("run", "-s", "top2_upd_stream")
    root, last = state_folder(project, "top2_upd_stream")
    folder, without = root / "state" / last, root / "without_homes"
    project.spark.read.parquet(str(folder)).drop(topn.HOME).write.parquet(str(without))
    shutil.rmtree(folder)
    without.rename(folder)
    old = table_buckets(project, "top2_upd_stream")
    assert old and all(b.startswith("k") for b in old)
    # A's new top row replaces its row in its hash bucket; D, new, goes to a home
    project.spark.sql(
        f"insert into {project.schema}.ticks values ('A', timestamp'2024-01-01 09:05:00', 2, 20.0), "
        "('D', timestamp'2024-01-01 09:05:00', 3, 1.0)"
    )
    project.dbt("run", "-s", "top2_upd_stream")
    keep_on_time(project, "top2_upd_stream__late")
    project.dbt("run", "-s", "top2_upd_batch")
    assert project.rows("top2_upd_stream", "stock, r") == project.rows("top2_upd_batch", "stock, r")
    assert [(r[0], r[3]) for r in project.rows("top2_upd_stream", "stock, r")] == [
        ("A", 20.0),
        ("A", 10.0),
        ("B", 5.0),
        ("C", 7.0),
        ("D", 1.0),
    ]
    replaced = last_commit(project, "top2_upd_stream")["replaced_buckets"]
    assert len(replaced) == 2 and replaced[0] == "g0" and replaced[1] in old
    assert table_buckets(project, "top2_upd_stream") == sorted({*old, "g0"})


def test_a_batch_without_rows_carries_on_what_its_model_records(project):
    """A micro-batch over new files without rows changes nothing: its commit carries W and the
    state on, and an over-window `on_update` model's record of where its next batch recomputes
    from (which that batch reads), which no other model's commit holds."""
    setup(project, {"over": OVER}, emits=("on_update",))
    project.model(
        "counts_stream",
        "{{ config(materialized='window_view', execution='streaming', emit='on_update', "
        "watermark={'column': 'ts', 'delay': '2 minutes'}) }}\n"
        "select window_start, window_end, count(*) as n "
        "from {{ window_views.tumble(source('raw', 'ticks'), 'ts', '10 minutes') }} group by window_start, window_end",
    )
    spark = project.spark
    values = "('A', timestamp'2024-01-01 09:00:00', 1, 10.0), ('A', timestamp'2024-01-01 09:05:00', 2, 11.0)"
    for table in ("ticks", "ticks_kept"):
        spark.sql(f"insert into {project.schema}.{table} values {values}")
    models = ("over_upd_stream", "counts_stream")
    project.dbt("run", "-s", *models)
    location = spark.sql(f"describe table extended {project.schema}.ticks").where("col_name = 'Location'").first()[1]
    schema = pa.schema(
        [("stock", pa.string()), ("ts", pa.timestamp("us", tz="UTC")), ("seq", pa.int32()), ("price", pa.float64())]
    )
    pq.write_table(schema.empty_table(), str(Path(urlparse(location).path) / "empty.parquet"))
    result = project.dbt("run", "-s", *models)
    assert {r.node.name: (r.adapter_response["batches"], r.adapter_response["rows_in"]) for r in result.result} == {
        m: (1, 0) for m in models
    }
    over, counts = (last_commit(project, m) for m in models)
    assert over["rows_in"] == 0 and over["recompute_from"] is not None and over["recompute_by"] == ["stock"]
    assert counts["rows_in"] == 0 and "recompute_from" not in counts and "recompute_by" not in counts
    project.dbt("run", "-s", "over_upd_batch")
    assert project.rows("over_upd_stream", "stock, ts, seq") == project.rows("over_upd_batch", "stock, ts, seq")


def test_window_passes_over_the_retained_rows_sorted_once_need_no_shuffle_or_sort(spark):
    """An over-window batch clusters, sorts and caches its retained rows once (every call shares a
    PARTITION BY and ORDER BY of columns): a window pass over the cache, the model's or the
    state's, plans no exchange or sort of its own and returns what it would over the rows as
    they came."""
    from dbt.adapters.window_views.kinds import overwindows
    from dbt.adapters.window_views.query import analysis
    from dbt.adapters.window_views.streaming.shapes.over_shapes import sorted_once

    sql = (
        "select k, ts, seq, lag(v) over (partition by k order by ts, seq desc nulls first) as p, "
        "sum(v) over (partition by k order by ts, seq desc nulls first rows between 1 preceding and current row) as s from _wv_test_cache"
    )
    over = overwindows.plan(analysis.parse(sql), "ts")
    rows = spark.createDataFrame(
        [
            (k, datetime(2024, 1, 1, h), seq, h * 10 + (seq or 0))
            for k in ("a", "b", None)
            for h in range(4)
            for seq in (None, 1, 2)
        ],
        "k string, ts timestamp, seq int, v int",
    )
    cached = sorted_once(spark, rows, over, "_wv_test_sorted")
    try:
        cached.createOrReplaceTempView("_wv_test_cache")
        over_cache = spark.sql(sql)
        got = over_cache.collect()
        # as run: with adaptive execution, the final plan, made once the cache was built
        plan = over_cache._jdf.queryExecution().executedPlan().toString()
        outer = plan.split("InMemoryTableScan")[0]  # the cached plan's own exchange and sort are below
        assert "Window" in outer and "Exchange" not in outer and "Sort" not in outer, plan
        expected = spark.sql(sql.replace("_wv_test_cache", "_wv_test_sorted"))  # the rows as they came
        assert sorted(map(tuple, got), key=repr) == sorted(map(tuple, expected.collect()), key=repr)
    finally:
        cached.unpersist()
        spark.catalog.dropTempView("_wv_test_cache")
        spark.catalog.dropTempView("_wv_test_sorted")
