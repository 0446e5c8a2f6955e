"""Kappa differential test of streaming over windows with random window specs.

Per seed: 150 random rows (keys and values with NULLs, ties in time, NULL times, some times with
microseconds; across 1970-01-01 in some seeds, so negative epoch micros) are appended to the
source `ev_stream` in 3-4 shuffled, out-of-order deliveries (test_streaming_kappa.deliveries:
noise and a few stragglers hours behind). One or two random models (4-7 window calls each, drawn
from what streaming over windows supports: aggregates over ROWS/RANGE frames with row and
interval offsets, LAG/LEAD with offsets, defaults and IGNORE NULLS, FIRST/LAST/NTH_VALUE with IGNORE NULLS,
UNBOUNDED PRECEDING frames, ROW_NUMBER/RANK/DENSE_RANK, descending orders streaming mirrors,
partitions by columns and expressions, a WHERE) are each built 4 times: emit on_window_close and
on_update, execution streaming over `ev_stream` and batch over `ev`, a table holding the rows
delivered so far minus the late ones. Late rows are predicted by a Python replay of the rule (t
is NULL or t <= W, W = max time of the earlier deliveries' rows kept - delay). One `dbt run` per
delivery builds every model; after each:

- each streaming model's late table holds exactly the predicted late rows, and the run counts them;
- streaming table == batch table == DuckDB running the same window functions over the same rows
  (on_update: every row; on_window_close: the rows closed at W = max(t) - delay by
  oracles.closed_rows with each call's FOLLOWING reach, mirrored for descending calls);
- an on_window_close streaming table only grows: an emitted row never changes.

Spark-free checks keep the seeds meaningful: together they cover every kind of call listed, and
each seed has late rows besides the NULL-time ones and on_window_close expectations that an
oracle with W a minute off, or without the FOLLOWING reaches, would get wrong.

Determinism: ROWS frames, ROW_NUMBER, LAG/LEAD and FIRST/LAST/NTH_VALUE order by (ts, id) with the
unique id; RANGE frames, RANK and DENSE_RANK may order by ts alone (peers are treated alike).
Values are small integers, so sums are exact (AVG compared with a tolerance).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import pytest
from test_differential_over import (
    Call,
    _order,
    _over,
    _range_frame,
    _rows_frame,
    compare,
    duckdb_result,
    load,
    same,
    spark_result,
)
from test_streaming_kappa import deliveries, random_rows

from tests.support import oracles as o
from tests.support.dbt_projects import sources_yml

Row = Dict[str, Any]
STREAM_SOURCE = "{{ source('raw', 'ev_stream') }}"
BATCH_SOURCE = "{{ source('raw', 'ev') }}"
EMITS = {"eowc": "on_window_close", "upd": "on_update"}
EXECUTIONS = ("stream", "batch")

# partition expressions, and the Python value of each expression (SQL `%` on positive ids = Python's)
PARTITIONS = ["", "k", "id % 3", "k, id % 2", "v is null"]
KEY_OF: Dict[str, Callable[[Row], Any]] = {
    "k": lambda r: r["k"],
    "id % 3": lambda r: r["id"] % 3,
    "id % 2": lambda r: r["id"] % 2,
    "v is null": lambda r: r["v"] is None,
}
# WHERE clauses of the SELECT with the windows (streaming keeps it), and their Python predicate
WHERES: Dict[str, Callable[[Row], bool]] = {
    "": lambda r: True,
    "v is not null": lambda r: r["v"] is not None,
    "k is null or v > 0": lambda r: r["k"] is None or (r["v"] is not None and r["v"] > 0),
}
MAX_RANGE_AHEAD = 10 * o.MINUTE
AGGREGATES = ["sum(v)", "count(v)", "count(*)", "avg(v)", "min(v)", "max(v)", "max(ts)", "min(ts)"]


@dataclass
class StreamCall(Call):
    """A window call in Spark's spelling (`sql`) and DuckDB's (`duck`: IGNORE NULLS goes inside
    the argument list); rows_ahead / range_ahead are the FOLLOWING reach of the ascending call
    streaming runs (for a descending call: of its mirror)."""

    duck: str = ""
    features: Tuple[str, ...] = ()
    ahead_values: bool = False  # rows_ahead counts rows with a non-NULL v (LEAD IGNORE NULLS)


def _call(name: str, args: Sequence[str], over: str, ignore_nulls: bool = False, **kw: Any) -> StreamCall:
    a = ", ".join(args)
    spark = f"{name}({a}){' ignore nulls' if ignore_nulls else ''} {over}"
    duck = f"{name}({a}{' ignore nulls' if ignore_nulls else ''}) {over}"
    features = kw.pop("features", ()) + (("ignore nulls",) if ignore_nulls else ())
    return StreamCall(spark, duck=duck, features=features, **kw)


def _desc_frame(rng: random.Random, kind: str) -> Tuple[str, int]:
    """A frame over a descending ORDER BY that streaming mirrors: a bounded start (mirrored, an
    UNBOUNDED PRECEDING start would end in UNBOUNDED FOLLOWING), any end (UNBOUNDED FOLLOWING
    becomes an UNBOUNDED PRECEDING start). Returns the frame and the mirrored frame's FOLLOWING
    reach: the PRECEDING reach of this frame's start (rows, or micros for RANGE)."""
    if kind == "rows":
        size, text = 1, lambda n: str(n)
        offsets = [1, 2, 3]
    else:
        unit, size = rng.choice([("seconds", o.SECOND), ("minutes", o.MINUTE), ("hours", o.HOUR)])
        top = {"seconds": 5400, "minutes": 120, "hours": 3}[unit]
        offsets = [0, 1, rng.randint(1, top), rng.randint(1, top)]
        text = lambda n: f"interval {n} {unit}"
    starts = [(-n, f"{text(n)} preceding") for n in offsets] + [(0, "current row")]
    starts += [(n, f"{text(n)} following") for n in offsets[:2]]
    ends = [(-n, f"{text(n)} preceding") for n in offsets[:2]] + [(0, "current row")]
    ends += [(n, f"{text(n)} following") for n in offsets] + [(math.inf, "unbounded following")]
    while True:
        (a, start), (b, end) = rng.choice(starts), rng.choice(ends)
        if a <= b and not ("following" in start and "following" not in end):
            return f"{kind} between {start} and {end}", -a * size if a < 0 else 0


