"""execution='streaming': a Structured Streaming query over the upstream table whose
micro-batches run the model's own SQL on the rows that can still change a result.

Spark's streaming aggregation cannot serve here: it drops late rows without a word, refuses
update mode for session windows and OVER windows altogether, and cannot honour both emit modes
on the same SQL. So each micro-batch (foreachBatch) does what a window operator does, keeping
its state in files:

1. classify the new rows against W, the watermark reached by the previous batch: a row whose
   first window is closed (over windows: whose ORDER BY value is at or before W) is late, and
   goes to the late table or is dropped, always counted;
2. add the others to the retained input: the rows that a result still to be written needs;
3. run the model SQL over the retained rows as a static temp view in place of the upstream
   table, keeping what the batch changed (on_update) or closed (on_window_close);
4. write the result: on_window_close appends the windows or rows the new W closed; on_update
   rewrites the buckets (days of window_end) whose windows changed;
5. forget the rows no later result needs (window TVFs: whose last window is closed; over
   windows: see overwindows.py), and commit W.

Every write of a batch goes through `storage`'s stage-then-publish protocol keyed by the batch
id, and a batch whose commit exists is skipped, so a replay after a crash changes nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from sqlglot import exp

from dbt.adapters.window_views import analysis, emit, overwindows, prefix, storage, tvf
from dbt.adapters.window_views.analysis import AnalysisError
from dbt.adapters.window_views.config import WindowViewConfig
from dbt.adapters.window_views.intervals import epoch_micros

DAY = 86_400_000_000
WINDOW_START, WINDOW_END = epoch_micros("window_start"), epoch_micros("window_end")
EPOCH = dt.datetime(1970, 1, 1)
APPEND_ONLY_HINT = (
    "streaming window views read sources, append-only incremental models and streaming "
    "on_window_close window views"
)
# test hook: exit the process at a named point of a batch, as a crash or a kill -9 would
FAULT_ENV = "DBT_WINDOW_VIEWS_FAULT"


class StreamingError(ValueError):
    """A streaming window view that cannot run; the message names the model and the fix."""


def describe_micros(micros: Optional[int]) -> str:
    if micros is None:
        return "none"
    return (EPOCH + dt.timedelta(microseconds=micros)).strftime("%Y-%m-%d %H:%M:%S")


@dataclass(frozen=True)
class StreamingPlan:
    """What a streaming window view reads, computes and writes; built before anything runs."""

    model: str
    config: WindowViewConfig
    sql: str  # the model SQL reading `view` instead of the upstream table
    output_sql: str  # `sql` with calls kept as prefix state reading it from `view` (prefix.py)
    source: str  # the upstream table, as the compiled SQL names it
    view: str
    window: Optional[tvf.WindowTvf]  # a window TVF model, or
    over: Optional[overwindows.OverPlan]  # an over-window model
    fingerprint: str

    @property
    def bucket_micros(self) -> int:
        return max(DAY, -(-self.window.span // DAY) * DAY) if self.window else DAY

    def describe(self) -> str:
        return self.window.describe() if self.window else "; ".join(self.over.calls)


def check_layout(model: str, config: Mapping[str, Any]) -> None:
    """dbt-spark's table layout keys do not apply: the runner lays out its own files."""
    for key in ("partition_by", "clustered_by", "buckets"):
        if config.get(key):
            raise StreamingError(
                f"window_view model '{model}': config '{key}' is not supported with execution='streaming', whose "
                f"files are grouped by day of window_end so that a run rewrites only the days that changed; fix: remove '{key}'"
            )


