"""The `window_view` materialization's config, validated before any SQL runs."""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from datetime import date, datetime, timezone
from enum import Enum
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Type, TypeVar

from dbt.adapters.spark.impl import SparkConfig
from dbt.artifacts.resources import ModelConfig

from dbt.adapters.window_views.errors import IntervalError, ModelConfigError, ModelOutputError
from dbt.adapters.window_views.names import name_problem
from dbt.adapters.window_views.query.intervals import Interval
from dbt.adapters.window_views.storage import paths


class Choice(str, Enum):
    """A config value from a fixed set; a str, so it prints and serializes as the user wrote it."""

    def __str__(self) -> str:
        return self.value


class Execution(Choice):
    BATCH = "batch"
    STREAMING = "streaming"


class Emit(Choice):
    ON_UPDATE = "on_update"
    ON_WINDOW_CLOSE = "on_window_close"


class LateData(Choice):
    TABLE = "table"
    DROP = "drop"


class FileFormat(Choice):
    PARQUET = "parquet"
    DELTA = "delta"
    ICEBERG = "iceberg"
    ORC = "orc"
    HUDI = "hudi"


class OnChange(Choice):
    FAIL = "fail"
    REBUILD = "rebuild"


class BatchSize(Choice):
    """dbt's microbatch `batch_size`: the period one batch of an incremental window view covers."""

    HOUR = "hour"
    DAY = "day"
    MONTH = "month"
    YEAR = "year"


C = TypeVar("C", bound=Choice)
EXECUTIONS = tuple(e.value for e in Execution)
EMITS = tuple(e.value for e in Emit)
LATE_DATA = tuple(e.value for e in LateData)
FILE_FORMATS = tuple(e.value for e in FileFormat)
ON_CHANGE = tuple(e.value for e in OnChange)


@dataclass
class WindowViewsConfig(SparkConfig):
    """dbt-spark's model configs plus the window-view keys (so dbt knows them)."""

    execution: Optional[str] = None
    emit: Optional[str] = None
    watermark: Optional[Dict[str, str]] = None
    late_data: Optional[str] = None
    trigger: Optional[Any] = None
    checkpoint_location: Optional[str] = None
    on_change: Optional[str] = None
    # how far before a dbt time filter's range the session macro reads (reach.py)
    session_lookback: Optional[str] = None


# the types a time column (a window's, the watermark's, event_time) may have
TIME_TYPES = ("timestamp", "timestamp_ntz", "date")

WINDOW_VIEW_KEYS = ("execution", "emit", "watermark", "late_data", "trigger", "checkpoint_location", "on_change")


def _known_keys() -> frozenset:
    names = {f.name for f in dataclasses.fields(ModelConfig)} | set(ModelConfig().to_dict())
    names |= {f.name for f in dataclasses.fields(WindowViewsConfig)}
    # keys dbt or dbt-spark read from the config without declaring them
    names |= {"tblproperties", "include_full_name_in_path", "sql_header", "docs", "transient"}
    return frozenset(n for n in names if not n.startswith("_"))


KNOWN_KEYS = _known_keys()


# a window_view config that cannot run; the message names the model, the key and the fix
ConfigError = ModelConfigError
# dbt-spark layout keys the streaming runner cannot honour: it lays out its own files
STREAMING_LAYOUT_KEYS = ("partition_by", "clustered_by", "buckets")


def reject_window_view_keys(model: str, materialized: str, config: Mapping[str, Any]) -> None:
    """A window_view key on another materialization would be silently ignored: refuse it."""
    for key in WINDOW_VIEW_KEYS:
        if config.get(key) is not None:
            raise ModelConfigError(
                model,
                key,
                f"only applies to materialized='window_view', and this model is materialized='{materialized}'",
                f"fix: set materialized='window_view', or remove '{key}'",
                label="model",
            )


@dataclass(frozen=True)
class Watermark:
    column: str
    delay: Interval
    # streaming: after this much processing time without input rows, W advances with the clock
    idle_timeout: Optional[Interval] = None

    def describe(self) -> str:
        """The event-time rule (the stream's fingerprint: idle_timeout is not part of it, as the
        state fits either way)."""
        return f"{self.column} - {self.delay}"


@dataclass(frozen=True)
class Trigger:
    """available_now, or a processing-time interval bounded by max_duration so dbt run returns."""

    processing_time: Optional[Interval] = None
    max_duration: Optional[Interval] = None

    def describe(self) -> str:
        if self.processing_time is None:
            return "available_now"
        return f"processing_time {self.processing_time} for at most {self.max_duration}"