def _fits(frame: str, ahead: int, bounded: bool) -> bool:
    """A RANGE frame reaching at most MAX_RANGE_AHEAD ahead (a longer reach would decide alone which
    rows on_window_close emits, hiding the other calls' reaches); bounded: no UNBOUNDED end; never
    CURRENT ROW .. x PRECEDING (Spark takes it, DuckDB does not)."""
    return (
        not (frame.startswith("range") and ahead > MAX_RANGE_AHEAD)
        and not (bounded and "unbounded" in frame)
        and not ("current row and" in frame and frame.endswith("preceding"))
    )


BOUNDED_FAMILIES = ["rows", "range", "offset", "value"]
WHOLE_PREFIX_FAMILIES = ["unbounded", "ranking"]


def random_stream_call(rng: random.Random, family: str, bounded: bool) -> StreamCall:
    """A random window call streaming over windows maintains (ORDER BY the watermark column `ts`,
    ascending or mirrorable descending; no UNBOUNDED FOLLOWING end once ascending; no whole-partition
    function), of a family: aggregates over ROWS or RANGE frames, LAG/LEAD, FIRST/LAST/NTH_VALUE
    (the BOUNDED_FAMILIES), calls over UNBOUNDED PRECEDING frames, ranking. bounded: no UNBOUNDED
    frames either, so the state evicts rows."""
    call = _random_stream_call(rng, family, bounded)
    call.features += (("rows following",) if call.rows_ahead else ()) + (
        ("range following",) if call.range_ahead else ()
    )
    return call