def check_upstream(model: str, upstream: Sequence[Mapping[str, Any]]) -> None:
    """Only append-only inputs: a table rewritten in place would replay its rows as new ones."""
    for node in upstream:
        kind = node.get("resource_type")
        if kind == "source":
            continue
        materialized = node.get("materialized")
        if kind == "model" and materialized == "incremental" and node.get("incremental_strategy") in (None, "append"):
            continue
        if (
            kind == "model"
            and materialized == "window_view"
            and node.get("execution") == "streaming"
            and node.get("emit") == "on_window_close"
        ):
            continue
        what = f"a {kind}" if kind != "model" else f"a '{materialized}' model"
        if materialized == "incremental":
            what += f" with incremental_strategy '{node.get('incremental_strategy')}'"
        elif materialized == "window_view":
            what += f" with execution '{node.get('execution') or 'batch'}' and emit '{node.get('emit') or 'on_update'}'"
        raise StreamingError(
            f"window_view model '{model}': upstream `{node.get('name')}` is {what}, which is rewritten in "
            f"place, so a stream would read its rows again as new rows; fix: {APPEND_ONLY_HINT} "
            "(e.g. materialized='incremental' with incremental_strategy='append')"
        )


def plan(model: str, compiled_sql: str, config: WindowViewConfig) -> StreamingPlan:
    def fail(problem: str, fix: str) -> StreamingError:
        return StreamingError(f"window_view model '{model}': {problem}; fix: {fix}")

    if config.file_format != "parquet":
        raise fail(
            f"execution='streaming' writes parquet files through its own commit protocol, not file_format '{config.file_format}'",
            "leave file_format unset (parquet); Delta/Iceberg MERGE needs their jars, which come from Maven",
        )
    try:
        tree = analysis.parse(compiled_sql)
    except AnalysisError as exc:
        raise fail(str(exc), "write SQL that sqlglot's spark dialect reads") from exc
    windows = tvf.find(compiled_sql)
    try:
        own_calls = [c for c in analysis.over_calls(tree) if not c.generated]
    except AnalysisError as exc:
        raise fail(str(exc), "use a window TVF with GROUP BY (window_aggregate's pane plans run in batch only)") from exc
    assert config.watermark is not None  # the config check requires one for streaming
    window, over = None, None
    if len(windows) > 1 or (not windows and not own_calls):
        raise fail(
            f"execution='streaming' needs exactly one window TVF or over windows, found {len(windows)} window TVFs",
            "select from one window_views.tumble/hop/cumulate/session call, or compute window functions ordered by "
            "the watermark column",
        )
    if windows:
        window = windows[0]
        if config.watermark.column.lower() != window.time_col.strip("`").lower():
            raise fail(
                f"the watermark column `{config.watermark.column}` is not the window's time column `{window.time_col}`",
                f"set watermark={{'column': '{window.time_col}', 'delay': '{config.watermark.delay}'}}",
            )
        for call in own_calls:
            if not any(analysis.is_column(p, c) for p in call.partition_by for c in ("window_start", "window_end")):
                raise fail(
                    f"`{call.sql}` is an over window across the windows of a window TVF, which streaming does not maintain",
                    "partition it by window_start, window_end, or use execution='batch'",
                )
    else:
        try:
            overwindows.ascending(tree, config.watermark.column)
            over = overwindows.plan(tree, config.watermark.column)
        except AnalysisError as exc:
            problem, _, fix = str(exc).partition("; fix: ")
            raise fail(problem, fix or "see the README on streaming over windows") from exc
    inputs = analysis.input_tables(tree)
    if len(inputs) != 1:
        names = ", ".join(f"{s}.{n}" if s else n for s, n in inputs) or "none"
        raise fail(
            f"a streaming window view reads exactly one upstream table, this one reads {names}",
            "join or union the inputs in an upstream model, or use execution='batch'",
        )
    schema, name = inputs[0]
    references = [t for t in tree.find_all(exp.Table) if t.name == name and (t.db or None) == schema]
    if len(references) > 1:
        raise fail(
            f"the SQL reads {inputs[0][0]}.{name} {len(references)} times; a stream is consumed once",
            "read it once (a self-join needs a batch window view), or use execution='batch'",
        )
    view = f"_wv_input_{hashlib.sha1(model.encode()).hexdigest()[:12]}"
    for table in list(tree.find_all(exp.Table)):
        if table.name == name and (table.db or None) == schema:
            alias = table.alias or name
            table.replace(exp.alias_(exp.to_table(view), alias, table=True))
    sql = tree.sql("spark")
    output_sql = prefix.rewrite(sql, over.prefix) if over is not None and over.prefix else sql
    digest = json.dumps(
        [sql, config.emit, config.late_data, config.watermark.describe()] + ([output_sql] if output_sql != sql else []),
        sort_keys=True,
    )
    source = f"{schema}.{name}" if schema else name
    return StreamingPlan(
        model, config, sql, output_sql, source, view, window, over, hashlib.sha256(digest.encode()).hexdigest()
    )


