"""The Kappa property of execution='streaming': after any sequence of `dbt run`s, a streaming
window view equals the batch window view (same SQL, execution='batch', same emit, same
watermark) over the source rows minus the rows its late table holds.

Random rows (seeded: keys with NULLs, values with NULLs, times on both sides of 1970-01-01,
ties, NULL times) are appended to a parquet source in 4 deliveries, each shuffled and out of
event-time order, so some rows arrive after their window closed. One dbt project holds a
streaming model per window kind (TUMBLE with an offset, HOP whose slide does not divide its size,
CUMULATE with an offset, SESSION per key) and emit mode; one `dbt run` per delivery runs them all.
After every run:

- the late table holds exactly the rows the watermark rule makes late (a Python replay of the
  rule: W = max event time seen - delay, the W of the previous batch judges a batch), with their
  batch id and that W, and the run result counts them;
- the streaming table equals a batch model over (source - late rows), sorted row for row (after
  deliveries 2 and 4: the batch twins run in the same `dbt run`, after their streaming models);
- an on_window_close table only grows: a row emitted once is never changed or removed.

Every kind must see late rows (so the comparison is not vacuous); a last run with nothing new
must change nothing.
"""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from tests.support import oracles as o

SOURCE_COLUMNS = "id, k, v, ts"
DELIVERIES = 4
CHECK_BATCH_AFTER = (1, 3)  # 0-based deliveries after which the batch twins are compared


@dataclass(frozen=True)
class Kind:
    name: str
    call: str  # the TVF call, `{src}` for the relation
    delay: int  # watermark delay, micros
    args: Dict[str, int]

    def first_end(self, t: int) -> int:
        """The end of the earliest-ending window holding t (oracles.py, written from the spec)."""
        a = self.args
        if self.name == "tumble":
            windows = o.tumble_windows(t, a["size"], a.get("offset", 0))
        elif self.name == "hop":
            windows = o.hop_windows(t, a["slide"], a["size"], a.get("offset", 0))
        else:
            windows = o.cumulate_windows(t, a["step"], a["size"], a.get("offset", 0))
        return min(end for _, end in windows)

    def is_late(self, t: Optional[int], w: Optional[int]) -> bool:
        if t is None:
            return True  # no event time: kept aside with the late rows, in every model
        if w is None:
            return False
        if self.name == "session":
            return t <= w
        return self.first_end(t) <= w


M = o.MINUTE
KINDS = [
    Kind(
        "tumble",
        "window_views.tumble({src}, 'ts', '20 minutes', offset='-7 minutes')",
        5 * M,
        {"size": 20 * M, "offset": -7 * M},
    ),
    # 15 does not divide 40: a row falls in 2 or 3 windows
    Kind(
        "hop",
        "window_views.hop({src}, 'ts', '15 minutes', '40 minutes', offset='4 minutes')",
        10 * M,
        {"slide": 15 * M, "size": 40 * M, "offset": 4 * M},
    ),
    Kind(
        "cumulate",
        "window_views.cumulate({src}, 'ts', '10 minutes', '1 hour', offset='25 minutes')",
        3 * M,
        {"step": 10 * M, "size": 60 * M, "offset": 25 * M},
    ),
    Kind("session", "window_views.session({src}, 'ts', '6 minutes', partition_by='k')", 8 * M, {}),
]
EMITS = {"eowc": "on_window_close", "upd": "on_update"}

SELECT = """
select k, window_start, window_end, count(*) as n, count(v) as n_v, sum(v) as sum_v,
       min(ts) as first_ts, max(id) as max_id
from {{{{ {call} }}}}
group by k, window_start, window_end
"""


def stream_name(kind: Kind, emit: str) -> str:
    return f"s_{kind.name}_{emit}"


def model_sql(kind: Kind, emit: str, execution: str, source_table: str) -> str:
    config = (
        f"{{{{ config(materialized='window_view', execution='{execution}', emit='{EMITS[emit]}', "
        f"late_data='table', tags=['{'stream' if execution == 'streaming' else 'batch'}'], "
        f"watermark={{'column': 'ts', 'delay': '{kind.delay // o.SECOND} seconds'}}) }}}}"
    )
    return config + SELECT.format(call=kind.call.format(src=f"source('raw', '{source_table}')"))


