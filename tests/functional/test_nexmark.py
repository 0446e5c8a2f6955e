"""Nexmark's window queries as window views (bench/nexmark/project, Nexmark's own SQL with the
macros in place of its TVFs) on the generator's events (bench/nexmark).

Batch must be exact: one `dbt run` builds the six models, and each table equals, row for row,
DuckDB running the query as plain SQL without TVFs over the same parquet files
(tests/support/nexmark.py).

Streaming is tried on the same events landed in a few deliveries: a `dbt run --vars
'{execution: streaming}'` after the first, and after each other one for the models it took, with
a watermark at the newest event time, so that rows the generator delayed arrive after their
window closed. A query the plugin streams must equal the DuckDB query (which the batch tables
equal) over the events minus the rows of its late table, for the windows the watermark closed
(q18 and q19 are kept current with emit='on_update': all of it). A query it refuses is marked
xfail (strict) with today's refusal: when a change makes it stream, the test passes, turns red,
and its mark must go. A refusal in other words fails outright, so the marks say what users see.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import pytest
import yaml

from bench.nexmark import Landing, NexmarkConfig, generate
from tests.support.dbt_projects import errors
from tests.support.nexmark import DAY, QUERIES, SECOND, NexmarkDuckDB, copy_project, late_keys, spark_rows

# 30,000 events over 150 s of event time: 15 TUMBLE windows, ~75 HOP windows, sessions of every
# length; at 200 events a second no two events share a millisecond, so q18's ROW_NUMBER by
# dateTime has no ties. They start 50 s before a midnight (a multiple of every window's size, so the
# other queries' windows are as from a midnight): q15-q17's first day closes within the first
# delivery, and its delayed bids that the second delivery brings are late
EVENTS, SEED, RATE = 30_000, 37, 200.0
START = datetime(2025, 12, 31, 23, 59, 10)
DELIVERIES = 3
# the generator delays a tenth of the events by up to 3 s; a watermark at the newest event time
# makes the delayed rows late that cross a delivery's end into a closed window: with this SEED and
# DELIVERIES some of each input, for every query
STREAM_DELAY_US = 0
BATCH_SCHEMA, STREAM_SCHEMA = "nexmark_batch", "nexmark"
ON_UPDATE = ("q18", "q19")  # their rows are never final: the stream keeps the current result
# a GROUP BY of a day kept current too (emit='on_update'): a model beside the project's, streamed only;
# its table has the day's bounds as well, by which the stream replaces a day's rows
BUCKETS_ON_UPDATE = {"q15_on_update": "q15"}

# what `dbt run --vars '{execution: streaming}'` answers today, verbatim (the project's schema
# `nexmark`, as a run by hand names it)
REFUSALS: Dict[str, str] = {}


class StreamingRefused(Exception):
    """The plugin refused to stream the query (the strict xfail marks expect exactly this)."""


@dataclass
class NexmarkRun:
    landing: Path
    duckdb: NexmarkDuckDB
    # per query: None when the streaming runs took it, else the message of the first run that failed
    streaming: Dict[str, Optional[str]]


def dbt(root: Path, *args: str):
    from dbt.cli.main import dbtRunner

    return dbtRunner().invoke([*args, "--project-dir", str(root), "--profiles-dir", str(root)])


def refusal(message: str) -> str:
    """The plugin's words in a failed model's message, without dbt's heading and macro stack."""
    found = re.search(r"window_view model '[^']+': [^\n]*", message)
    return found.group(0) if found else message


def stream_outcomes(result, models: Sequence[str]) -> Dict[str, Optional[str]]:
    assert result.exception is None, f"the streaming dbt run failed as a whole: {result.exception}"
    by_name = {r.node.name: r for r in result.result}
    assert set(models) <= set(by_name), f"models not run: {sorted(set(models) - set(by_name))}"
    return {q: None if by_name[q].status == "success" else refusal(by_name[q].message or "") for q in models}


@pytest.fixture(scope="module")
def nexmark(tmp_path_factory, spark_home, spark) -> NexmarkRun:
    root = tmp_path_factory.mktemp("nexmark")
    landing = root / "landing"
    project = copy_project(root / "project", spark_home, {"batch": BATCH_SCHEMA, "stream": STREAM_SCHEMA})
    for schema in (BATCH_SCHEMA, STREAM_SCHEMA):
        spark.sql(f"drop database if exists {schema} cascade")
    for model, query in BUCKETS_ON_UPDATE.items():
        written = (project / "models" / f"{query}.sql").read_text()
        (project / "models" / f"{model}.sql").write_text("{{ config(emit='on_update') }}\n" + written)
    stream_vars = yaml.safe_dump(
        {"landing": str(landing), "execution": "streaming", "watermark_delay": f"{STREAM_DELAY_US // SECOND} seconds"}
    )

    deliveries = generate(NexmarkConfig(events=EVENTS, seed=SEED, rate=RATE, start=START), Landing(landing, DELIVERIES))
    next(deliveries)
    models = [*QUERIES, *BUCKETS_ON_UPDATE]
    outcomes = stream_outcomes(dbt(project, "run", "--target", "stream", "--vars", stream_vars), models)
    for _ in deliveries:  # the later deliveries, each streamed by the models that took the first
        streaming = [q for q, message in outcomes.items() if message is None]
        if streaming:
            result = dbt(project, "run", "--target", "stream", "--vars", stream_vars, "-s", *streaming)
            outcomes.update(stream_outcomes(result, streaming))

    batch_vars = yaml.safe_dump({"landing": str(landing)})
    result = dbt(project, "run", "--target", "batch", "--vars", batch_vars, "--exclude", *BUCKETS_ON_UPDATE)
    assert result.success, f"the batch dbt run failed: {errors(result)}"
    return NexmarkRun(landing, NexmarkDuckDB(landing), outcomes)