@dataclass
class Locations:
    table: Path
    late: Path
    checkpoint: Path

    @property
    def state(self) -> Path:
        return self.checkpoint / "window_views"


@dataclass
class StreamResult:
    batches: int = 0
    rows_in: int = 0
    rows_out: int = 0
    late: int = 0
    watermark: Optional[int] = None
    properties: Dict[str, str] = field(default_factory=dict)

    def message(self) -> str:
        return (
            f"STREAM {self.batches} batch{'es' if self.batches != 1 else ''}, {self.rows_in:,} in, "
            f"{self.rows_out:,} out, {self.late:,} late, watermark {describe_micros(self.watermark)}"
        )


def _fault(point: str) -> None:
    if os.environ.get(FAULT_ENV) == point:
        os._exit(137)


class BatchWriter:
    """The foreachBatch function: one micro-batch, idempotent for its batch id."""

    def __init__(self, plan: StreamingPlan, where: Locations, run_id: str, schema: Any = None) -> None:
        self.plan = plan
        self.where = where
        self.run_id = run_id
        self.schema = schema  # the model's output columns
        self.prefix_groups = prefix.groups(plan.over.prefix) if plan.over else []

    # -- state files -----------------------------------------------------------------------
    def _commits(self) -> Path:
        return self.where.state / "commits"

    def last_commit(self, before: Optional[int] = None) -> Optional[Dict[str, Any]]:
        ids = [int(p.stem) for p in self._commits().glob("*.json") if p.stem.isdigit()]
        ids = [i for i in ids if before is None or i < before]
        return storage.read_json(self._commits() / f"{max(ids)}.json") if ids else None

    def __call__(self, df: Any, batch_id: int) -> None:
        commit_path = self._commits() / f"{batch_id}.json"
        if commit_path.exists():
            return  # a replay of a batch that completed
        previous = self.last_commit(before=batch_id) or {}
        ready_path = self.where.state / "ready" / f"{batch_id}.json"
        ready = storage.read_json(ready_path)
        if ready is None:
            ready = self._stage(df, batch_id, previous)
            _fault("staged")
            storage.write_json(ready_path, ready)
        _fault("ready")
        storage.publish(self.where.table, batch_id, ready["replaced_buckets"])
        _fault("published")
        storage.publish(self.where.late, batch_id)
        ready.update(batch=batch_id, run_id=self.run_id)
        storage.write_json(commit_path, ready)
        self._count(ready)
        self._clean(batch_id, previous, ready["state"])

    def _count(self, commit: Dict[str, Any]) -> None:
        """Add a committed batch to its run's totals, which dbt's result message reports."""
        path = self.where.state / "runs" / f"{self.run_id}.json"
        totals = storage.read_json(path) or {"batches": 0, "rows_in": 0, "rows_out": 0, "late": 0}
        for key in ("rows_in", "rows_out", "late"):
            totals[key] += commit[key]
        totals["batches"] += 1
        storage.write_json(path, totals)

    def _clean(self, batch_id: int, previous: Dict[str, Any], state: Optional[str]) -> None:
        storage.remove(self.where.state / "ready" / f"{batch_id}.json")
        if previous.get("state") and previous["state"] != state:
            storage.remove(self.where.state / "state" / previous["state"])
            storage.remove(self.where.state / "prefix" / previous["state"])
        for old in self._commits().glob("*.json"):
            if old.stem.isdigit() and int(old.stem) < batch_id - 100:
                old.unlink()
        runs = sorted((self.where.state / "runs").glob("*.json"), key=lambda p: p.stat().st_mtime)
        for old in runs[:-20]:
            old.unlink()

    # -- one batch ---------------------------------------------------------------------------
    def _stage(self, df: Any, batch_id: int, previous: Dict[str, Any]) -> Dict[str, Any]:
        spark = df.sparkSession
        plan, window = self.plan, self.plan.window
        w_prev: Optional[int] = previous.get("watermark")
        delay = plan.config.watermark.delay.micros
        t = epoch_micros(f"`{plan.config.watermark.column}`")
        if window is not None:
            # a row without event time is in no window, in batch as in streaming
            late_sql = "false" if w_prev is None else f"_wv_t is not null and {window.late('_wv_t', w_prev)}"
        else:
            # over windows: a row at or before W would come before rows already emitted; one without
            # event time has no place in the order at all, so it is kept aside too
            late_sql = "_wv_t is null" if w_prev is None else f"(_wv_t is null or _wv_t <= {w_prev})"
        rows = df.selectExpr("*", f"{t} as _wv_t").selectExpr("*", f"{late_sql} as _wv_late").persist()
        retained = None
        try:
            stats = rows.selectExpr(
                "count(*) as n",
                "count_if(_wv_late) as late",
                "min(if(_wv_late, null, _wv_t)) as tmin",
                "max(if(_wv_late, null, _wv_t)) as tmax",
            ).first()
            if not stats.n:
                return {key: previous.get(key) for key in ("watermark", "state")} | {
                    "rows_in": 0, "late": 0, "rows_out": 0, "replaced_buckets": []}
            source_columns = df.columns
            late_rows = rows.where("_wv_late")
            if stats.late and plan.config.late_data == "table":
                judged_by = f"timestamp_micros({w_prev}L)" if w_prev is not None else "cast(null as timestamp)"
                metadata = [f"{batch_id}L as _batch_id", f"{judged_by} as _watermark", "'late' as _wv_bucket"]
                late_rows.selectExpr(*[f"`{c}`" for c in source_columns], *metadata).write.partitionBy(
                    "_wv_bucket"
                ).mode("overwrite").parquet(str(storage.staging_dir(self.where.late, batch_id)))
            holds = window.holds("_wv_t") if window else "true"
            fresh = rows.where(f"not _wv_late and _wv_t is not null and {holds}").drop("_wv_late")
            w_new = w_prev
            if stats.tmax is not None:
                w_new = stats.tmax - delay if w_prev is None else max(w_prev, stats.tmax - delay)
            state_schema = fresh.schema
            retained = fresh.selectExpr("*", "true as _wv_new")
            if previous.get("state"):
                old = spark.read.schema(state_schema).parquet(str(self.where.state / "state" / previous["state"]))
                # cached: read several times below (without state, `rows` already is)
                retained = old.selectExpr("*", "false as _wv_new").unionByName(retained).persist()
            states = self._prefix_states(spark, fresh, source_columns, previous.get("state"))
            out, replaced = self._output(spark, retained, batch_id, w_prev, w_new, stats.tmin, stats.tmax, source_columns, states)
            self._save_state(retained.drop("_wv_new"), w_new, source_columns, states, batch_id)
        finally:
            if retained is not None:
                retained.unpersist()
            rows.unpersist()
        return {
            "watermark": w_new,
            "state": str(batch_id),
            "rows_in": stats.n,
            "late": stats.late,
            "rows_out": out,
            "replaced_buckets": replaced,
        }

    def _as_input(self, rows: Any, source_columns: List[str], *extra: str) -> None:
        """Put `rows` where the model SQL reads its upstream table (the temp view)."""
        rows.select(*[f"`{c}`" for c in source_columns], *extra).createOrReplaceTempView(self.plan.view)

    def _model_input(self, spark: Any, rows: Any, source_columns: List[str], states: List[Any]) -> str:
        """Put `rows` where the model SQL reads its upstream table, with the prefix state of
        their partitions beside them; returns the SQL to run over them."""
        if not states:
            self._as_input(rows, source_columns)
            return self.plan.sql
        view = f"{self.plan.view}_rows"
        rows.select(*[f"`{c}`" for c in source_columns]).createOrReplaceTempView(view)
        for g, state in enumerate(states):
            state.createOrReplaceTempView(f"{view}_s{g}")
        joined = prefix.joined_sql(
            view, [f"{view}_s{g}" for g in range(len(states))], [p for p, _ in self.prefix_groups], self.plan.over.prefix
        )
        spark.sql(joined).createOrReplaceTempView(self.plan.view)
        return self.plan.output_sql

    def _conform(self, result: Any) -> Any:
        """The output of the rewritten SQL as the model's own: the state columns a `*` picked up
        dropped, and names and types as the original calls give them."""
        if not self.prefix_groups:
            return result
        columns = [c for c in result.columns if not c.lower().startswith("_wv_")]
        fields = self.schema.fields
        assert len(columns) == len(fields), (columns, fields)
        renamed = result.select(*[f"`{c}`" for c in columns]).toDF(*[f.name for f in fields])
        return renamed.select(*[renamed[i].cast(f.dataType).alias(f.name) for i, f in enumerate(fields)])

    def _compute(self, spark: Any, rows: Any, source_columns: List[str], where: str, states: Sequence[Any] = ()) -> Any:
        sql = self._model_input(spark, rows, source_columns, list(states))
        return self._conform(spark.sql(sql)).where(where)

    def _output(
        self, spark: Any, retained: Any, batch_id: int, w_prev: Optional[int], w_new: Optional[int],
        tmin: Optional[int], tmax: Optional[int], source_columns: List[str], states: List[Any],
    ) -> Tuple[int, List[str]]:
        """Stage this batch's output files; returns the rows written and the buckets replaced."""
        window, staging = self.plan.window, storage.staging_dir(self.where.table, batch_id)
        if window is None:
            if self.plan.config.emit == "on_update":
                return self._update_rows(spark, retained, tmin, source_columns, staging, states)
            if w_new is None or w_new == w_prev:
                return 0, []
            sql = self._model_input(spark, retained, source_columns, states)
            sql = emit.closing_rows(sql, self.plan.config.watermark.column, w_prev, w_new)
            return self._append(spark, self._conform(spark.sql(sql)), staging), []
        session = window.kind == "session"
        after = f"{WINDOW_END} > {w_prev}" if w_prev is not None else "true"
        if self.plan.config.emit == "on_window_close":
            if w_new is None or w_new == w_prev:
                return 0, []
            rows = retained
            if w_prev is not None and not session:
                rows = rows.where(f"_wv_t >= {w_prev - window.span}")
            result = self._compute(spark, rows, source_columns, f"{after} and {WINDOW_END} <= {w_new}")
            return self._append(spark, result, staging), []

        # on_update: recompute every window a new row falls in, and replace those windows
        if tmin is None:
            return 0, []
        if session:
            region, rows = after, retained
            low, high = w_prev, None
        else:
            lo, hi = tmin - window.span, tmax + window.span
            rows = retained.where(f"_wv_t >= {lo} and _wv_t < {hi}")
            region = f"{after} and {WINDOW_START} >= {lo} and {WINDOW_END} <= {hi}"
            low, high = (lo if w_prev is None else max(lo, w_prev)), hi
        result = self._compute(spark, rows, source_columns, region)
        return self._upsert(spark, result, region, WINDOW_END, low, high, staging)

    def _update_rows(
        self, spark: Any, retained: Any, tmin: Optional[int], source_columns: List[str], staging: Path, states: List[Any]
    ) -> Tuple[int, List[str]]:
        """Over windows, on_update: recompute every row from the first one a new row changes."""
        if tmin is None:
            return 0, []
        cut = tmin
        cut_sql = overwindows.update_cut_sql(self.plan.sql, self.plan.over)
        if cut_sql is not None:
            self._as_input(retained, source_columns, "_wv_new")
            affected = spark.sql(cut_sql).first()[0]
            cut = tmin if affected is None else min(tmin, affected)
        t = epoch_micros(f"`{self.plan.config.watermark.column}`")
        region = f"{t} >= {cut}"
        result = self._compute(spark, retained, source_columns, region, states)
        return self._upsert(spark, result, region, t, cut - 1, None, staging)

    def _upsert(
        self, spark: Any, result: Any, region: str, key: str, low: Optional[int], high: Optional[int], staging: Path
    ) -> Tuple[int, List[str]]:
        """Replace the output rows in `region` (SQL over output columns, with `key` in (low, high])
        by `result`, rewriting only the buckets (days of `key`) that hold such rows: the result is
        staged, then the rows of those buckets outside the region beside it."""
        size = self.plan.bucket_micros
        bucket = f"concat('b', cast(div({key} - pmod({key}, {size}), {size}) as string)) as _wv_bucket"
        touched = set()
        for name in {f.name.split("-n", 1)[0] for f in storage.data_files(self.where.table)}:
            k = int(name[1:])
            if (low is None or (k + 1) * size > low + 1) and (high is None or k * size <= high):
                touched.add(name)
        result.selectExpr("*", bucket).write.partitionBy("_wv_bucket").mode("overwrite").parquet(str(staging))
        written = self._staged_rows(spark, staging)
        existing = [str(f) for b in touched for f in storage.data_files(self.where.table, b)]
        if existing:
            kept = spark.read.schema(result.schema).parquet(*existing).where(f"not coalesce({region}, false)")
            kept.selectExpr("*", bucket).write.partitionBy("_wv_bucket").mode("append").parquet(str(staging))
        touched.update(p.name.split("=", 1)[1] for p in staging.glob("_wv_bucket=*"))
        return written, sorted(touched)

    def _append(self, spark: Any, result: Any, staging: Path) -> int:
        """Stage rows that are final: emitted once, appended, never rewritten."""
        result.selectExpr("*", "'e' as _wv_bucket").write.partitionBy("_wv_bucket").mode("overwrite").parquet(str(staging))
        return self._staged_rows(spark, staging)

    @staticmethod
    def _staged_rows(spark: Any, staging: Path) -> int:
        """Rows staged so far, from the parquet footers: cheaper than caching the result to count it."""
        files = [str(f) for f in staging.glob("_wv_bucket=*/*.parquet")]
        return spark.read.parquet(*files).count() if files else 0

    # -- state --------------------------------------------------------------------------------
    def _prefix_dir(self, state: str, group: int) -> Path:
        return self.where.state / "prefix" / state / f"g{group}"

    def _prefix_states(self, spark: Any, rows: Any, source_columns: List[str], state: Optional[str]) -> List[Any]:
        """Per group of prefix calls, the summary of the rows evicted so far (prefix.py)."""
        if not self.prefix_groups:
            return []
        view = f"{self.plan.view}_evicted"
        rows.select(*[f"`{c}`" for c in source_columns]).limit(0).createOrReplaceTempView(view)
        states = []
        for g, (partition_by, calls) in enumerate(self.prefix_groups):
            blank = spark.sql(prefix.aggregate_sql(view, g, partition_by, calls))
            states.append(blank if state is None else spark.read.schema(blank.schema).parquet(str(self._prefix_dir(state, g))))
        return states

    def _save_state(self, retained: Any, w_new: Optional[int], source_columns: List[str], states: List[Any], batch_id: int) -> None:
        """Write the rows an open window or a frame still to come needs; over windows fold the
        rows they evict into the prefix state."""
        rows_dir = str(self.where.state / "state" / str(batch_id))
        if self.plan.window is not None or w_new is None:
            self._unclosed(retained, w_new).write.mode("overwrite").parquet(rows_dir)
            for g, state in enumerate(states):
                state.write.mode("overwrite").parquet(str(self._prefix_dir(str(batch_id), g)))
            return
        spark = retained.sparkSession
        self._as_input(retained, source_columns)
        if self.plan.config.emit == "on_update":
            sql = overwindows.update_retain_sql(self.plan.sql, self.plan.over, w_new)
        else:
            sql = overwindows.retain_sql(self.plan.sql, self.plan.over, w_new)
        keep = overwindows.KEEP
        flagged = spark.sql(sql).selectExpr("*", f"{epoch_micros(f'`{self.plan.config.watermark.column}`')} as _wv_t")
        if states:
            flagged = flagged.persist()  # read twice: the rows kept, and those evicted into the state
        try:
            flagged.where(keep).drop(keep).write.mode("overwrite").parquet(rows_dir)
            evicted = f"{self.plan.view}_evicted"
            flagged.where(f"not {keep}").select(*[f"`{c}`" for c in source_columns]).createOrReplaceTempView(evicted)
            for g, (partition_by, calls) in enumerate(self.prefix_groups):
                states[g].createOrReplaceTempView(f"{evicted}_old")
                spark.sql(prefix.aggregate_sql(evicted, g, partition_by, calls)).createOrReplaceTempView(f"{evicted}_new")
                merged = spark.sql(prefix.merge_sql(f"{evicted}_old", f"{evicted}_new", g, partition_by, calls))
                merged.coalesce(1).write.mode("overwrite").parquet(str(self._prefix_dir(str(batch_id), g)))
        finally:
            flagged.unpersist()

    def _unclosed(self, retained: Any, w_new: Optional[int]) -> Any:
        """Window TVFs: the retained rows some open window needs."""
        if w_new is None:
            return retained
        window = self.plan.window
        if window.kind != "session":
            return retained.where(f"{window.last_end('_wv_t')} > {w_new}")
        keys = ", ".join(f"`{k}`" for k in window.partition_by)
        part = f"partition by {keys}" if keys else ""
        sessions = retained.selectExpr(
            "*", f"case when _wv_t - lag(_wv_t) over ({part} order by _wv_t) <= {window.gap} then 0 else 1 end as _wv_new"
        ).selectExpr(
            "*", f"sum(_wv_new) over ({part} order by _wv_t rows between unbounded preceding and current row) as _wv_session"
        )
        group = f"partition by {keys + ', ' if keys else ''}_wv_session"
        return sessions.selectExpr(
            "*", f"max(_wv_t) over ({group}) + {window.gap} as _wv_session_end"
        ).where(f"_wv_session_end > {w_new}").drop("_wv_new", "_wv_session", "_wv_session_end")