@dataclass(frozen=True)
class Batches:
    """An incremental batch window view (batches.py): dbt's microbatch keys, read by the plugin,
    which drives the batches itself (dbt drives them only for materialized='incremental')."""

    event_time: str  # the output time column whose batch period owns a row
    size: BatchSize
    begin: datetime  # naive UTC, as dbt's batch bounds
    lookback: int  # batches before the current one that a run recomputes (dbt's meaning)
    session_lookback: Optional[Interval] = None  # how far before a batch its sessions are read back

    def describe(self) -> str:
        return f"{self.event_time} by {self.size} from {self.begin.isoformat(sep=' ')}, lookback {self.lookback}"


@dataclass(frozen=True)
class WindowViewConfig:
    execution: Execution
    emit: Emit
    watermark: Optional[Watermark]
    late_data: LateData
    trigger: Trigger
    checkpoint_location: Optional[str]
    file_format: FileFormat
    location_root: Optional[str] = None
    on_change: OnChange = OnChange.FAIL  # a streaming model whose SQL or window config changed: fail, or rebuild beside
    # dbt's event_time: the output column a downstream microbatch model (or --sample) filters this table by
    event_time: Optional[str] = None
    # execution='batch' with batch_size: the plugin computes the table batch by batch (batches.py)
    batches: Optional[Batches] = None

    def check_event_time(self, model: str, output: Sequence[Tuple[str, str]]) -> None:
        """dbt's `event_time` must be a time the model outputs (`output`: its columns and types, as
        only Spark can tell): a downstream microbatch model compares it with its batch's bounds."""
        column = self.event_time
        found = [kind for name, kind in output if column is not None and name.lower() == column.lower()]
        if column is None or (found and found[0].lower() in TIME_TYPES):
            return
        problem = f"is {found[0].upper()}" if found else "is not a column of the model's output"
        # found as the run starts (only Spark knows the output's types): not a CompilationError,
        # which dbt would print with the materialization's macro stack
        raise ModelOutputError(
            model,
            f"config 'event_time' = {column!r} {problem}; a downstream microbatch model filters this table by it, "
            "which needs TIMESTAMP, TIMESTAMP_NTZ or DATE",
            "set event_time to window_start (window TVFs) or to the row time an over-window model selects",
        )

    @property
    def required_watermark(self) -> Watermark:
        """The watermark of a model that has one: from_model refused emit='on_window_close' and
        execution='streaming' without."""
        if self.watermark is None:
            raise ValueError("this window view has no watermark")
        return self.watermark

    @property
    def required_batches(self) -> Batches:
        """The batch config of an incremental batch window view (batch_size set)."""
        if self.batches is None:
            raise ValueError("this window view has no batch_size")
        return self.batches

    @classmethod
    def from_model(cls, model: str, config: Mapping[str, Any]) -> "WindowViewConfig":
        read = _Reader(model, config)
        read.known_keys()
        execution = read.choice("execution", Execution, Execution.BATCH)
        emit = read.choice("emit", Emit, Emit.ON_UPDATE)
        late_data = read.choice("late_data", LateData, LateData.TABLE)
        file_format = read.choice("file_format", FileFormat, FileFormat.PARQUET)
        on_change = read.choice("on_change", OnChange, OnChange.FAIL)
        watermark = read.watermark(execution)
        if watermark is None and (emit is Emit.ON_WINDOW_CLOSE or execution is Execution.STREAMING):
            needs = "emit='on_window_close'" if emit is Emit.ON_WINDOW_CLOSE else "execution='streaming'"
            raise read.fail(
                "watermark",
                f"is missing: {needs} needs one",
                "add watermark={'column': '<event time column>', 'delay': '<interval>'}",
            )
        trigger = read.trigger()
        event_time = read.event_time()
        batches = _batches(read, execution, event_time)
        if batches is not None:
            read.parquet_layout(
                # Delta's and Iceberg's batches are replaced by predicate, partitioned as parquet's are
                FileFormat.PARQUET if file_format in (FileFormat.DELTA, FileFormat.ICEBERG) else file_format,
                "cannot be used with batch_size: the table is parquet, Delta or Iceberg, one partition per batch, "
                "each replaced on its own",
                "fix: leave file_format unset (parquet) or set it to 'delta' or 'iceberg', or remove batch_size "
                "(docs/delta-iceberg.md)",
                "is not supported with batch_size, whose table is partitioned by its batch column "
                "(<event_time>_<batch_size>)",
            )
        read.locations()
        if execution is Execution.STREAMING:
            read.parquet_layout(
                # Delta and Iceberg tables stream through their own commits, laid out as parquet is
                FileFormat.PARQUET if file_format in (FileFormat.DELTA, FileFormat.ICEBERG) else file_format,
                "cannot be used: execution='streaming' writes parquet files, a Delta table or an Iceberg table, "
                f"not file_format '{file_format}'",
                "fix: leave file_format unset (parquet) or set it to 'delta' or 'iceberg', or build the table in batch: "
                "execution='batch' (docs/delta-iceberg.md)",
                "is not supported with execution='streaming', whose files are grouped by day of window_end "
                "so that a run rewrites only the days that changed",
            )
        return cls(
            execution,
            emit,
            watermark,
            late_data,
            trigger,
            config.get("checkpoint_location"),
            file_format,
            config.get("location_root"),
            on_change,
            event_time,
            batches,
        )

    def properties(self) -> Dict[str, str]:
        """Table properties that describe the window view (also shown in the docs)."""
        props = {
            "window_views.execution": self.execution.value,
            "window_views.emit": self.emit.value,
            "window_views.late_data": self.late_data.value,
        }
        if self.watermark:
            props["window_views.watermark"] = self.watermark.describe()
            if self.watermark.idle_timeout is not None:
                props["window_views.watermark_idle_timeout"] = str(self.watermark.idle_timeout)
        if self.batches is not None:
            props["window_views.batches"] = self.batches.describe()
        return props


