"""A window view's direct inputs, as the manifest (compile time) or the graph (run time) gives
them, and whether each is append-only: a stream must never read a rewritten table again."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Mapping, Optional, Type, TypeVar

from dbt.adapters.window_views.model.config import Emit, Execution

_E = TypeVar("_E", bound=Enum)


class NodeType(str, Enum):
    """The resource types this module tells apart (dbt has more: seeds, snapshots, ...)."""

    MODEL = "model"
    SOURCE = "source"


class Materialized(str, Enum):
    """The materializations whose tables may be append-only (any other rewrites its table)."""

    INCREMENTAL = "incremental"
    WINDOW_VIEW = "window_view"


APPENDING_STRATEGIES = (None, "append")  # an incremental model's strategies that only add rows


def _choice(kind: Type[_E], value: Any) -> Optional[_E]:
    """A config value as its Enum member; None when unset or not one (that model's own
    validation names it)."""
    try:
        return kind(value)
    except ValueError:
        return None


@dataclass(frozen=True)
class Upstream:
    name: str
    resource_type: str  # model | source | seed | snapshot
    materialized: Optional[str] = None
    incremental_strategy: Optional[str] = None
    execution: Optional[Execution] = None
    emit: Optional[Emit] = None

    @classmethod
    def from_node(cls, node: Mapping[str, Any]) -> "Upstream":
        """From {'name', 'resource_type', 'config'}, as macros/_internal/upstream_nodes.sql (run
        time) and compile_checks.upstream_nodes (compile time) give a node."""
        kind, config = node["resource_type"], node.get("config") or {}
        return cls(
            name=node["name"],
            resource_type=getattr(kind, "value", kind),
            materialized=config.get("materialized"),
            incremental_strategy=config.get("incremental_strategy"),
            execution=_choice(Execution, config.get("execution") or Execution.BATCH.value),
            emit=_choice(Emit, config.get("emit") or Emit.ON_UPDATE.value),
        )

    def rewritten_in_place(self) -> Optional[str]:
        """What this input is, when a run may rewrite its files (None: append-only)."""
        if self.resource_type == NodeType.SOURCE:
            return None
        if self.resource_type != NodeType.MODEL:
            return f"a {self.resource_type}"
        if self.materialized == Materialized.INCREMENTAL:
            if self.incremental_strategy in APPENDING_STRATEGIES:
                return None
            return f"a 'incremental' model with incremental_strategy '{self.incremental_strategy}'"
        if self.materialized == Materialized.WINDOW_VIEW:
            if self.execution is Execution.STREAMING and self.emit is Emit.ON_WINDOW_CLOSE:
                return None
            execution = self.execution.value if self.execution else "?"
            emit = self.emit.value if self.emit else "?"
            return f"a 'window_view' model with execution '{execution}' and emit '{emit}'"
        return f"a '{self.materialized}' model"