def _random_stream_call(rng: random.Random, family: str, bounded: bool) -> StreamCall:
    partition = rng.choice(PARTITIONS)
    descending = family in BOUNDED_FAMILIES and rng.random() < 0.3
    tags = (family, f"partition {partition or 'none'}") + (("descending",) if descending else ())

    if family in ("rows", "range"):
        func = rng.choice(AGGREGATES)
        order, nulls_last = _order(rng, unique=family == "rows", descending=descending)
        if descending:
            frame, ahead = _desc_frame(rng, family)
            while not _fits(frame, ahead, bounded):
                frame, ahead = _desc_frame(rng, family)
        else:
            frame, ahead = (_rows_frame if family == "rows" else _range_frame)(rng, True)
            while not _fits(frame, ahead, bounded):
                frame, ahead = (_rows_frame if family == "rows" else _range_frame)(rng, True)
        reach = {"rows_ahead": ahead} if family == "rows" else {"range_ahead": ahead}
        return _call(
            func[: func.index("(")],
            [func[func.index("(") + 1 : -1]],
            _over(partition, order, frame),
            partition=partition,
            nulls_last=nulls_last,
            features=tags,
            **reach,
        )
    if family == "offset":
        name = rng.choice(["lag", "lead"])
        n = rng.choice([None, 1, 2, 3])
        args = ["v"] if n is None else ["v", str(n)] + ([str(rng.randint(-9, -1))] if rng.random() < 0.5 else [])
        order, nulls_last = _order(rng, unique=True, descending=descending)
        # descending LAG is streamed as ascending LEAD, and the other way round
        ahead = (n or 1) if (name == "lead") != descending else 0
        tags += (name,) + (("default",) if len(args) == 3 else ())
        ignore_nulls = rng.random() < 0.25
        return _call(
            name,
            args,
            _over(partition, order),
            ignore_nulls,
            partition=partition,
            nulls_last=nulls_last,
            rows_ahead=ahead,
            ahead_values=ignore_nulls and ahead > 0,
            features=tags,
        )
    if family == "value":
        name = rng.choice(["first_value", "last_value"] if descending else ["first_value", "last_value", "nth_value"])
        args = ["v"] + ([str(rng.randint(1, 3))] if name == "nth_value" else [])
        order, nulls_last = _order(rng, unique=True, descending=descending)
        if descending:
            frame, ahead = _desc_frame(rng, "rows")
            while not _fits(frame, ahead, bounded):
                frame, ahead = _desc_frame(rng, "rows")
        else:
            frame, ahead = _rows_frame(rng, True)
            while not _fits(frame, ahead, bounded):
                frame, ahead = _rows_frame(rng, True)
        ignore_nulls = rng.random() < 0.35
        return _call(
            name,
            args,
            _over(partition, order, frame),
            ignore_nulls,
            partition=partition,
            nulls_last=nulls_last,
            rows_ahead=ahead,
            features=tags + (name,) + (("value ignore nulls",) if ignore_nulls else ()),
        )
    if family == "ranking":
        func = rng.choice(["row_number()", "rank()", "dense_rank()"])
        unique = func == "row_number()" or rng.random() < 0.3
        order, nulls_last = _order(rng, unique=unique, descending=False)
        return _call(
            func[:-2],
            [],
            _over(partition, order),
            partition=partition,
            nulls_last=nulls_last,
            features=tags + (func,) + (() if unique else ("ties-only order",)),
        )
    # UNBOUNDED PRECEDING: running aggregates, FIRST/LAST/NTH_VALUE from the partition's start
    shape = rng.choice(["default", "rows", "range", "range interval"])
    name = rng.choice(["sum", "count", "min", "max", "avg", "first_value", "first_value", "last_value", "nth_value"])
    argument = (
        "*"
        if name == "count" and rng.random() < 0.3
        else "ts"
        if name in ("min", "max") and rng.random() < 0.25
        else "v"
    )
    args = [argument] + ([str(rng.randint(1, 3))] if name == "nth_value" else [])
    value = name in ("first_value", "last_value", "nth_value")
    ignore_nulls = value and rng.random() < 0.35
    ahead: Dict[str, int] = {}
    if shape == "default":  # RANGE UNBOUNDED PRECEDING .. CURRENT ROW: peers alike
        order, nulls_last = _order(rng, unique=value, descending=False)
        frame = ""
    elif shape == "rows":
        order, nulls_last = _order(rng, unique=True, descending=False)
        n = rng.choice([0, 0, 1, 2])
        end = rng.choice(["current row", f"{n} following"] if n else ["current row", "1 preceding"])
        frame = f"rows between unbounded preceding and {end}"
        ahead = {"rows_ahead": n if "following" in end else 0}
    elif shape == "range":
        order, nulls_last = _order(rng, unique=value, descending=False)
        frame = "range between unbounded preceding and current row"
    else:  # an interval end needs the single ORDER BY ts: no value functions (ties)
        if value:
            name, args, ignore_nulls = "max", ["v"], False
        order, nulls_last = _order(rng, unique=False, descending=False)
        m = rng.choice([0, 1, 5, 10])
        side = rng.choice(["preceding", "following"])
        frame = f"range between unbounded preceding and interval {m} minutes {side}"
        ahead = {"range_ahead": m * o.MINUTE if side == "following" else 0}
    return _call(
        name,
        args,
        _over(partition, order, frame),
        ignore_nulls,
        partition=partition,
        nulls_last=nulls_last,
        features=tags
        + (f"{name} unbounded", f"unbounded {shape}")
        + ((f"{name} unbounded ignore nulls",) if ignore_nulls else ()),
        **ahead,
    )