class _Reader:
    """One model's config read key by key; each problem a ModelConfigError naming the key and the fix."""

    def __init__(self, model: str, config: Mapping[str, Any]) -> None:
        self.model = model
        self.config = config

    def fail(self, key: str, problem: str, fix: str) -> ModelConfigError:
        return ModelConfigError(self.model, key, problem, fix)

    def known_keys(self) -> None:
        for key in self.config:
            if key not in KNOWN_KEYS:
                close = difflib.get_close_matches(key, sorted(KNOWN_KEYS), n=1, cutoff=0.75)
                hint = f"did you mean '{close[0]}'? " if close else ""
                raise self.fail(
                    key,
                    "is not a config key dbt or window_view knows",
                    f"{hint}window_view keys are: {', '.join(WINDOW_VIEW_KEYS)} (custom keys belong under `meta`)",
                )

    def choice(self, key: str, kind: Type[C], default: C) -> C:
        value = self.config.get(key)
        if value is None:
            return default
        allowed = [member.value for member in kind]
        if value not in allowed:
            raise self.fail(key, f"= {value!r} is not valid", f"expected one of: {', '.join(allowed)}")
        return kind(value)

    def watermark(self, execution: Execution) -> Optional[Watermark]:
        raw = self.config.get("watermark")
        if raw is None:
            return None
        if not isinstance(raw, Mapping) or set(raw) - {"column", "delay", "idle_timeout"} or "column" not in raw:
            raise self.fail(
                "watermark",
                f"= {raw!r} is not valid",
                "expected {'column': '<timestamp column>', 'delay': '<interval>'} (streaming: optionally "
                "'idle_timeout': '<interval>'), e.g. {'column': 'bidtime', 'delay': '5 minutes'}",
            )
        column = raw["column"]
        problem = name_problem(column)
        if problem is not None:
            raise self.fail("watermark", f"column {column!r} {problem}", "name one timestamp column")
        try:
            delay = Interval.parse(raw.get("delay", "0 seconds"), allow_zero=True)
        except IntervalError as exc:
            raise self.fail("watermark", f"delay: {exc}", "give the delay as e.g. '5 minutes'") from exc
        idle_timeout = None
        if raw.get("idle_timeout") is not None:
            if execution is not Execution.STREAMING:
                raise self.fail(
                    "watermark",
                    "idle_timeout only applies to execution='streaming' (a batch run has no processing time "
                    "between runs: its watermark is the input's max event time - delay)",
                    "remove 'idle_timeout', or set execution='streaming'",
                )
            try:
                idle_timeout = Interval.parse(raw["idle_timeout"])
            except IntervalError as exc:
                raise self.fail(
                    "watermark", f"idle_timeout: {exc}", "give the idle timeout as e.g. '10 minutes'"
                ) from exc
        return Watermark(column=column, delay=delay, idle_timeout=idle_timeout)

    def event_time(self) -> Optional[str]:
        value = self.config.get("event_time")
        if value is None:
            return None
        problem = name_problem(value) if isinstance(value, str) else "is not a column name"
        if problem is not None:
            raise self.fail(
                "event_time",
                f"= {value!r} {problem}",
                "name the output column downstream models filter by: window_start (window TVFs) or the row time "
                "(over windows)",
            )
        return value

    def trigger(self) -> Trigger:
        raw = self.config.get("trigger")
        if raw is None or raw == "available_now":
            return Trigger()
        if not isinstance(raw, Mapping) or set(raw) != {"processing_time", "max_duration"}:
            raise self.fail(
                "trigger",
                f"= {raw!r} is not valid",
                "expected one of: 'available_now', or {'processing_time': '<interval>', "
                "'max_duration': '<interval>'} (the bound makes dbt run return)",
            )
        try:
            return Trigger(Interval.parse(raw["processing_time"]), Interval.parse(raw["max_duration"]))
        except IntervalError as exc:
            raise self.fail("trigger", str(exc), "give both intervals as e.g. '30 seconds'") from exc

    def locations(self) -> None:
        for key in ("location_root", "checkpoint_location"):
            value = self.config.get(key)
            why = paths.problem(value) if value is not None else None
            if why:
                raise self.fail(
                    key, f"= {value!r} {why}", "give an absolute directory path or a URI, e.g. '/data/warehouse'"
                )

    def parquet_layout(
        self, file_format: FileFormat, format_problem: str, format_fix: str, layout_problem: str
    ) -> None:
        """A table whose files the plugin lays out itself: parquet, none of dbt-spark's layout keys."""
        if file_format is not FileFormat.PARQUET:
            raise self.fail("file_format", f"= '{file_format}' {format_problem}", format_fix)
        for key in STREAMING_LAYOUT_KEYS:
            if self.config.get(key):
                raise self.fail(key, layout_problem, f"fix: remove '{key}'")