def top10_ties_resolved(rows: List[tuple]) -> List[tuple]:
    """q19's rows with each rank_number replaced by the least of its auction's bids at that price:
    ROW_NUMBER numbers tied prices in no defined order, in Spark as in DuckDB."""
    least: Dict[tuple, int] = {}
    for row in rows:
        key = (row[0], row[2])
        least[key] = min(least.get(key, row[7]), row[7])
    return [row[:7] + (least[(row[0], row[2])],) + row[8:] for row in rows]


def differences(got: List[tuple], expected: List[tuple]) -> str:
    g, e = Counter(got), Counter(expected)
    return (
        f"{len(got)} rows, expected {len(expected)}; only in the table: {sorted((g - e).elements(), key=str)[:3]}; "
        f"only expected: {sorted((e - g).elements(), key=str)[:3]}"
    )


@pytest.mark.parametrize("query", list(QUERIES))
def test_batch_equals_duckdb(nexmark, spark, query):
    q = QUERIES[query]
    relation = f"{BATCH_SCHEMA}.{query}"
    assert spark.table(relation).columns == list(q.columns)
    got = spark_rows(spark, relation)
    expected = [row[:-1] for row in nexmark.duckdb.rows(q)]
    assert len(expected) >= q.least_rows, (
        f"{query}: too few rows ({len(expected)}) for a comparison that means something"
    )
    if query == "q18":
        # ROW_NUMBER by dateTime is certain only if no bidder bid twice on an auction in one millisecond
        ties = nexmark.duckdb.scalar(
            "select count(*) from (select 1 from bid group by bidder, auction, t having count(*) > 1)"
        )
        assert ties == 0, "bids of one bidder and auction at one time make q18 ambiguous: lower RATE"
    if query == "q19":
        # the rows themselves are certain only if no price tie straddles an auction's 10th and 11th bid
        straddling = nexmark.duckdb.scalar(
            "select count(*) from (select auction from (select auction, price, row_number() over (partition by "
            "auction order by price desc) as r from bid) where r in (10, 11) group by auction "
            "having count(*) = 2 and count(distinct price) = 1)"
        )
        assert straddling == 0, "a price tie at an auction's 10th bid makes q19 ambiguous: pick another SEED"
        got, expected = top10_ties_resolved(got), top10_ties_resolved(expected)
    assert Counter(got) == Counter(expected), f"{query}: {differences(got, expected)}"


def streaming_case(query: str):
    if query not in REFUSALS:
        return query
    reason = f"streaming refuses Nexmark's {query} as written: {REFUSALS[query]}"
    return pytest.param(query, marks=pytest.mark.xfail(strict=True, raises=StreamingRefused, reason=reason))


@pytest.mark.parametrize("query", [streaming_case(q) for q in QUERIES])
def test_streaming_equals_batch_minus_late_rows(nexmark, spark, query):
    message = nexmark.streaming[query]
    if message is not None:
        assert message == REFUSALS.get(query), f"{query}: the streaming run failed with other words than today's"
        raise StreamingRefused(message)
    q = QUERIES[query]
    relation = f"{STREAM_SCHEMA}.{query}"
    assert spark.table(relation).columns == list(q.columns)
    # the DuckDB query over the events minus the late rows, in its own connection
    late = late_keys(spark, STREAM_SCHEMA, query, q.inputs)
    counts = {kind: len(rows) for kind, rows in late.items()}
    assert all(counts.values()), f"{query}: late rows {counts}, the late rule goes untested: change SEED"
    rest = NexmarkDuckDB(nexmark.landing)
    rest.load(late)
    expected = rest.rows(q)
    if query not in ON_UPDATE:
        # W: each input's latest event time minus the delay, the least of the inputs'
        w = min(rest.scalar(f"select max(t) from {kind}") for kind in q.inputs) - STREAM_DELAY_US
        expected = [row for row in expected if row[-1] <= w]
    expected = [row[:-1] for row in expected]
    got = spark_rows(spark, relation)
    if query == "q19":
        got, expected = top10_ties_resolved(got), top10_ties_resolved(expected)
    assert Counter(got) == Counter(expected), f"{query}: {differences(got, expected)}"


@pytest.mark.parametrize("model, query", list(BUCKETS_ON_UPDATE.items()))
def test_a_day_kept_current_equals_batch_minus_late_rows(nexmark, spark, model, query):
    """emit='on_update': every day, the open one too, as DuckDB computes it over the events minus
    the late rows, with the day's bounds the table keeps."""
    assert nexmark.streaming[model] is None, f"{model}: {nexmark.streaming[model]}"
    q = QUERIES[query]
    relation = f"{STREAM_SCHEMA}.{model}"
    assert spark.table(relation).columns == [*q.columns, "window_start", "window_end"]
    late = late_keys(spark, STREAM_SCHEMA, model, q.inputs)
    assert late["bid"], f"{model}: no late rows, the late rule goes untested"
    rest = NexmarkDuckDB(nexmark.landing)
    rest.load(late)
    expected = [row[:-1] + (row[-1] - DAY, row[-1]) for row in rest.rows(q)]
    got = spark_rows(spark, relation)
    assert len(expected) == 2 and Counter(got) == Counter(expected), f"{model}: {differences(got, expected)}"