@dataclass
class Spec:
    name: str
    calls: List[StreamCall]
    where: str = ""

    def sql(self, source: str, duck: bool = False) -> str:
        """select id, <call i> as c<i>, ..., ts from <source> [where ...] (on_update streaming
        needs the watermark column in the output)"""
        columns = [f"{c.duck if duck else c.sql} as c{i}" for i, c in enumerate(self.calls)]
        where = f"\nwhere {self.where}" if self.where else ""
        return "select id,\n  " + ",\n  ".join(columns) + f",\n  ts\nfrom {source}{where}"

    def columns(self) -> List[Call]:
        return [*self.calls, Call("ts")]


@dataclass
class Scenario:
    seed: int
    rows: List[Row]
    batches: List[List[Row]]
    delay: int  # micros
    delay_text: str
    specs: List[Spec] = field(default_factory=list)


# seed -> (epoch micros the 4-hour span of event times starts at, deliveries, models); each model
# is built 4 times (2 emit modes x streaming/batch) and a dbt run costs ~2 s a model
SEEDS = {
    7082: (o.micros(o.EPOCH) - 90 * o.MINUTE, 3, 2),  # across 1970-01-01: negative times
    8012: (
        o.micros(o.EPOCH.replace(year=2024, month=2, day=28)) + 22 * o.HOUR,
        4,
        1,
    ),  # across midnight into 2024-02-29
    9021: (o.micros(o.EPOCH.replace(year=1969, month=12, day=31)) + 21 * o.HOUR, 3, 1),  # mostly before 1970
}


def scenario(seed: int) -> Scenario:
    """Everything a seed decides, without Spark: rows, deliveries, delay, models."""
    start, count, models = SEEDS[seed]
    rng = random.Random(seed)
    # random_rows spans 4 hours from 1969-12-31 22:30; moved to start at `start`
    shift = start - o.micros(o.EPOCH.replace(year=1969, month=12, day=31, hour=22, minute=30))
    rows = [{**r, "ts": None if r["ts"] is None else r["ts"] + shift} for r in random_rows(rng, 150)]
    batches = deliveries(rng, rows, count)
    delay = rng.choice([1, 4, 10, 25]) * o.MINUTE
    scn = Scenario(seed, rows, batches, delay, o.interval_text(delay, rng))
    for m in range(models):
        if models == 2 and m == 0:  # only bounded calls: the state evicts rows
            families = [rng.choice(BOUNDED_FAMILIES) for _ in range(rng.randint(4, 6))]
        else:  # calls reading the whole prefix of the partition, and any others
            families = [rng.choice(WHOLE_PREFIX_FAMILIES + ["unbounded"]) for _ in range(rng.randint(3, 4))]
            families += [rng.choice(BOUNDED_FAMILIES + WHOLE_PREFIX_FAMILIES) for _ in range(rng.randint(2, 3))]
        calls = [random_stream_call(rng, f, bounded=models == 2 and m == 0) for f in families]
        where = rng.choices(list(WHERES), weights=[6, 1, 1])[0]
        scn.specs.append(Spec(f"m{m}", calls, where))
    return scn