def _batches(read: _Reader, execution: Execution, event_time: Optional[str]) -> Optional[Batches]:
    """dbt's microbatch keys on a window view: none of them (beyond dbt's default lookback),
    or batch_size with event_time and begin, in execution='batch'."""
    raw_size, raw_begin = read.config.get("batch_size"), read.config.get("begin")
    if raw_size is None:
        if raw_begin is not None:
            raise read.fail(
                "begin",
                "is set without batch_size",
                f"add batch_size (expected one of: {', '.join(b.value for b in BatchSize)}), or remove 'begin'",
            )
        return None
    size = read.choice("batch_size", BatchSize, BatchSize.DAY)
    if execution is not Execution.BATCH:
        raise read.fail(
            "batch_size",
            f"= '{size}' only applies to execution='batch' (a stream computes each window once, as its input arrives)",
            "remove batch_size, begin and lookback, or set execution='batch'",
        )
    if event_time is None:
        raise read.fail(
            "batch_size",
            f"= '{size}' needs event_time: the output time column whose {size} a row belongs to",
            "add event_time='window_time' (window TVFs) or the row time an over-window model selects",
        )
    lookback = read.config.get("lookback", 1)
    if isinstance(lookback, bool) or not isinstance(lookback, int) or lookback < 0:
        raise read.fail("lookback", f"= {lookback!r} is not valid", "expected a whole number of batches >= 0, e.g. 1")
    return Batches(event_time, size, _begin(read, raw_begin), lookback, _session_lookback(read))


def _session_lookback(read: _Reader) -> Optional[Interval]:
    raw = read.config.get("session_lookback")
    try:
        return None if raw is None else Interval.parse(raw, window=True)
    except IntervalError as exc:
        raise read.fail("session_lookback", f"is not valid: {exc}", "give it as e.g. '1 day'") from exc


def _begin(read: _Reader, raw: Any) -> datetime:
    fix = "set begin to the first time to compute, e.g. begin='2024-01-01' or '2024-01-01 06:00:00'"
    if raw is None:
        raise read.fail("begin", "is missing: batch_size needs it (the first batch a full refresh computes)", fix)
    begin: Optional[datetime] = None
    if isinstance(raw, datetime):
        begin = raw
    elif isinstance(raw, date):
        begin = datetime(raw.year, raw.month, raw.day)
    elif isinstance(raw, str):
        try:
            begin = datetime.fromisoformat(raw.strip())
        except ValueError:
            begin = None
    if begin is None:
        raise read.fail("begin", f"= {raw!r} is not a timestamp", fix)
    return naive_utc(begin)


def naive_utc(t: datetime) -> datetime:
    """`t` as the naive UTC time batches are in (an aware time converted; a naive one is UTC)."""
    if t.tzinfo is None:
        return t
    return t.astimezone(timezone.utc).replace(tzinfo=None)