def random_rows(rng: random.Random, n: int) -> List[Dict[str, Any]]:
    """Times over 4 hours around 1970-01-01 00:00 (so both signs of epoch micros), mostly on
    whole minutes or seconds (some with microseconds), ~12% copies of an earlier time, ~3% NULL."""
    start = o.micros(dt.datetime(1969, 12, 31, 22, 30))
    rows: List[Dict[str, Any]] = []
    for i in range(n):
        roll = rng.random()
        if roll < 0.85 or not rows:
            t = start + rng.randrange(4 * o.HOUR)
            roll = rng.random()
            if roll < 0.9:  # else: any microsecond
                t -= t % (o.MINUTE if roll < 0.65 else o.SECOND)
        elif roll < 0.97:
            t = rng.choice(rows)["ts"]
        else:
            t = None
        rows.append(
            {
                "id": i + 1,
                "k": rng.choice("abc") if rng.random() > 0.05 else None,
                "v": rng.randint(-20, 50) if rng.random() > 0.08 else None,
                "ts": t,
            }
        )
    return rows


def deliveries(rng: random.Random, rows: List[Dict[str, Any]], count: int) -> List[List[Dict[str, Any]]]:
    """Rows in arrival order: event time plus noise (sd 12 minutes), a few stragglers 1-2 hours
    behind; cut into `count` deliveries of uneven sizes, each shuffled."""

    def arrival(row: Dict[str, Any]) -> float:
        if row["ts"] is None:
            return rng.uniform(
                min(r["ts"] for r in rows if r["ts"] is not None), max(r["ts"] for r in rows if r["ts"] is not None)
            )
        late = rng.uniform(1, 2) * o.HOUR if rng.random() < 0.05 else 0
        return row["ts"] + rng.gauss(0, 12 * o.MINUTE) + late

    ordered = sorted(rows, key=arrival)
    cuts = sorted(rng.sample(range(20, len(rows) - 20), count - 1))
    out = [ordered[a:b] for a, b in zip([0, *cuts], [*cuts, len(rows)])]
    for chunk in out:
        rng.shuffle(chunk)
    return out


def describe(us: Optional[int]) -> str:
    return "none" if us is None else o.to_datetime(us).strftime("%Y-%m-%d %H:%M:%S")