def _drop(spark: Any, table: str, location: Path) -> None:
    spark.sql(f"drop table if exists {table}")
    storage.remove(location)


def _ensure_table(spark: Any, model: str, table: str, location: Path, schema: Any) -> None:
    """Create the table over its location, or check the existing one still fits the SQL."""
    if spark.catalog.tableExists(table):
        have = [(f.name.lower(), f.dataType.simpleString()) for f in spark.table(table).schema.fields]
        want = [(f.name.lower(), f.dataType.simpleString()) for f in schema.fields]
        if have != want:
            raise StreamingError(
                f"window_view model '{model}': the columns of {table} ({', '.join(' '.join(c) for c in have)}) "
                f"no longer match the model's ({', '.join(' '.join(c) for c in want)}); fix: run "
                f"`dbt run --full-refresh -s {model}` to rebuild it from all input"
            )
        return
    location.mkdir(parents=True, exist_ok=True)
    spark.catalog.createTable(table, path=location.as_uri(), source="parquet", schema=schema)


def run(
    spark: Any, plan: StreamingPlan, target: str, late_target: str, where: Locations, run_id: str, full_refresh: bool
) -> StreamResult:
    """Start the stream, wait until it has processed what the trigger asks for, and sum up."""
    model = plan.model
    if not full_refresh and spark.catalog.tableExists(target):
        properties = {r[0]: r[1] for r in spark.sql(f"show tblproperties {target}").collect()}
        # a batch window view or another table in the way: replace it, as dbt replaces a table
        full_refresh = properties.get("window_views.execution") != "streaming"
    if full_refresh:
        _drop(spark, target, where.table)
        _drop(spark, late_target, where.late)
        storage.remove(where.checkpoint)
    saved = storage.read_json(where.state / "model.json")
    if saved is not None and saved.get("fingerprint") != plan.fingerprint:
        raise StreamingError(
            f"window_view model '{model}': its SQL or window config changed since the checkpoint at "
            f"{where.checkpoint} was written, so the state there no longer fits it; fix: run "
            f"`dbt run --full-refresh -s {model}` to rebuild it from all input"
        )
    source = spark.table(plan.source)
    source.limit(0).createOrReplaceTempView(plan.view)
    out_schema = spark.sql(plan.sql).schema
    names = {f.name.lower(): f for f in out_schema.fields}
    if plan.over and plan.config.emit == "on_update":
        column = plan.config.watermark.column.lower()
        if column not in names or names[column].dataType.simpleString() != "timestamp":
            raise StreamingError(
                f"window_view model '{model}': streaming over windows with emit='on_update' revise rows by their "
                f"event time, so the model must select the watermark column `{plan.config.watermark.column}` "
                "unchanged; fix: add it to the select list"
            )
    for column in ("window_start", "window_end") if plan.window else ():
        if column not in names or names[column].dataType.simpleString() != "timestamp":
            raise StreamingError(
                f"window_view model '{model}': execution='streaming' keeps results by window, so the model "
                f"must select `{column}` (a timestamp) from its window TVF; fix: add it to the select list and GROUP BY"
            )
    needed = [("watermark column", plan.config.watermark.column)]
    if plan.window is not None:
        needed += [("session partition_by column", key) for key in plan.window.partition_by]
    columns = {c.lower() for c in source.columns}
    for what, column in needed:
        if column.strip("`").lower() not in columns:
            raise StreamingError(
                f"window_view model '{model}': the {what} `{column}` is not a column of {plan.source}, and the "
                f"stream keeps {plan.source}'s rows as its state; fix: compute `{column}` in an upstream model"
            )
    for column in source.columns:
        if column.lower().startswith("_wv_"):
            raise StreamingError(f"window_view model '{model}': input column `{column}` uses the reserved prefix _wv_; fix: rename it")
    _ensure_table(spark, model, target, where.table, out_schema)
    if plan.config.late_data == "table":
        late_schema = source.selectExpr("*", "cast(null as bigint) as _batch_id", "cast(null as timestamp) as _watermark").schema
        _ensure_table(spark, model, late_target, where.late, late_schema)
    if saved is None:
        # no checkpoint (first run, or it was deleted): whatever files remain were computed from
        # input the new stream reads again, so start the tables empty
        for location in (where.table, where.late):
            for stale in storage.data_files(location):
                stale.unlink()
        storage.write_json(where.state / "model.json", {"model": model, "fingerprint": plan.fingerprint, "sql": plan.sql})

    writer = BatchWriter(plan, where, run_id, out_schema)
    stream = (
        spark.readStream.table(plan.source)
        .writeStream.foreachBatch(writer)
        .option("checkpointLocation", (where.checkpoint / "spark").as_uri())
        .queryName(f"window_view_{model}_{run_id[:8]}")
    )
    trigger = plan.config.trigger
    if trigger.processing_time is None:
        query = stream.trigger(availableNow=True).start()
        query.awaitTermination()
    else:
        query = stream.trigger(processingTime=f"{trigger.processing_time.micros // 1000} milliseconds").start()
        query.awaitTermination(trigger.max_duration.micros / 1_000_000)
        # let a running micro-batch finish: stopping inside one only makes the next run replay it
        while query.isActive and query.status["isTriggerActive"]:
            time.sleep(0.2)
        query.stop()
    failure = query.exception()
    if failure is not None and "InterruptedException" not in str(failure):
        raise StreamingError(f"window_view model '{model}': the streaming query failed: {failure.desc if hasattr(failure, 'desc') else failure}")
    spark.catalog.refreshTable(target)
    if plan.config.late_data == "table":
        spark.catalog.refreshTable(late_target)

    totals = storage.read_json(where.state / "runs" / f"{run_id}.json") or {}
    last = BatchWriter(plan, where, run_id).last_commit() or {}
    result = StreamResult(
        batches=totals.get("batches", 0), rows_in=totals.get("rows_in", 0), rows_out=totals.get("rows_out", 0),
        late=totals.get("late", 0), watermark=last.get("watermark"),
    )
    result.properties = {
        "window_views.watermark_reached": describe_micros(result.watermark),
        "window_views.checkpoint": str(where.checkpoint),
        "window_views.late_table": late_target if plan.config.late_data == "table" else "none (late_data=drop)",
    }
    return result