def model_name(spec: Spec, emit: str, execution: str) -> str:
    return f"{spec.name}_{emit}_{execution}"


def write_models(project, scn: Scenario) -> None:
    for spec in scn.specs:
        for emit, emit_mode in EMITS.items():
            for execution in EXECUTIONS:
                config = (
                    f"materialized='window_view', emit='{emit_mode}', "
                    f"watermark={{'column': 'ts', 'delay': '{scn.delay_text}'}}"
                    + (", execution='streaming'" if execution == "stream" else "")
                )
                source = STREAM_SOURCE if execution == "stream" else BATCH_SOURCE
                project.model(model_name(spec, emit, execution), f"{{{{ config({config}) }}}}\n" + spec.sql(source))


def replay(scn: Scenario) -> List[Tuple[List[Row], List[Row], Optional[int]]]:
    """The late rule for over windows, replayed: per delivery, its late rows (NULL time, or time at
    or before the W reached by the earlier deliveries), the rows kept so far (delivered, not late)
    and the W reached after it (max time of the rows kept - delay, never going back)."""
    w: Optional[int] = None
    kept: List[Row] = []
    out = []
    for delivery in scn.batches:
        late = [r for r in delivery if r["ts"] is None or (w is not None and r["ts"] <= w)]
        on_time = [r for r in delivery if r["id"] not in {x["id"] for x in late}]
        kept = kept + on_time
        if on_time:
            w_new = max(r["ts"] for r in on_time) - scn.delay
            w = w_new if w is None else max(w, w_new)
        out.append((late, kept, w))
    return out


def closed_ids(spec: Spec, kept: List[Row], w: Optional[int], reach: bool = True) -> set:
    """The ids on_window_close emits at W: rows the WHERE keeps whose every call is closed
    (oracles.closed_rows: t <= W, and the call's n-th following row in its partition, or t + its
    RANGE FOLLOWING interval, too). reach=False: ignoring FOLLOWING reaches (a sensitivity check)."""
    seen = [{**r, **{name: f(r) for name, f in KEY_OF.items()}} for r in kept if WHERES[spec.where](r)]
    closed = {r["id"] for r in seen}
    for call in spec.calls:
        keys = [p.strip() for p in call.partition.split(",") if p.strip()]
        if call.ahead_values and reach:
            closed &= _closed_by_values(seen, w, keys, call.rows_ahead)
            continue
        ahead = (call.rows_ahead, call.range_ahead) if reach else (0, 0)
        closed &= o.closed_rows(seen, "ts", w, keys, *ahead)
    return closed


def _closed_by_values(seen: List[Row], w: Optional[int], keys: List[str], n: int) -> set:
    """LEAD(v, n) IGNORE NULLS is final once the n-th following row with a non-NULL v has t <= W
    (the kept rows all have a time: NULL times are late)."""
    if w is None:
        return set()
    partitions: Dict[tuple, List[Row]] = defaultdict(list)
    for r in seen:
        partitions[tuple(r[k] for k in keys)].append(r)
    closed = set()
    for members in partitions.values():
        members.sort(key=lambda r: (r["ts"], r["id"]))
        for i, r in enumerate(members):
            following = [m for m in members[i + 1 :] if m["v"] is not None]
            if r["ts"] <= w and len(following) >= n and following[n - 1]["ts"] <= w:
                closed.add(r["id"])
    return closed


def expected_rows(con, scn: Scenario, spec: Spec, emit: str, kept: List[Row]) -> Dict[int, tuple]:
    """DuckDB's values over the kept rows; on_window_close: only the rows closed at W = max(kept
    t) - delay (computed as batch does, from its input)."""
    full = duckdb_result(con, spec.sql("ev", duck=True))
    if emit == "upd":
        return full
    closed = closed_ids(spec, kept, o.watermark((r["ts"] for r in kept), scn.delay))
    return {rid: values for rid, values in full.items() if rid in closed}


