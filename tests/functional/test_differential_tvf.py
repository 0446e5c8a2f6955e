"""Differential tests of the window TVFs: random data (times across the epoch and 1900..2100,
ties, NULL times, keys and values) and random window specs (sizes, slides, steps, gaps, offsets
of either sign, slide = size) through the macros on the real local Spark, against the
pure-Python oracles in oracles.py: the exploded rows, aggregates per window (GROUP BY over the
TVF, and window_views.window_aggregate's pane plans), and emit='on_window_close'.

Each test builds ONE dbt project holding a few models, each the UNION ALL of many specs (dbt
takes about a second a model), so one `dbt build` checks ~25 specs.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import pytest

from tests.support import oracles as o
from tests.support.dbt_projects import sources_yml

INPUT_COLUMNS = ["id", "k", "v", "ts"]
WINDOW_COLUMNS = ["window_start", "window_end", "window_time"]


@dataclass
class Spec:
    kind: str  # tumble | hop | cumulate | session
    args: Dict[str, int]  # micros: size / slide / step / gap / offset
    texts: Dict[str, str]  # the same as interval strings
    partition_by: Any = None  # session: None, 'k' or ['k']

    def call(self) -> str:
        src = "source('raw', 'ev')"
        t = self.texts
        off = f", offset='{t['offset']}'" if "offset" in t else ""
        if self.kind == "tumble":
            return f"window_views.tumble({src}, 'ts', '{t['size']}'{off})"
        if self.kind == "hop":
            return f"window_views.hop({src}, 'ts', '{t['slide']}', '{t['size']}'{off})"
        if self.kind == "cumulate":
            return f"window_views.cumulate({src}, 'ts', '{t['step']}', '{t['size']}'{off})"
        part = "" if self.partition_by is None else f", partition_by={self.partition_by!r}"
        return f"window_views.session({src}, 'ts', '{t['gap']}'{part})"

    def window_config(self) -> str:
        """The window argument of window_views.window_aggregate (a Jinja dict literal)."""
        entries = {"kind": self.kind, "time_col": "ts", **self.texts}
        return "{" + ", ".join(f"'{k}': '{v}'" for k, v in entries.items()) + "}"

    def oracle(self, rows: List[Dict[str, Any]]) -> List[Tuple[Dict[str, Any], o.Window]]:
        a = self.args
        offset = a.get("offset", 0)
        if self.kind == "tumble":
            return o.explode(rows, lambda r: o.tumble_windows(r["ts"], a["size"], offset))
        if self.kind == "hop":
            return o.explode(rows, lambda r: o.hop_windows(r["ts"], a["slide"], a["size"], offset))
        if self.kind == "cumulate":
            return o.explode(rows, lambda r: o.cumulate_windows(r["ts"], a["step"], a["size"], offset))
        keys = () if self.partition_by is None else ("k",)
        sessions = o.session_windows(rows, "ts", a["gap"], keys)
        return [(r, sessions[r["id"]]) for r in rows if r["id"] in sessions]


def _duration(rng: random.Random) -> int:
    """A random positive duration of whole seconds: seconds, minutes or hours."""
    unit = rng.choice([o.SECOND, o.MINUTE, o.MINUTE, o.HOUR])
    top = {o.SECOND: 300, o.MINUTE: 150, o.HOUR: 30}[unit]
    return rng.randint(1, top) * unit


def random_spec(rng: random.Random, kind: str) -> Spec:
    args: Dict[str, int] = {}
    if kind == "tumble":
        args["size"] = _duration(rng)
        period = args["size"]
    elif kind == "hop":
        slide = _duration(rng)
        shape = rng.random()
        if shape < 0.35:  # size a multiple of slide
            size = slide * rng.randint(1, 8)
        elif shape < 0.75:  # not a multiple (at most ~12 windows per row)
            size = rng.randint(slide // o.SECOND + 1, 12 * slide // o.SECOND) * o.SECOND
        else:  # equal to the slide, the largest slide allowed (a larger one is refused: test_errors)
            size = slide
        args.update(slide=slide, size=size)
        period = slide
    elif kind == "cumulate":
        step = _duration(rng)
        args.update(step=step, size=step * rng.randint(1, 12))
        period = args["size"]
    else:
        args["gap"] = rng.choice([o.SECOND, o.MINUTE, o.HOUR]) * rng.randint(1, 40)
        period = None
    if period is not None and rng.random() < 0.7:
        # offsets of either sign, also beyond one period, whole seconds
        span = 2 * period // o.SECOND
        args["offset"] = rng.randint(-span, span) * o.SECOND
    texts = {name: o.interval_text(value, rng) for name, value in args.items()}
    if "offset" in args and args["offset"] == 0:
        texts["offset"] = rng.choice(["0 seconds", "-0 minutes", "0 hour"])
    partition_by = rng.choice([None, "k", ["k"]]) if kind == "session" else None
    return Spec(kind, args, texts, partition_by)


def load_events(spark, schema: str, rows: List[Dict[str, Any]]) -> None:
    spark.sql(f"create database if not exists {schema}")
    spark.sql(f"drop table if exists {schema}.ev")
    spark.sql(f"create table {schema}.ev using parquet as {o.values_sql(rows)}")
    stored = spark.sql(f"select id, k, v, unix_micros(ts) from {schema}.ev").collect()
    assert sorted(tuple(r) for r in stored) == sorted((r["id"], r["k"], r["v"], r["ts"]) for r in rows), (
        "the input table does not hold the generated rows exactly"
    )


def _avg_ok(avg: Optional[float], total: Optional[int], count: int) -> bool:
    if count == 0:
        return avg is None
    return avg is not None and math.isclose(avg, total / count, rel_tol=1e-12, abs_tol=1e-12)


def by_spec(spark, table: str, more: str = "") -> Dict[int, List[tuple]]:
    """A table of per-window aggregates (`spec` first) as rows by spec, times as epoch micros."""
    got: Dict[int, List[tuple]] = defaultdict(list)
    columns = "spec, k, unix_micros(window_start), unix_micros(window_end), n, n_v, sum_v, min_v, max_v"
    for r in spark.sql(f"select {columns}{', ' + more if more else ''} from {table}").collect():
        got[r[0]].append(tuple(r[1:]))
    return got


def differs(what: str, got: List[tuple], expected: List[tuple]) -> List[str]:
    """The failure when two sorted lists of aggregate rows differ, with a few rows of each side."""
    if got == expected:
        return []
    missing = [r for r in expected if r not in got][:3]
    extra = [r for r in got if r not in expected][:3]
    return [f"{what} differ ({len(got)} vs {len(expected)} expected rows); missing {missing}; unexpected {extra}"]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_window_tvfs_match_oracle(project, spark, seed):
    rng = random.Random(seed)
    rows = o.random_events(rng, 120)
    load_events(spark, project.schema, rows)
    project.write("models/sources.yml", o.SOURCES_YML)

    kinds = ["tumble"] * 3 + ["hop"] * 7 + ["cumulate"] * 4 + ["session"] * 4
    specs = [random_spec(rng, kind) for kind in kinds]
    # fixed edge cases in every run: k * step past 2^31 us; slide = size with a negative offset;
    # day-sized windows shifted before midnight; an offset of exactly -size
    fixed = [
        Spec("cumulate", {"step": 20 * o.MINUTE, "size": 40 * o.MINUTE}, {"step": "20 minutes", "size": "40 minutes"}),
        Spec(
            "hop",
            {"slide": o.HOUR, "size": o.HOUR, "offset": -5 * o.MINUTE},
            {"slide": "1 hour", "size": "60 minutes", "offset": "-5 minutes"},
        ),
        Spec("tumble", {"size": o.DAY, "offset": -o.HOUR}, {"size": "1 day", "offset": "-1 hour"}),
        Spec("tumble", {"size": 7 * o.MINUTE, "offset": -7 * o.MINUTE}, {"size": "7 minutes", "offset": "-7 minutes"}),
    ]
    specs += fixed
    kinds += [spec.kind for spec in fixed]
    for i, spec in enumerate(s for s in specs if s.kind == "session"):
        spec.partition_by = [None, "k", ["k"]][i % 3]  # with and without partition_by, every run
    # few models (dbt takes ~1 s a model): the union of the specs' `select *` (the first branch's
    # output columns checked by name: its kind rotates with the seed) for tumble, hop and
    # cumulate, another for session, and one GROUP BY over all specs for the aggregates
    config = "{{ config(materialized='window_view') }}\n"
    first = ["tumble", "hop", "cumulate"][seed % 3]
    exploded = {
        "exploded": sorted(
            (i for i, spec in enumerate(specs) if spec.kind != "session"), key=lambda i: specs[i].kind != first
        ),
        "exploded_session": [i for i, spec in enumerate(specs) if spec.kind == "session"],
    }
    for name, indexes in exploded.items():
        project.model(
            name,
            config + "\nunion all\n".join(f"select *, {i} as spec from {{{{ {specs[i].call()} }}}}" for i in indexes),
        )
    project.model(
        "aggregated",
        config + "select spec, k, window_start, window_end, count(*) as n, count(v) as n_v, "
        "sum(v) as sum_v, min(v) as min_v, max(v) as max_v from (\n"
        + "\nunion all\n".join(
            f"select {i} as spec, k, v, window_start, window_end from {{{{ {spec.call()} }}}}"
            for i, spec in enumerate(specs)
        )
        + "\n) group by spec, k, window_start, window_end",
    )
    # window_views.window_aggregate (pane plans for HOP and CUMULATE) against the same oracle
    measures = "{'n': 'count(*)', 'n_v': 'count(v)', 'sum_v': 'sum(v)', 'min_v': 'min(v)', 'max_v': 'max(v)', 'avg_v': 'avg(v)'}"
    # (a sample of the specs: each pane plan costs Spark several shuffles)
    sample = rng.sample([i for i, spec in enumerate(specs) if spec.kind in ("hop", "cumulate")], 6)
    sample.append(rng.choice([i for i, spec in enumerate(specs) if spec.kind == "tumble"]))
    grouped = {i: rng.random() < 0.7 for i in sorted(sample)}
    project.model(
        "window_aggregate",
        config
        + "\nunion all\n".join(
            f"select {i} as spec, {'k' if by_k else 'cast(null as string) as k'}, window_start, window_end, "
            "window_time, n, n_v, sum_v, min_v, max_v, avg_v from "
            f"{{{{ window_views.window_aggregate(source('raw', 'ev'), {specs[i].window_config()}, {measures}"
            f"{', group_by=[' + repr('k') + ']' if by_k else ''}) }}}}"
            for i, by_k in grouped.items()
        ),
    )
    # a HOP or CUMULATE TVF + GROUP BY alone is computed from panes in batch (tvf_panes.py): a
    # sample of specs, each its own SELECT (over a union it runs as written, as `aggregated` does)
    paned = rng.sample([i for i, spec in enumerate(specs) if spec.kind in ("hop", "cumulate")], 4)
    project.model(
        "paned",
        config
        + "\nunion all\n".join(
            f"select {i} as spec, * from (select k, window_start, window_end, count(*) as n, count(v) as n_v, "
            f"sum(v) as sum_v, min(v) as min_v, max(v) as max_v, avg(v) as avg_v from {{{{ {specs[i].call()} }}}} "
            "group by k, window_start, window_end)"
            for i in paned
        ),
    )
    # emit='on_window_close': only windows with window_end <= W = max(ts) - delay; the delay puts
    # W inside the dense stretch around the epoch (sessions: test_session_emit_on_window_close)
    max_ts = max(r["ts"] for r in rows if r["ts"] is not None)
    w_target = rng.randrange(-2 * o.HOUR, 2 * o.HOUR, o.SECOND)
    delay = (max_ts - w_target) // o.SECOND * o.SECOND
    w = max_ts - delay
    eowc_config = (
        "{{ config(materialized='window_view', emit='on_window_close', "
        f"watermark={{'column': 'ts', 'delay': '{delay // o.SECOND} seconds'}}) }}}}\n"
    )
    eowc_models = {"eowc_tvf": ("tumble", "hop", "cumulate")}
    for name, eowc_kinds in eowc_models.items():
        project.model(
            name,
            eowc_config
            + "\nunion all\n".join(
                f"select id, window_start, window_end, {i} as spec from {{{{ {spec.call()} }}}}"
                for i, spec in enumerate(specs)
                if spec.kind in eowc_kinds
            ),
        )
    project.dbt("build")

    failures = []
    for name, eowc_kinds in eowc_models.items():
        got = Counter(
            tuple(r)
            for r in spark.sql(
                f"select spec, id, unix_micros(window_start), unix_micros(window_end) from {project.schema}.{name}"
            ).collect()
        )
        expected = Counter(
            (i, r["id"], start, end)
            for i, spec in enumerate(specs)
            if spec.kind in eowc_kinds
            for r, (start, end) in spec.oracle(rows)
            if end <= w
        )
        if got != expected:
            missing = sorted((expected - got).elements())[:4]
            extra = sorted((got - expected).elements())[:4]
            failures.append(
                f"{name} (W = {o.to_datetime(w)}): rows differ ({sum(got.values())} vs {sum(expected.values())} "
                f"expected); missing (spec, id, start, end) {missing}; unexpected {extra}"
            )
    got_exploded: Dict[int, Counter] = defaultdict(Counter)
    for name, indexes in exploded.items():
        columns = project.columns(name)
        if columns != INPUT_COLUMNS + WINDOW_COLUMNS + ["spec"]:
            failures.append(
                f"{specs[indexes[0]].kind}: output columns {columns}, expected {INPUT_COLUMNS + WINDOW_COLUMNS}"
            )
        for r in spark.sql(
            f"select spec, id, k, v, unix_micros(ts), unix_micros(window_start), unix_micros(window_end), "
            f"unix_micros(window_time) from {project.schema}.{name}"
        ).collect():
            got_exploded[r[0]][tuple(r[1:])] += 1
    got_aggregated = by_spec(spark, f"{project.schema}.aggregated")
    got_window_aggregate = by_spec(
        spark, f"{project.schema}.window_aggregate", "avg_v, unix_micros(window_end) - unix_micros(window_time)"
    )
    # the statement the batch ran computes each of them from panes: no row copied into its windows
    compiled = next(project.root.glob("target/compiled/*/models/paned.sql")).read_text().lower()
    ran = next(project.root.glob("target/run/*/models/paned.sql")).read_text().lower()
    assert compiled.count("lateral view inline") == len(paned)
    assert "lateral view inline" not in ran and ran.count("_wv_panes") >= len(paned)
    got_paned = by_spec(spark, f"{project.schema}.paned", "avg_v")

    for i, spec in enumerate(specs):
        label = f"spec {i} {spec.kind} {spec.texts} partition_by={spec.partition_by!r}"
        windows = spec.oracle(rows)
        got = got_exploded[i]
        expected = Counter((r["id"], r["k"], r["v"], r["ts"], start, end, end - 1) for r, (start, end) in windows)
        if got != expected:
            missing = sorted((expected - got).elements(), key=o.sort_key)[:3]
            extra = sorted((got - expected).elements(), key=o.sort_key)[:3]
            failures.append(
                f"{label}: exploded rows differ ({sum(got.values())} vs {sum(expected.values())} expected); "
                f"missing (id, k, v, ts, start, end, time) {missing}; unexpected {extra}"
            )
        got_aggs = sorted(got_aggregated[i], key=o.sort_key)
        expected_aggs = o.aggregate(windows, "k", "v")
        failures += differs(f"{label}: aggregates", got_aggs, expected_aggs)
        if i in paned:
            if any(not _avg_ok(r[-1], r[5], r[4]) for r in got_paned[i]):
                failures.append(f"{label}: paned avg(v) is not sum(v) / count(v)")
            got_p = sorted((r[:-1] for r in got_paned[i]), key=o.sort_key)
            failures += differs(f"{label}: the TVF + GROUP BY from panes", got_p, expected_aggs)
        if i in grouped:
            got_wa = got_window_aggregate[i]
            if any(r[-1] != 1 for r in got_wa):
                failures.append(f"{label}: window_aggregate window_time is not window_end - 1 us")
            if any(not _avg_ok(r[-2], r[5], r[4]) for r in got_wa):
                bad = [r for r in got_wa if not _avg_ok(r[-2], r[5], r[4])][:3]
                failures.append(f"{label}: window_aggregate avg(v) is not sum(v) / count(v): {bad}")
            got_wa = sorted((r[:-2] for r in got_wa), key=o.sort_key)
            expected_wa = o.aggregate(windows, "k" if grouped[i] else None, "v")
            failures += differs(
                f"{label}: window_aggregate(group_by={['k'] if grouped[i] else []})", got_wa, expected_wa
            )
    assert not failures, "\n".join(failures)


def test_session_emit_on_window_close(project, spark):
    """SESSION windows close like the others: a session [first t, last t + gap) with
    window_end <= W is final (a later row would have t > W >= window_end, too late to join).
    Sessions of key a: [00:00, 00:15) closed at W = 00:20; [00:25, 00:35) open."""
    rows = [
        {"id": 1, "k": "a", "v": 1, "ts": 0},
        {"id": 2, "k": "a", "v": 2, "ts": 5 * o.MINUTE},
        {"id": 3, "k": "a", "v": 3, "ts": 25 * o.MINUTE},
        {"id": 4, "k": "b", "v": 4, "ts": 30 * o.MINUTE},
    ]
    load_events(spark, project.schema, rows)
    project.write("models/sources.yml", o.SOURCES_YML)
    for name, partition in (("session_all", ""), ("session_by_k", ", partition_by='k'")):
        project.model(
            name,
            """
            {{ config(materialized='window_view', emit='on_window_close',
                      watermark={'column': 'ts', 'delay': '10 minutes'}) }}
            select id, window_start, window_end
            from {{ window_views.session(source('raw', 'ev'), 'ts', '10 minutes'%s) }}
            """
            % partition,
        )
    project.dbt("build")
    w = 20 * o.MINUTE
    for name, keys in (("session_all", ()), ("session_by_k", ("k",))):
        sessions = o.session_windows(rows, "ts", 10 * o.MINUTE, keys)
        expected = sorted((rid, s, e) for rid, (s, e) in sessions.items() if e <= w)
        got = sorted(
            tuple(r)
            for r in spark.sql(
                f"select id, unix_micros(window_start), unix_micros(window_end) from {project.schema}.{name}"
            ).collect()
        )
        assert got == expected, name


def test_window_aggregate_hop_sums_of_large_values(project, spark):
    """window_aggregate's HOP plan must give the sums the TVF + GROUP BY form gives, also for
    DOUBLE and DECIMAL measures next to large values in earlier windows (a difference of running
    totals loses a DOUBLE window's small sum to cancellation, and a DECIMAL running total can
    overflow where no window sum does)."""
    spark.sql(f"create database if not exists {project.schema}")
    spark.sql(
        f"create table {project.schema}.ev using parquet as select * from values "
        "(1, timestamp'1970-01-01 00:00:00', 1e17D, 9e35BD), "
        "(2, timestamp'1970-01-01 00:05:00', 1e17D, 9e35BD), "
        "(3, timestamp'1970-01-01 02:00:00', 1.0D, 1.25BD), "
        "(4, timestamp'1970-01-01 02:01:00', 2.0D, 2.50BD) "
        "as ev(id, ts, d, m)"
    )
    spark.sql(
        f"create or replace view {project.schema}.ev_typed as select id, ts, d, cast(m as decimal(38, 2)) as m from {project.schema}.ev"
    )
    project.write("models/sources.yml", sources_yml("ev_typed"))
    window = "{'kind': 'hop', 'time_col': 'ts', 'slide': '10 minutes', 'size': '30 minutes'}"
    measures = "{'sum_d': 'sum(d)', 'sum_m': 'sum(m)', 'avg_d': 'avg(d)'}"
    config = "{{ config(materialized='window_view') }}\n"
    project.model(
        "panes",
        config
        + f"select * from {{{{ window_views.window_aggregate(source('raw', 'ev_typed'), {window}, {measures}) }}}}",
    )
    project.model(
        "expanded",
        config + "select window_start, window_end, window_time, sum(d) as sum_d, sum(m) as sum_m, avg(d) as avg_d "
        "from {{ window_views.hop(source('raw', 'ev_typed'), 'ts', '10 minutes', '30 minutes') }} "
        "group by window_start, window_end, window_time",
    )
    project.dbt("build")
    panes = project.rows("panes", "window_start")
    expanded = project.rows("expanded", "window_start")
    assert [r[:2] for r in panes] == [r[:2] for r in expanded]
    late = [(p, e) for p, e in zip(panes, expanded) if p[0] >= o.to_datetime(o.HOUR)]  # rows 3 and 4 only
    assert late and all(e[3:] == (3.0, 3.75, 1.5) for _, e in late)
    assert [p[3:] for p, _ in late] == [e[3:] for _, e in late]
