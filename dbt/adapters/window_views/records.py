"""The records a streaming window view writes to its checkpoint, each a frozen dataclass with
`to_json` / `from_json`, its keys defined here once: a batch's READY record and its commit (the
same record plus the batch id and run id), the run totals, `model.json`, `inputs.json`, the
rebuild intent and the publish plan inside a READY record. And what one job counts of a micro-batch's new rows
(`NewRowCounts`, not written: late_rows.py counts them, sides.py moves W by them). One record is
kept with a table, not in a checkpoint: an incremental batch window view's `PendingBatches`.

Every record carries RECORD_VERSION. A record of another version (or none) was written by
another version of the plugin, whose state this one does not read: the run fails naming the
file (or table property), with `--full-refresh` as the fix (CheckpointVersionMismatch,
PendingBatchesUnreadable)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Dict, Mapping, NamedTuple, Optional, Tuple, Union

from dbt.adapters.window_views.errors import ModelOutputError, StreamFailure

RECORD_VERSION = 1
VERSION = "version"
BatchId = Union[int, str]  # a Spark micro-batch N, or an idle step "N.k"
Json = Dict[str, Any]  # a record as written: the one untyped form, at the file boundary


class OtherVersion(ValueError):
    """A record of another RECORD_VERSION (None: a record without one)."""

    def __init__(self, found: Any) -> None:
        super().__init__(f"record version {found}, expected {RECORD_VERSION}")
        self.found = found


class CheckpointVersionMismatch(StreamFailure):
    """A checkpoint record written by another version of the plugin."""

    def __init__(self, model: str, path: str, found: Any) -> None:
        written = "without a record version" if found is None else f"with record version {found}"
        super().__init__(
            model,
            f"its checkpoint was written by a different version of the plugin ({written}; this one reads "
            f"version {RECORD_VERSION})",
            f"run `dbt run --full-refresh -s {model}` to rebuild the table and the checkpoint from all input",
            path=path,
        )


class PendingBatchesUnreadable(ModelOutputError):
    """An incremental batch window view's PendingBatches this version cannot read: its batches
    to redo are unknown, so only a full refresh leads back to a known table."""

    def __init__(self, model: str, prop: str, why: str) -> None:
        super().__init__(
            model,
            f"its table's record of unfinished batches (table property {prop}) {why}, so this run "
            "cannot tell which batches an earlier run left to redo",
            f"run `dbt run --full-refresh -s {model}` to recompute every batch from begin",
        )

    @classmethod
    def other_version(cls, model: str, prop: str, found: Any) -> "PendingBatchesUnreadable":
        written = "without a record version" if found is None else f"with record version {found}"
        why = f"was written by a different version of the plugin ({written}; this one reads version {RECORD_VERSION})"
        return cls(model, prop, why)


def _checked(data: Mapping[str, Any]) -> Mapping[str, Any]:
    if data.get(VERSION) != RECORD_VERSION:
        raise OtherVersion(data.get(VERSION))
    return data


class Move(NamedTuple):
    """A staged file (relative to the staging folder) and the table file it becomes."""

    source: str
    target: str
    size: int
    mtime: float


@dataclass(frozen=True)
class PublishPlan:
    """What publishing a batch into one table does (storage.plan_publish): the moves, the table
    files it replaces, and the id of the file-log entry it writes."""

    move: Tuple[Move, ...]
    delete: Tuple[str, ...]
    log: int

    def to_json(self) -> Json:
        return {"move": [list(m) for m in self.move], "delete": list(self.delete), "log": self.log}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "PublishPlan":
        return cls(tuple(Move(*m) for m in data["move"]), tuple(data["delete"]), data["log"])


@dataclass(frozen=True)
class Publish:
    """The publish of a batch: into the table and into the late table."""

    table: PublishPlan
    late: PublishPlan

    def to_json(self) -> Json:
        return {"table": self.table.to_json(), "late": self.late.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Publish":
        return cls(PublishPlan.from_json(data["table"]), PublishPlan.from_json(data["late"]))


@dataclass(frozen=True)
class Arrival:
    """The idle clock of a single-input model: when the last batch with rows was staged and
    the W it reached (idle.py)."""

    at: Optional[int] = None
    watermark: Optional[int] = None

    def to_json(self) -> Json:
        return {"arrival": self.at, "arrival_watermark": self.watermark}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Arrival":
        return cls(data.get("arrival"), data.get("arrival_watermark"))


@dataclass(frozen=True)
class InputClocks:
    """The idle clocks of a model over several inputs: each input's W at its last rows and when
    they arrived (sides.py, idle.py)."""

    watermarks: Mapping[str, int] = field(default_factory=dict)
    arrivals: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> Json:
        return {"input_watermarks": dict(self.watermarks), "input_arrivals": dict(self.arrivals)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "InputClocks":
        return cls(dict(data.get("input_watermarks") or {}), dict(data.get("input_arrivals") or {}))


Clocks = Union[Arrival, InputClocks]


@dataclass(frozen=True)
class RecomputeRecord:
    """Over windows `on_update`: where the next batch recomputes from (state.py). `since`: the
    earliest point over all rows; by partition (`by`), the point the partitions not held back
    share, and where the held-back ones are (`held_at`, their places) with the hours their rows
    lie in (`held_hours`; both None past state.HELD_MAX)."""

    since: Optional[int]
    by: Tuple[str, ...] = ()
    shared: Optional[int] = None
    held_at: Optional[Tuple[int, ...]] = None
    held_hours: Optional[Mapping[str, Tuple[int, ...]]] = None

    def to_json(self) -> Json:
        data: Json = {"recompute_from": self.since}
        if self.by:
            data |= {"recompute_by": list(self.by), "recompute_from_shared": self.shared}
        if self.held_at is not None and self.held_hours is not None:
            data |= {
                "held_back_at": list(self.held_at),
                "held_back_hours": {p: list(h) for p, h in self.held_hours.items()},
            }
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Optional["RecomputeRecord"]:
        if "recompute_from" not in data:
            return None
        hours = data.get("held_back_hours")
        return cls(
            data["recompute_from"],
            tuple(data.get("recompute_by") or ()),
            data.get("recompute_from_shared"),
            tuple(data["held_back_at"]) if data.get("held_back_at") is not None else None,
            {p: tuple(h) for p, h in hours.items()} if hours is not None else None,
        )


@dataclass(frozen=True)
class BatchRecord:
    """A batch's READY record (what it staged and will publish) and, with `batch` and `run_id`
    set, its commit. `state_batch`: the batch whose state folders hold the state after it;
    `state_parts`: earlier batches' folders the state still has (a keyed Top-N's parts, oldest
    first: topn_shapes.py)."""

    watermark: Optional[int]
    state_batch: Optional[str]
    rows_in: int
    late: int
    rows_out: int
    state_rows: int
    clocks: Clocks
    replaced_buckets: Tuple[str, ...] = ()
    recompute: Optional[RecomputeRecord] = None
    idle: bool = False
    publish: Optional[Publish] = None
    batch: Optional[BatchId] = None
    run_id: Optional[str] = None
    state_parts: Tuple[str, ...] = ()
    untimed: int = 0  # of `late`, the rows with a NULL time

    @property
    def state_folders(self) -> Tuple[str, ...]:
        """The folders that hold the state after the batch, oldest first."""
        return (*self.state_parts, self.state_batch) if self.state_batch is not None else ()

    def to_json(self) -> Json:
        return (
            {
                VERSION: RECORD_VERSION,
                "watermark": self.watermark,
                "state_batch": self.state_batch,
                "rows_in": self.rows_in,
                "late": self.late,
                "rows_out": self.rows_out,
                "state_rows": self.state_rows,
                "replaced_buckets": list(self.replaced_buckets),
                "idle": self.idle,
                "publish": self.publish.to_json() if self.publish is not None else None,
                "batch": self.batch,
                "run_id": self.run_id,
                "state_parts": list(self.state_parts),
                "untimed": self.untimed,
            }
            | self.clocks.to_json()
            | (self.recompute.to_json() if self.recompute is not None else {})
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "BatchRecord":
        data = _checked(data)
        clocks: Clocks = InputClocks.from_json(data) if "input_watermarks" in data else Arrival.from_json(data)
        return cls(
            watermark=data["watermark"],
            state_batch=data["state_batch"],
            rows_in=data["rows_in"],
            late=data["late"],
            rows_out=data["rows_out"],
            state_rows=data["state_rows"],
            clocks=clocks,
            replaced_buckets=tuple(data["replaced_buckets"]),
            recompute=RecomputeRecord.from_json(data),
            idle=data["idle"],
            publish=Publish.from_json(data["publish"]) if data["publish"] is not None else None,
            batch=data["batch"],
            run_id=data["run_id"],
            # a record of a release before parts: its state is one folder
            state_parts=tuple(data.get("state_parts", ())),
            untimed=data.get("untimed", 0),  # a record of a release before the count: none counted
        )


@dataclass(frozen=True)
class RunTotals:
    """What a run's commits add up to, for dbt's result line."""

    batches: int = 0
    rows_in: int = 0
    rows_out: int = 0
    late: int = 0
    idle: int = 0
    untimed: int = 0  # of `late`, the rows with a NULL time

    def added(self, batch: BatchRecord) -> "RunTotals":
        return RunTotals(
            self.batches + 1,
            self.rows_in + batch.rows_in,
            self.rows_out + batch.rows_out,
            self.late + batch.late,
            self.idle + int(batch.idle),
            self.untimed + batch.untimed,
        )

    def to_json(self) -> Json:
        return {
            VERSION: RECORD_VERSION,
            "batches": self.batches,
            "rows_in": self.rows_in,
            "rows_out": self.rows_out,
            "late": self.late,
            "idle": self.idle,
            "untimed": self.untimed,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "RunTotals":
        data = _checked(data)
        return cls(
            data["batches"], data["rows_in"], data["rows_out"], data["late"], data["idle"], data.get("untimed", 0)
        )


@dataclass(frozen=True)
class ModelRecord:
    """`model.json`: the model whose state the checkpoint keeps (StreamPlan.fits)."""

    model: str
    fingerprint: str
    sql: str

    def to_json(self) -> Json:
        return {VERSION: RECORD_VERSION, "model": self.model, "fingerprint": self.fingerprint, "sql": self.sql}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ModelRecord":
        data = _checked(data)
        return cls(data["model"], data["fingerprint"], data["sql"])


@dataclass(frozen=True)
class InputIdentity:
    """An input table as a run found it: where its files are and when it was created."""

    table: str
    location: str
    created: str  # as Spark's DESCRIBE EXTENDED gives it


@dataclass(frozen=True)
class InputsRecord:
    """`inputs.json` (input_identity.py): the inputs a stream read, as its last run found them."""

    inputs: Tuple[InputIdentity, ...]

    def to_json(self) -> Json:
        tables = [{"table": i.table, "location": i.location, "created": i.created} for i in self.inputs]
        return {VERSION: RECORD_VERSION, "inputs": tables}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "InputsRecord":
        data = _checked(data)
        return cls(tuple(InputIdentity(i["table"], i["location"], i["created"]) for i in data["inputs"]))


class RebuildStep(str, Enum):
    BUILDING = "building"
    SWAPPING = "swapping"
    SWAPPED = "swapped"


@dataclass(frozen=True)
class RebuildIntent:
    """`rebuild.json` (rebuild.py): a rebuild's step, the slots it goes from and to (each the
    locations' fields), and the columns of the new tables (Spark's schema JSON)."""

    step: RebuildStep
    version: int
    old: Mapping[str, str]
    new: Mapping[str, str]
    schema: str
    late_schema: Optional[str]

    def to_json(self) -> Json:
        return {
            VERSION: RECORD_VERSION,
            "step": self.step.value,
            "slot": self.version,
            "from": dict(self.old),
            "to": dict(self.new),
            "schema": self.schema,
            "late_schema": self.late_schema,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "RebuildIntent":
        data = _checked(data)
        return cls(
            RebuildStep(data["step"]), data["slot"], data["from"], data["to"], data["schema"], data["late_schema"]
        )


@dataclass(frozen=True)
class InputCounts:
    """One input's share of a micro-batch's new rows (a model over several inputs)."""

    rows: int  # late ones included: any row restarts its idle clock
    latest: Optional[int]  # the latest event time of its rows on time, micros


@dataclass(frozen=True)
class NewRowCounts:
    """What one job counted of a micro-batch's new rows."""

    rows: int
    late: int
    tmin: Optional[int]  # the event-time range of the rows on time, micros; None: none on time
    tmax: Optional[int]
    inputs: Tuple[InputCounts, ...] = ()  # per input of a model over several (sides.py)
    held_hit: Optional[Tuple[int, ...]] = None  # state.held_rows_metric's places; None: not counted
    untimed: int = 0  # the late rows with a NULL time


NO_NEW_ROWS = NewRowCounts(0, 0, None, None)


@dataclass(frozen=True)
class PendingBatches:
    """An incremental batch window view's batches a run planned and did not finish (a failed
    batch, or a run that died), by key: the next run redoes them whatever its own range. Kept as
    a table property (plans/batches.RECORD_PROPERTY), written before the batches run where a kill
    could otherwise lose one, and again after."""

    pending: Tuple[str, ...] = ()

    def to_json(self) -> Json:
        return {VERSION: RECORD_VERSION, "pending": list(self.pending)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "PendingBatches":
        """Raises OtherVersion for another version's record, KeyError/TypeError for a malformed one.
        The earlier release's record, unversioned, is this one's shape: it reads as it is."""
        data = data if VERSION not in data and set(data) == {"pending"} else _checked(data)
        pending = data["pending"]
        if not isinstance(pending, list):
            raise TypeError(f"'pending' is {type(pending).__name__}, not a list")
        return cls(tuple(str(k) for k in pending))