def describe_row(r: Row) -> str:
    ts = "NULL" if r["ts"] is None else o.to_datetime(r["ts"]).isoformat(sep=" ")
    return f"(id {r['id']}, k {r['k']}, v {r['v']}, ts {ts})"


def differences(
    label: str, spec: Spec, got: Dict[int, tuple], expected: Dict[int, tuple], by_id: Dict[int, Row]
) -> List[str]:
    """compare()'s lines, plus the input rows of the first differing ids."""
    lines = compare(label, spec.columns(), got, expected)
    if lines:
        bad = sorted(set(got) ^ set(expected)) + [
            rid
            for rid in sorted(set(got) & set(expected))
            if any(not same(a, b) for a, b in zip(got[rid], expected[rid]))
        ]
        lines.append("    input rows of differing ids: " + ", ".join(describe_row(by_id[rid]) for rid in bad[:6]))
    return lines


@pytest.mark.parametrize("seed", list(SEEDS))
def test_streaming_over_windows_random_specs_equal_batch_and_duckdb(project, spark, seed):
    # (test_random_scenarios_can_fail checks the seed's data and expectations are not vacuous)
    check(project, spark, scenario(seed))


def check(project, spark, scn: Scenario) -> None:
    """Deliver the scenario's batches, one `dbt run` each, and compare every table after each."""
    seed = scn.seed
    schema = project.schema
    spark.sql(f"create database if not exists {schema}")
    spark.sql(f"create table {schema}.ev_stream (id int, k string, v int, ts timestamp) using parquet")
    project.write("models/sources.yml", sources_yml("ev", "ev_stream"))
    write_models(project, scn)
    by_id = {r["id"]: r for r in scn.rows}
    streams = [model_name(s, e, "stream") for s in scn.specs for e in EMITS]
    header = f"seed {seed}, delay {scn.delay_text}"
    sqls = "\n".join(f"--- {s.name} (spark) ---\n{s.sql('<source>')}" for s in scn.specs)

    late_ids: Dict[int, int] = {}  # id -> delivery
    emitted: Dict[str, Dict[int, tuple]] = {}
    for d, (delivery, (late, kept, w)) in enumerate(zip(scn.batches, replay(scn))):
        late_ids.update({r["id"]: d for r in late})
        spark.sql(f"insert into {schema}.ev_stream {o.values_sql(delivery)}")
        con = load(spark, schema, kept)  # ev: the batch models' input, and DuckDB's

        result = project.dbt("run")
        where = f"{header}, after delivery {d + 1} of {len(scn.batches)} (W = {o.to_datetime(w)})"
        failures: List[str] = []
        responses = {r.node.name: r.adapter_response for r in result.result}
        for name in streams:
            got = {key: responses[name].get(key) for key in ("batches", "late_rows", "watermark")}
            want = {"batches": 1, "late_rows": len(late), "watermark": o.to_datetime(w).strftime("%Y-%m-%d %H:%M:%S")}
            if got != want:
                failures.append(f"{name}: run result {got}, expected {want} (the late rule)")
            in_table = {r[0]: r[1] for r in spark.sql(f"select id, _batch_id from {schema}.{name}__late").collect()}
            if in_table != late_ids:
                failures.append(
                    f"{name}: late table ids {sorted(in_table)} != the late rule's {sorted(late_ids)} "
                    f"(with their deliveries: {sorted(in_table.items())} vs {sorted(late_ids.items())})"
                )
        for spec in scn.specs:
            for emit in EMITS:
                expected = expected_rows(con, scn, spec, emit, kept)
                stream = spark_result(spark, f"{schema}.{model_name(spec, emit, 'stream')}")
                batch = spark_result(spark, f"{schema}.{model_name(spec, emit, 'batch')}")
                label = f"{spec.name} emit={EMITS[emit]}"
                failures += differences(f"{label}, streaming (got) vs DuckDB (expected)", spec, stream, expected, by_id)
                failures += differences(f"{label}, batch (got) vs DuckDB (expected)", spec, batch, expected, by_id)
                failures += differences(f"{label}, streaming (got) vs batch (expected)", spec, stream, batch, by_id)
                if emit == "eowc":
                    before = emitted.get(spec.name, {})
                    changed = [(rid, before[rid], stream.get(rid)) for rid in before if stream.get(rid) != before[rid]]
                    if changed:
                        failures.append(f"{label}: emitted rows changed or vanished (id, before, now): {changed[:4]}")
                    emitted[spec.name] = stream
        con.close()
        assert not failures, f"{where}\n" + "\n".join(failures) + f"\nmodels:\n{sqls}"


