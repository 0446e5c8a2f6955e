"""Streaming window views into a table format (Delta, Iceberg), one scenario for every format:
each format's test gives a `LakeFormat` (its name, what its writes are called and how to count
them) and the scenario checks that every streaming table equals the same model in batch over
the input minus the late rows.

- `emits_scenario`: TUMBLE in both emits; a run that dies after a batch's commits, before its
  commit record, is replayed without a row lost or doubled; a --full-refresh rebuilds beside the
  live table and swaps the catalog table, and the stream goes on in the new version.
- `kinds_scenario`: the other shapes on the same writes: over windows, sessions per key and a
  window join of two inputs, with late rows of each.
- `input_scenario`: a table of the format as the input, its appends streamed over two runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Set, Tuple

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.storage import delta_stream, iceberg_stream
from tests.support.dbt_projects import errors, sources_yml


@dataclass(frozen=True)
class LakeFormat:
    """A table format as the scenarios use it."""

    name: str  # file_format
    commits: str  # what its writes are called, in an injected fault's message
    writes: Callable[[Any, str], int]  # (project, table): the writes a stream's batches made


def _delta_writes(project: Any, table: str) -> int:
    """The table's Delta commits that wrote rows (a run also sets its table properties)."""
    found = project.spark.sql(f"describe history {project.schema}.{table}").collect()
    return sum(1 for commit in found if commit["operation"] in ("WRITE", "MERGE"))


def _iceberg_writes(project: Any, table: str) -> int:
    """The table's snapshots a stream's batch made (they carry its commit)."""
    name = f"{project.schema}.{table}"
    project.spark.catalog.refreshTable(name)
    found = project.spark.sql(f"select summary from {name}.snapshots").collect()
    return sum(1 for snapshot in found if iceberg_stream.COMMIT_PROPERTY in snapshot["summary"])


DELTA = LakeFormat("delta", "Delta commits", _delta_writes)
ICEBERG = LakeFormat("iceberg", "Iceberg snapshots", _iceberg_writes)


def rows(project: Any, table: str) -> Any:
    """The table's rows as its latest version has them (a session's catalog may cache a table)."""
    project.spark.catalog.refreshTable(f"{project.schema}.{table}")
    return project.rows(table)


def location(project: Any, table: str) -> str:
    """The folder the catalog table reads."""
    found = project.spark.sql(f"describe extended {project.schema}.{table}").collect()
    return next(r[1] for r in found if r[0] == "Location")


def die_after_commits(monkeypatch: Any, fault: str) -> Set[str]:
    """Make each stream's next batch die after its tables' commits, before its commit record: the
    staged rows stay, as a kill right after the commits leaves them. The set fills with the
    tables whose batch died."""
    failed: Set[str] = set()
    removed = delta_stream.staging_removed

    def killed_after_commits(fs: Any, location: str, batch: Any) -> None:
        table = location.removesuffix("__late")
        if table in failed:
            removed(fs, location, batch)
        elif location.endswith("__late"):  # the late table's commit is the batch's last
            failed.add(table)
            raise StreamFailure(table.rsplit("/", 1)[-1], fault, "run again")

    monkeypatch.setattr(delta_stream, "staging_removed", killed_after_commits)
    return failed


def streaming(fmt: LakeFormat) -> str:
    """The config of a streaming twin writing `fmt`, its late rows in a table."""
    return f"execution='streaming', file_format='{fmt.name}', late_data='table', "


def insert(project: Any, table: str, *values: Tuple[Any, ...]) -> None:
    """Rows (hh:mm on 2020-04-15, then the other columns) appended to an input in one commit."""
    listed = ", ".join(f"(timestamp'2020-04-15 {hhmm}:00', {', '.join(map(str, rest))})" for hhmm, *rest in values)
    project.spark.sql(f"insert into {project.schema}.{table} values {listed}")


# ---- both emits of TUMBLE, a replay after the commits, a rebuild

WINDOWS = """
{{{{ config(materialized='window_view', {config}emit='{emit}',
            watermark={{'column': 'bidtime', 'delay': '1 minute'}}) }}}}
select window_start, window_end, count(*) as bids, sum(price) as price
from {{{{ window_views.tumble(source('raw', '{source}'), 'bidtime', '10 minutes') }}}}
group by window_start, window_end
"""
EMITS = {"upd": "on_update", "eowc": "on_window_close"}


def _emits_same_as_batch(project: Any, fmt: LakeFormat) -> None:
    """Each streaming table equals its batch twin over the input without the late rows."""
    schema = project.schema
    for name in EMITS:
        rows(project, f"s_{name}__late")
        project.spark.sql(
            f"create or replace table {schema}.kept_{name} using {fmt.name} as select * from {schema}.bid "
            f"except all select bidtime, price from {schema}.s_{name}__late"
        )
    project.dbt("run", "--threads", "2", "-s", *(f"b_{name}" for name in EMITS))
    for name in EMITS:
        assert rows(project, f"s_{name}") == project.rows(f"b_{name}"), name