def test_streaming_equals_batch_over_non_late_rows(project, spark):
    rng = random.Random(20240415)
    rows = random_rows(rng, 320)
    batches = deliveries(rng, rows, DELIVERIES)
    assert any(r["ts"] is not None and r["ts"] < 0 for r in rows) and any(r["ts"] is None for r in rows)

    schema = project.schema
    spark.sql(f"create database if not exists {schema}")
    spark.sql(f"create table {schema}.bid (id int, k string, v int, ts timestamp) using parquet")
    models = [(kind, emit) for kind in KINDS for emit in EMITS]
    tables = ["bid"]
    for kind, emit in models:
        name = stream_name(kind, emit)
        project.model(name, model_sql(kind, emit, "streaming", "bid"))
        # the batch twin reads rest_<name>: bid minus <name>__late (a view, so it runs in the
        # same `dbt run`, after its streaming twin has written the late table)
        project.model(
            f"b_{kind.name}_{emit}",
            f"-- depends_on: {{{{ ref('{name}') }}}}\n" + model_sql(kind, emit, "batch", f"rest_{name}"),
        )
        tables.append(f"rest_{name}")
    project.write(
        "models/sources.yml",
        'version: 2\nsources:\n  - name: raw\n    schema: "{{ target.schema }}"\n    tables:\n'
        + "".join(f"      - name: {t}\n" for t in tables),
    )

    # the late rule, replayed in Python: per kind, W after each delivery and the late row ids
    watermarks: Dict[str, Optional[int]] = {kind.name: None for kind in KINDS}
    expected_late: Dict[str, Dict[int, tuple]] = {kind.name: {} for kind in KINDS}  # id -> (batch, W)
    emitted: Dict[str, Counter] = {stream_name(k, "eowc"): Counter() for k in KINDS}
    failures: List[str] = []
    for batch_id, delivery in enumerate(batches):
        spark.sql(f"insert into {schema}.bid {o.values_sql(delivery)}")
        # the batch twins run after deliveries 2 and 4 (each dbt model costs a second or more)
        check_batch = batch_id in CHECK_BATCH_AFTER
        result = project.dbt("run", *(() if check_batch else ("-s", "tag:stream")))
        by_name = {r.node.name: r for r in result.result}
        if batch_id == 0:
            # the late tables exist now: the batch twins' inputs are views over them
            for kind, emit in models:
                name = stream_name(kind, emit)
                spark.sql(
                    f"create view {schema}.rest_{name} as select {SOURCE_COLUMNS} from {schema}.bid "
                    f"except all select {SOURCE_COLUMNS} from {schema}.{name}__late"
                )
        late_now: Dict[str, int] = {}
        for kind in KINDS:
            w = watermarks[kind.name]
            late = [r for r in delivery if kind.is_late(r["ts"], w)]
            for r in late:
                expected_late[kind.name][r["id"]] = (batch_id, w)
            on_time = [r["ts"] for r in delivery if r["ts"] is not None and r["id"] not in expected_late[kind.name]]
            if on_time:
                w_new = max(on_time) - kind.delay
                watermarks[kind.name] = w_new if w is None else max(w, w_new)
            late_now[kind.name] = len(late)

        for kind, emit in models:
            name = stream_name(kind, emit)
            where = f"after delivery {batch_id + 1}, {name}"
            response = by_name[name].adapter_response
            want = {
                "batches": 1,
                "rows_in": len(delivery),
                "late_rows": late_now[kind.name],
                "watermark": describe(watermarks[kind.name]),
            }
            got = {key: response.get(key) for key in want}
            if got != want:
                failures.append(f"{where}: run result {got}, expected {want} ({by_name[name].message})")
            late = {
                r[0]: (r[1], r[2])
                for r in spark.sql(
                    f"select id, _batch_id, unix_micros(_watermark) from {schema}.{name}__late"
                ).collect()
            }
            if late != expected_late[kind.name]:
                missing = sorted(set(expected_late[kind.name]) - set(late))[:5]
                extra = sorted(set(late) - set(expected_late[kind.name]))[:5]
                failures.append(
                    f"{where}: late table ({len(late)} rows) differs from the late rule "
                    f"({len(expected_late[kind.name])}); missing ids {missing}, unexpected ids {extra}"
                )

        for kind, emit in models:
            name = stream_name(kind, emit)
            where = f"after delivery {batch_id + 1}, {name}"
            streamed = project.rows(name)
            batch = project.rows(f"b_{kind.name}_{emit}") if check_batch else streamed
            if streamed != batch:
                s, b = Counter(streamed), Counter(batch)
                failures.append(
                    f"{where}: streaming table ({len(streamed)} rows) != batch view over source - late "
                    f"({len(batch)} rows); only streamed {sorted((s - b).elements(), key=o.sort_key)[:4]}; "
                    f"only batch {sorted((b - s).elements(), key=o.sort_key)[:4]}"
                )
            if emit == "eowc":
                now = Counter(streamed)
                lost = emitted[name] - now
                if lost:
                    failures.append(
                        f"{where}: on_window_close rows changed or vanished: {sorted(lost.elements(), key=o.sort_key)[:4]}"
                    )
                w = watermarks[kind.name]
                (last_end,) = spark.sql(f"select max(unix_micros(window_end)) from {schema}.{name}").first()
                if last_end is not None and (w is None or last_end > w):
                    failures.append(f"{where}: an on_window_close row has window_end > W = {describe(w)}")
                emitted[name] = now
        assert not failures, "\n".join(failures)

    # not vacuous: every kind saw late rows, closed windows and open ones
    for kind in KINDS:
        assert len(expected_late[kind.name]) >= 5, f"{kind.name}: only {len(expected_late[kind.name])} late rows"
        assert sum(emitted[stream_name(kind, "eowc")].values()) >= 5, f"{kind.name}: few closed windows"
        assert len(project.rows(stream_name(kind, "upd"))) > sum(emitted[stream_name(kind, "eowc")].values())
    # and one more run with nothing new changes nothing
    before = {stream_name(k, e): project.rows(stream_name(k, e)) for k, e in models}
    result = project.dbt("run", "-s", "tag:stream")
    for r in result.result:
        assert r.message.startswith("STREAM 0 batches, 0 in, 0 out, 0 late"), (r.node.name, r.message)
        assert project.rows(r.node.name) == before[r.node.name], r.node.name