def test_random_specs_cover_what_streaming_supports():
    """The seeds' models, together, exercise every kind of call the test is meant to cover."""
    features = [f for seed in SEEDS for spec in scenario(seed).specs for call in spec.calls for f in call.features]
    wanted = [
        *BOUNDED_FAMILIES,
        *WHOLE_PREFIX_FAMILIES,
        "descending",
        "ignore nulls",
        "lag",
        "lead",
        "default",
        "rows following",
        "range following",
        "partition none",
        "partition k",
        "ties-only order",
        "nth_value",
        "row_number()",
        "rank()",
        "dense_rank()",
        "unbounded default",
        "unbounded rows",
        "unbounded range",
        *(f"{name} unbounded" for name in ("sum", "count", "min", "max", "avg", "first_value")),
        "first_value unbounded ignore nulls",
        "value ignore nulls",
    ]
    missing = [f for f in wanted if f not in features]
    assert not missing, f"no call with {missing}; features: {sorted(set(features))}"
    assert any(f.startswith("partition ") and f not in ("partition none", "partition k") for f in features)
    scns = [scenario(seed) for seed in SEEDS]
    assert any(spec.where for s in scns for spec in s.specs), "no WHERE clause"
    assert any(r["ts"] is not None and r["ts"] < 0 for s in scns for r in s.rows), "no pre-1970 times"
    assert any(r["v"] is None for s in scns for r in s.rows)
    assert all(len({r["ts"] for r in s.rows}) < len(s.rows) - 5 for s in scns), "few ties in time"


@pytest.mark.parametrize("seed", list(SEEDS))
def test_random_scenarios_can_fail(seed):
    """Each seed's deliveries make rows late besides the NULL-time ones, and its on_window_close
    expectations are sensitive: an oracle with W a minute off either way, or ignoring the calls'
    FOLLOWING reaches, would expect other rows in some delivery (so an engine making those mistakes
    fails), and each on_window_close table ends with rows both emitted and not yet emitted."""
    scn = scenario(seed)
    steps = replay(scn)
    late = [r for step_late, _, _ in steps for r in step_late]
    assert len(late) > sum(r["ts"] is None for r in scn.rows) + 2, f"{len(late)} late rows"
    for spec in scn.specs:
        closed = [(closed_ids(spec, kept, w), kept, w) for _, kept, w in steps]
        for shift in (o.MINUTE, -o.MINUTE):
            assert any(closed_ids(spec, kept, w + shift) != ids for ids, kept, w in closed), (spec.name, shift)
        if any(c.rows_ahead or c.range_ahead for c in spec.calls):
            assert any(closed_ids(spec, kept, w, reach=False) != ids for ids, kept, w in closed), spec.name
        final, kept, _ = closed[-1]
        assert 0 < len(final) < len(kept), (spec.name, len(final), len(kept))


def stream_table(project, spark) -> str:
    """The empty streamed source `ev_stream` of the regression cases below; returns the schema."""
    spark.sql(f"create database if not exists {project.schema}")
    spark.sql(f"create table {project.schema}.ev_stream (id int, k string, v int, ts timestamp) using parquet")
    project.write("models/sources.yml", sources_yml("ev_stream"))
    return project.schema