def emits_scenario(project: Any, monkeypatch: Any, fmt: LakeFormat) -> None:
    schema = project.schema
    project.spark.sql(f"create database if not exists {schema}")
    project.spark.sql(f"create table {schema}.bid (bidtime timestamp, price int) using {fmt.name}")
    project.write("models/sources.yml", sources_yml("bid", *(f"kept_{name}" for name in EMITS)))
    for name, emit in EMITS.items():
        project.model(f"s_{name}", WINDOWS.format(config=streaming(fmt), emit=emit, source="bid"))
        project.model(f"b_{name}", WINDOWS.format(config="", emit=emit, source=f"kept_{name}"))
    streams = ("--threads", "2", "-s", *(f"s_{name}" for name in EMITS))

    insert(project, "bid", ("08:07", 2), ("08:11", 3), ("08:03", 4))
    project.dbt("run", *streams)
    for name in EMITS:  # tables of the format, written by its commits
        for table in (f"s_{name}", f"s_{name}__late"):
            assert delta_stream.provider(project.spark, f"{schema}.{table}") == fmt.name, table

    insert(project, "bid", ("08:25", 2), ("08:05", 9), ("08:14", 1))
    fault = f"injected fault after the {fmt.commits}"
    failed = die_after_commits(monkeypatch, fault)
    assert fault in errors(project.dbt("run", *streams, ok=False))
    assert len(failed) == 2
    versions = {name: fmt.writes(project, f"s_{name}") for name in EMITS}
    late_versions = {name: fmt.writes(project, f"s_{name}__late") for name in EMITS}
    # a write a batch with rows: on_update's MERGEs too, on_window_close's appends, the late row's
    assert versions == {"upd": 2, "eowc": 2} and late_versions == {"upd": 1, "eowc": 1}, (versions, late_versions)
    monkeypatch.undo()
    # the rerun replays the batch: its staged rows are there, and the format skips its commits
    (upd, eowc) = project.dbt("run", *streams).result
    assert upd.message.startswith("STREAM 1 batch, 3 in") and eowc.message.startswith("STREAM 1 batch, 3 in")
    for name in EMITS:
        assert fmt.writes(project, f"s_{name}") == versions[name], name
        assert fmt.writes(project, f"s_{name}__late") == late_versions[name], name
        assert [r[1] for r in rows(project, f"s_{name}__late")] == [9], name  # 08:05 after the 08:10 watermark
    _emits_same_as_batch(project, fmt)
    assert [r[2] for r in rows(project, "s_upd")] == [2, 2, 1]  # 08:00, 08:10 and the open 08:20
    assert [r[2] for r in rows(project, "s_eowc")] == [2, 2]

    # a rebuild beside the live table: the catalog table now reads the new version's table,
    # streamed from all input in one batch (08:05 is on time then)
    project.dbt("run", "-s", "s_upd", "--full-refresh")
    project.spark.catalog.refreshTable(f"{schema}.s_upd")  # another session made it
    assert delta_stream.provider(project.spark, f"{schema}.s_upd") == fmt.name
    assert location(project, "s_upd").endswith("/s_upd__v2"), location(project, "s_upd")
    assert [r[2:] for r in rows(project, "s_upd")] == [(3, 15), (2, 4), (1, 2)]
    assert rows(project, "s_upd__late") == []
    # and the stream goes on in the new version
    insert(project, "bid", ("08:31", 5))
    project.dbt("run", "-s", "s_upd")
    assert [r[2:] for r in rows(project, "s_upd")] == [(3, 15), (2, 4), (1, 2), (1, 5)]


# ---- over windows, sessions per key and a window join

CLOSE = """
{{{{ config(materialized='window_view', {config}emit='on_window_close',
            watermark={{'column': 'bidtime', 'delay': '1 minute'}}) }}}}
"""
KINDS = {
    "over": """
select auction, bidtime, price,
  sum(price) over (partition by auction order by bidtime rows between 1 preceding and current row) as pair,
  lag(price) over (partition by auction order by bidtime) as prev
from {{{{ source('raw', '{bid}') }}}}
""",
    "sessions": """
select auction, window_start, window_end, count(*) as bids, sum(price) as price
from {{{{ window_views.session(source('raw', '{bid}'), 'bidtime', '5 minutes', partition_by='auction') }}}}
group by auction, window_start, window_end
""",
    "joined": """
select b.auction, b.window_start, b.window_end, b.price as bid, a.price as ask
from {{{{ window_views.tumble(source('raw', '{bid}'), 'bidtime', '10 minutes') }}}} b
join {{{{ window_views.tumble(source('raw', '{ask}'), 'bidtime', '10 minutes') }}}} a
  on b.auction = a.auction and b.window_start = a.window_start and b.window_end = a.window_end
""",
}
INPUTS = ("bid", "ask")
_ROW = "bidtime timestamp, auction int, price int"


