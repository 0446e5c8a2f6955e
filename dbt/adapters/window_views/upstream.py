"""A window view's direct inputs, as the manifest (compile time) or the graph (run time) gives
them, and whether each is append-only: a stream must never read a rewritten table again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional


@dataclass(frozen=True)
class Upstream:
    name: str
    resource_type: str  # model | source | seed | snapshot
    materialized: Optional[str] = None
    incremental_strategy: Optional[str] = None
    execution: Optional[str] = None
    emit: Optional[str] = None

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
            execution=config.get("execution"),
            emit=config.get("emit"),
        )

    def rewritten_in_place(self) -> Optional[str]:
        """What this input is, when a run may rewrite its files (None: append-only)."""
        if self.resource_type == "source":
            return None
        if self.resource_type != "model":
            return f"a {self.resource_type}"
        if self.materialized == "incremental":
            if self.incremental_strategy in (None, "append"):
                return None
            return f"a 'incremental' model with incremental_strategy '{self.incremental_strategy}'"
        if self.materialized == "window_view":
            if self.execution == "streaming" and self.emit == "on_window_close":
                return None
            return (
                f"a 'window_view' model with execution '{self.execution or 'batch'}' "
                f"and emit '{self.emit or 'on_update'}'"
            )
        return f"a '{self.materialized}' model"