def test_lag_lead_ignore_nulls_stream_like_batch(project, spark):
    """LAG(v) IGNORE NULLS of a row whose previous non-NULL value is more than 1 row back, and
    LEAD(v) IGNORE NULLS of rows whose next non-NULL value arrives in a later delivery (after
    their next row closed): in both emit modes the values must be those of the batch view."""
    schema = stream_table(project, spark)
    sql = (
        "select id, lag(v) ignore nulls over (order by ts, id) as prev_v, "
        "lead(v) ignore nulls over (order by ts, id) as next_v, ts from " + STREAM_SOURCE
    )
    for emit, mode in EMITS.items():
        project.model(
            f"nulls_{emit}",
            "{{ config(materialized='window_view', execution='streaming', emit='"
            + mode
            + "', watermark={'column': 'ts', 'delay': '0 minutes'}) }}\n"
            + sql,
        )
    row = lambda i, v, minute: {"id": i, "k": "a", "v": v, "ts": minute * o.MINUTE}
    # 00:01 v=10, then two NULLs; after the first run W = 00:03, and the state keeps 1 row back
    spark.sql(f"insert into {schema}.ev_stream {o.values_sql([row(1, 10, 1), row(2, None, 2), row(3, None, 3)])}")
    project.dbt("run")
    spark.sql(f"insert into {schema}.ev_stream {o.values_sql([row(4, 4, 10), row(5, 5, 11)])}")
    project.dbt("run")
    at = lambda minute: o.to_datetime(minute * o.MINUTE)
    # (id, prev_v, next_v, ts), as the batch view (and DuckDB) computes them over all 5 rows
    expected = [(1, None, 4, at(1)), (2, 10, 4, at(2)), (3, 10, 4, at(3)), (4, 10, 5, at(10)), (5, 4, None, at(11))]
    got = {emit: project.rows(f"nulls_{emit}", "id") for emit in EMITS}
    # on_window_close at W = 00:11: every row but the last (no next row yet)
    assert got == {"upd": expected, "eowc": expected[:4]}


def test_on_update_revises_unbounded_frames_ending_following(project, spark):
    """LAST_VALUE over ROWS BETWEEN UNBOUNDED PRECEDING AND 1 FOLLOWING is the next row's value:
    a new row at 00:03 must revise the 00:02 row, as LEAD would."""
    schema = stream_table(project, spark)
    project.model(
        "upto_next",
        "{{ config(materialized='window_view', execution='streaming', emit='on_update', "
        "watermark={'column': 'ts', 'delay': '1 hour'}) }}\n"
        "select id, last_value(v) over (order by ts, id rows between unbounded preceding and 1 following) as v_next, ts "
        "from " + STREAM_SOURCE,
    )
    row = lambda i, v, minute: {"id": i, "k": "a", "v": v, "ts": minute * o.MINUTE}
    at = lambda minute: o.to_datetime(minute * o.MINUTE)
    spark.sql(f"insert into {schema}.ev_stream {o.values_sql([row(1, 10, 1), row(2, 20, 2)])}")
    project.dbt("run")
    first = project.rows("upto_next", "id")
    spark.sql(f"insert into {schema}.ev_stream {o.values_sql([row(3, 30, 3)])}")
    project.dbt("run")
    assert first == [(1, 20, at(1)), (2, 20, at(2))]
    assert project.rows("upto_next", "id") == [(1, 20, at(1)), (2, 30, at(2)), (3, 30, at(3))]


def test_descending_range_frame_mirror(project, spark):
    """SUM over ORDER BY ts DESC RANGE BETWEEN 120 minutes PRECEDING AND 30 minutes PRECEDING: the
    rows 30 minutes to 2 hours later, streamed as the mirrored ascending frame."""
    schema = stream_table(project, spark)
    project.model(
        "later",
        "{{ config(materialized='window_view', execution='streaming', emit='on_window_close', "
        "watermark={'column': 'ts', 'delay': '0 minutes'}) }}\n"
        "select id, sum(v) over (order by ts desc range between interval 120 minutes preceding "
        "and interval 30 minutes preceding) as s, ts from " + STREAM_SOURCE,
    )
    minutes = [0, 30, 60, 90, 120, 180]
    rows = [{"id": i + 1, "k": "a", "v": 2**i, "ts": m * o.MINUTE} for i, m in enumerate(minutes)]
    spark.sql(f"insert into {schema}.ev_stream {o.values_sql(rows)}")
    project.dbt("run")
    at = lambda minute: o.to_datetime(minute * o.MINUTE)
    # W = 03:00 closes the rows whose frame (up to 2 hours later) has passed: up to 01:00
    assert project.rows("later", "id") == [(1, 30, at(0)), (2, 28, at(30)), (3, 56, at(60))]
