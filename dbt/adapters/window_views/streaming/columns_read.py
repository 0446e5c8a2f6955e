"""The input columns a stream reads, and where. Spark hands a micro-batch to foreachBatch as rows
already read (a LogicalRDD): no column pruning reaches the files, and every job over the batch
reads its rows again. So the stream's source reads only what the batch's count needs and each
row's file; the model's jobs read the batch's files again as a table (batch_files.py), which
Spark prunes to the columns each job reads (those the model's SQL reads, found here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from pyspark.errors import PySparkException
from pyspark.sql import functions as F
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.pushdown_projections import pushdown_projections
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import traverse_scope

from dbt.adapters.window_views import analysis
from dbt.adapters.window_views.errors import AnalysisError
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.streaming.plan import StreamPlan

# a pruned input row's file: the batch's rows are read again from it, the late ones whole
FILE = internal("file")
FILE_PATH = "_metadata.file_path"


def _reads(plan: StreamPlan) -> List[Tuple[str, List[str]]]:
    """The SQL the stream runs over input rows, each with the views it reads the inputs from (in
    the inputs' order): a sliced aggregate's partials step (its one input in `rows_view`), else
    the model SQL and its prefix-state form. A sliced aggregate's model as written runs over
    input rows only to describe the output (runner._output_schema), over all columns."""
    if plan.slicing is not None:
        return [(plan.slicing.partial_sql, [plan.slicing.rows_view])]
    views = [i.view for i in plan.inputs]
    return [(sql, views) for sql in dict.fromkeys((plan.sql, plan.output_sql))]


def _columns(sql: str, views: Mapping[str, Sequence[str]]) -> Optional[Dict[str, Set[str]]]:
    """Per view, the columns `sql` reads of it (lower case); None when that cannot be known for
    certain: SQL sqlglot does not resolve whole, or a star it leaves unexpanded."""
    schema: Dict[str, object] = {view: {c: "string" for c in columns} for view, columns in views.items()}
    try:
        qualified = qualify(analysis.parse(sql), schema=schema, dialect="spark", validate_qualify_columns=True)
        # a subquery's columns no outer query reads are dropped: `select *` of a window TVF reads them
        tree = pushdown_projections(qualified)
    except (SqlglotError, AnalysisError):
        return None
    if any(not isinstance(star.parent, exp.Count) for star in tree.find_all(exp.Star)):
        return None
    read: Dict[str, Set[str]] = {view: set() for view in views}
    for scope in traverse_scope(tree):
        for column in scope.columns:
            source = scope.sources.get(column.table)
            if isinstance(source, exp.Table) and source.name.lower() in read:
                read[source.name.lower()].add(column.name.lower())
    return read


def columns_read(plan: StreamPlan, columns: Sequence[Sequence[str]]) -> Optional[List[List[str]]]:
    """Per input (`columns`: each input's own, in order), the columns the stream needs of it, in
    the input's order: those its SQL reads and the watermark column. None: all of them."""
    needed: List[Set[str]] = [{plan.watermark.column.lower()} for _ in plan.inputs]
    for sql, views in _reads(plan):
        read = _columns(sql, {view.lower(): cols for view, cols in zip(views, columns)})
        if read is None:
            return None
        for names, view in zip(needed, views):
            names |= read[view.lower()]
    return [[c for c in cols if c.lower() in names] for names, cols in zip(needed, columns)]


def counted_columns(plan: StreamPlan) -> Set[str]:
    """What a batch's count reads of the new rows (lower case): their event time, and an over
    window's PARTITION BY columns (which held-back partitions they reach: state.held_rows_metric)."""
    return {c.lower() for c in (plan.watermark.column, *(plan.over.partitioned_by if plan.over else ()))}


@dataclass(frozen=True)
class Pruning:
    """Per input (in the plan's order), the columns the stream's source reads (`counted`: what
    the batch's count needs) and those the model's jobs read (`needed`), from the batch's files
    again when more (batch_files.py)."""

    counted: Tuple[Tuple[str, ...], ...]
    needed: Tuple[Tuple[str, ...], ...]

    @property
    def reads_again(self) -> bool:
        return self.counted != self.needed


def pruned(plan: StreamPlan, read: Callable[[str], Any]) -> Optional[Pruning]:
    """How a stream of the inputs `read` gives prunes them; None: not at all, as their rows have
    no file (not a file source): the batch's rows are then read once, whole."""
    frames = {i.source: read(i.source) for i in plan.inputs}
    try:  # analysed now (Spark Connect analyses lazily): a source without files fails here
        [frame.select(F.col(FILE_PATH)).schema for frame in frames.values()]
    except PySparkException:
        return None
    columns = [frames[i.source].columns for i in plan.inputs]
    needed = columns_read(plan, columns) or columns
    counted = counted_columns(plan)
    return Pruning(tuple(tuple(c for c in cols if c.lower() in counted) for cols in columns), tuple(map(tuple, needed)))


def selected(plan: StreamPlan, read: Callable[[str], Any], columns: Sequence[Sequence[str]]) -> Callable[[str], Any]:
    """`read`, each input (in the plan's order) read as its `columns` and each row's file (FILE)."""
    frames = {
        i.source: read(i.source).select(*[f"`{c}`" for c in cols], F.col(FILE_PATH).alias(FILE))
        for i, cols in zip(plan.inputs, columns)
    }
    return frames.__getitem__


def for_count(plan: StreamPlan, read: Callable[[str], Any], pruning: Optional[Pruning]) -> Callable[[str], Any]:
    """`read` (an input's stream) as the stream's source reads it: the columns the batch's count
    needs, with each row's file; every column, once, when not pruned."""
    return read if pruning is None else selected(plan, read, pruning.counted)


def for_jobs(plan: StreamPlan, read: Callable[[str], Any], pruning: Optional[Pruning]) -> Callable[[str], Any]:
    """`read` (an input's table) as the model's jobs read it: the columns they need, with each
    row's file."""
    return read if pruning is None else selected(plan, read, pruning.needed)


def input_columns(rows: Any) -> List[str]:
    """The input's columns of a batch's `rows`, as the reader gave them (without FILE)."""
    return [c for c in rows.columns if c != FILE]
