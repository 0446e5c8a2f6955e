"""Every error a window view shows its user, in one module.

Three kinds reach dbt, each naming the model and what to do:
- `ModelConfigError` and `ModelSqlError` are CompilationErrors: the model cannot run as written
  (a config key, the SQL, an upstream). They are raised while the plan is built, so `dbt compile`
  and the materialization fail the same way, before anything runs.
- `ModelOutputError` is a DbtRuntimeError: the model's output columns, which only Spark can
  tell, do not fit the execution; the runner raises it before anything runs.
- `ModelDataError` is a DbtRuntimeError: a batch build whose input rows, as the model reads them,
  cannot give its result (every time NULL); raised before the build writes.
- `StreamFailure` is a DbtRuntimeError: a streaming run that met something at run time (its
  checkpoint, its files, Spark) names the micro-batch and the file where it can, and how to recover.
- `MacroArgumentError` is a CompilationError: a window macro's argument (query/window_arguments.py),
  naming the macro and the argument, as dbt compiles the model.

The pure modules (analysis, intervals, panes, tvf) raise plain `ValueError` subclasses without a
model name; the plan wraps them into the errors above.
"""

from __future__ import annotations

from typing import Optional, Union

from dbt_common.exceptions import CompilationError, DbtRuntimeError


class ModelConfigError(CompilationError):
    """A config key of a window_view model with a value it cannot run with."""

    def __init__(self, model: str, key: str, problem: str, fix: str, label: str = "window_view model") -> None:
        self.model, self.key = model, key
        super().__init__(f"{label} '{model}': config '{key}' {problem}; {fix}")


class ModelSqlError(CompilationError):
    """A window_view model whose SQL, windows or inputs the chosen execution cannot honour."""

    def __init__(self, model: str, problem: str, fix: str, label: str = "window_view model") -> None:
        self.model = model
        fix = fix if fix.startswith("fix: ") else f"fix: {fix}"
        super().__init__(f"{label} '{model}': {problem}; {fix}")

    @classmethod
    def from_analysis(cls, model: str, exc: ValueError, fix: str) -> "ModelSqlError":
        """An analysis error (whose text may end in its own "; fix: ...") for this model."""
        problem, _, own_fix = str(exc).partition("; fix: ")
        return cls(model, problem, own_fix or fix)


class MacroArgumentError(CompilationError):
    """A window macro's argument it cannot render; the message names the macro and the argument
    (`window_views.hop: argument 'slide' ...`), as dbt compiles the model."""


class ModelOutputError(DbtRuntimeError):
    """A window_view model whose output columns, which only Spark can tell, the execution cannot
    honour: found as a run starts. Not a CompilationError, which dbt prints with the stack of
    macros it was raised in (the materialization's), not the model's words alone."""

    def __init__(self, model: str, problem: str, fix: str) -> None:
        self.model = model
        super().__init__(f"window_view model '{model}': {problem}; fix: {fix}")


class ModelDataError(DbtRuntimeError):
    """A window_view model whose input rows, as the model reads them, cannot give the result it
    asks for (a time column NULL on every row): found by a batch build before it writes."""

    def __init__(self, model: str, problem: str, fix: str) -> None:
        self.model = model
        super().__init__(f"window_view model '{model}': {problem}; fix: {fix}")


class StreamFailure(DbtRuntimeError):
    """A streaming run stopped by its state, its files or Spark; nothing committed is lost."""

    def __init__(
        self, model: str, problem: str, recovery: str, batch: Union[int, str, None] = None, path: Optional[str] = None
    ) -> None:
        self.model, self.batch, self.path = model, batch, path
        where = "".join([f" (micro-batch {batch})" if batch is not None else "", f" at {path}" if path else ""])
        super().__init__(f"window_view model '{model}'{where}: {problem}; fix: {recovery}")


class AnalysisError(ValueError):
    """SQL the plugin cannot analyse or cannot run with the requested semantics."""


class IntervalError(ValueError):
    """An interval that is not '<n> <unit>' or not allowed where it is used."""


class StorageError(ValueError):
    """A location the streaming runner cannot manage."""