def _kept(project: Any, fmt: LakeFormat, kind: str) -> Dict[str, int]:
    """Each input `kind` reads less its stream's late rows, as tables its batch twin reads; the
    count of late rows of each."""
    schema, late = project.schema, f"{project.schema}.s_{kind}__late"
    rows(project, f"s_{kind}__late")
    counts = {}
    for source in INPUTS if kind == "joined" else INPUTS[:1]:
        dropped = f"select bidtime, auction, price from {late}"
        if kind == "joined":  # a join's late row names its side and holds the row as JSON
            dropped = (
                f"select r.* from (select from_json(_row, '{_ROW}') as r from {late} where _side = '{schema}.{source}')"
            )
        project.spark.sql(
            f"create or replace table {schema}.kept_{kind}_{source} using {fmt.name} as "
            f"select * from {schema}.{source} except all {dropped}"
        )
        counts[source] = project.spark.sql(dropped).count()
    return counts


def kinds_scenario(project: Any, fmt: LakeFormat) -> None:
    schema = project.schema
    project.spark.sql(f"create database if not exists {schema}")
    for source in INPUTS:
        project.spark.sql(f"create table {schema}.{source} ({_ROW}) using {fmt.name}")
    kept = ["kept_over_bid", "kept_sessions_bid", "kept_joined_bid", "kept_joined_ask"]
    project.write("models/sources.yml", sources_yml(*INPUTS, *kept))
    for kind, sql in KINDS.items():
        project.model(f"s_{kind}", CLOSE.format(config=streaming(fmt)) + sql.format(bid="bid", ask="ask"))
        twin = sql.format(bid=f"kept_{kind}_bid", ask=f"kept_{kind}_ask")
        project.model(f"b_{kind}", CLOSE.format(config="") + twin)
    streams = ("--threads", "2", "-s", *(f"s_{kind}" for kind in KINDS))

    insert(project, "bid", ("08:01", 1, 10), ("08:03", 2, 20), ("08:04", 1, 11), ("08:12", 1, 12), ("08:14", 2, 21))
    insert(project, "ask", ("08:02", 1, 15), ("08:06", 2, 25), ("08:13", 1, 14))
    project.dbt("run", *streams)
    # 08:02 and 08:05 arrive after their windows, sessions and rows closed (watermarks 08:12, 08:13)
    insert(project, "bid", ("08:25", 1, 13), ("08:02", 2, 22), ("08:31", 2, 23), ("08:33", 1, 9))
    insert(project, "ask", ("08:27", 1, 16), ("08:05", 2, 26), ("08:34", 2, 24))
    project.dbt("run", *streams)

    late = {kind: _kept(project, fmt, kind) for kind in KINDS}
    assert late == {"over": {"bid": 1}, "sessions": {"bid": 1}, "joined": {"bid": 1, "ask": 1}}, late
    project.dbt("run", "--threads", "2", "-s", *(f"b_{kind}" for kind in KINDS))
    for kind in KINDS:
        assert delta_stream.provider(project.spark, f"{schema}.s_{kind}") == fmt.name, kind
        streamed = rows(project, f"s_{kind}")
        assert streamed, kind
        assert streamed == project.rows(f"b_{kind}"), kind


# ---- a table of the format as a streaming input


def _kept_input(project: Any, fmt: LakeFormat) -> None:
    """The batch twin's input: every bid but the late ones, a table of the same format."""
    schema = project.schema
    project.spark.sql(
        f"create or replace table {schema}.bid_kept using {fmt.name} as select * from {schema}.bid "
        f"except all select bidtime, price from {schema}.rev__late"
    )


def input_scenario(project: Any, fmt: LakeFormat) -> Any:
    """`rev` streams a `fmt` table `bid` over two runs of two appends each, equal to `rev_batch`
    over the bids but the late one (in `rev__late`); returns `rev`'s rows. Each format's test then
    deletes rows, which its format names in its own words."""
    schema = project.schema
    project.spark.sql(f"create database if not exists {schema}")
    for table in ("bid", "bid_kept"):
        project.spark.sql(f"create table {schema}.{table} (bidtime timestamp, price int) using {fmt.name}")
    project.write("models/sources.yml", sources_yml("bid", "bid_kept"))
    streaming = "execution='streaming', late_data='table', "
    project.model("rev", WINDOWS.format(emit="on_window_close", config=streaming, source="bid"))
    project.model("rev_batch", WINDOWS.format(emit="on_window_close", config="", source="bid_kept"))
    # two commits a run (Delta versions, Iceberg snapshots): the stream reads what each appended
    for first, second in ([("08:07", 2), ("08:11", 3)], [("08:25", 2), ("08:05", 9)]):
        insert(project, "bid", first)
        insert(project, "bid", second)
        (result,) = project.dbt("run", "-s", "rev").result
        assert result.message.startswith("STREAM 1 batch, 2 in"), result.message
        rerun_batch_twin(project, fmt)
        assert project.rows("rev") == project.rows("rev_batch")
    assert [r[1] for r in project.rows("rev__late")] == [9]  # 08:05 came after the 08:10 watermark
    assert len(project.rows("rev")) == 2
    return project.rows("rev")


def rerun_batch_twin(project: Any, fmt: LakeFormat) -> None:
    """`rev_batch` built again over the bids `rev` did not find late."""
    _kept_input(project, fmt)
    project.dbt("run", "-s", "rev_batch")
