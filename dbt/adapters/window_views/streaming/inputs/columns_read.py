"""The input columns a stream's SQL reads, so its source reads only those: Spark hands a
micro-batch to foreachBatch as rows already read (a LogicalRDD), so no column pruning reaches
the files, and every job over the batch would read every column of them again."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from pyspark.errors import PySparkException
from pyspark.sql import functions as F
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.pushdown_projections import pushdown_projections
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import traverse_scope

from dbt.adapters.window_views.errors import AnalysisError
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.plans.stream import StreamPlan

# a pruned input row's file: the late rows, which the late table keeps whole, are read again from it
# (batch_files.py)
FILE = internal("file")
FILE_PATH = "_metadata.file_path"


def _reads(plan: StreamPlan) -> List[Tuple[exp.Expression, List[str]]]:
    """The SQL the stream runs over input rows, each with the views it reads the inputs from (in
    the inputs' order): a sliced aggregate's partials step (its one input in `rows_view`), else
    the model SQL and its prefix-state form. A sliced aggregate's model as written runs over
    input rows only to describe the output (runner._output_schema), over all columns."""
    if plan.slicing is not None:
        return [(plan.slicing.partial, [plan.slicing.rows_view])]
    views = [i.view for i in plan.inputs]
    return [(query, views) for query in (plan.query, plan.output) if query is not None]


def _columns(query: exp.Expression, views: Mapping[str, Sequence[str]]) -> Optional[Dict[str, Set[str]]]:
    """Per view, the columns `query` reads of it (lower case); None when that cannot be known for
    certain: a query sqlglot does not resolve whole, or a star it leaves unexpanded."""
    schema: Dict[str, object] = {view: {c: "string" for c in columns} for view, columns in views.items()}
    try:
        qualified = qualify(query.copy(), schema=schema, dialect="spark", validate_qualify_columns=True)
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
    for query, views in _reads(plan):
        read = _columns(query, {view.lower(): cols for view, cols in zip(views, columns)})
        if read is None:
            return None
        for names, view in zip(needed, views):
            names |= read[view.lower()]
    return [[c for c in cols if c.lower() in names] for names, cols in zip(needed, columns)]


def reader(plan: StreamPlan, read: Callable[[str], Any]) -> Callable[[str], Any]:
    """`read` (a table, or its stream), each input read as the columns the stream needs and its
    file (FILE); as it is when all are needed, or its rows have no file (not a file source)."""
    frames = {i.source: read(i.source) for i in plan.inputs}
    needed = columns_read(plan, [frames[i.source].columns for i in plan.inputs])
    if needed is None or all(len(n) == len(frames[i.source].columns) for i, n in zip(plan.inputs, needed)):
        return frames.__getitem__
    try:
        pruned = {
            i.source: frames[i.source].select(*[f"`{c}`" for c in n], F.col(FILE_PATH).alias(FILE))
            for i, n in zip(plan.inputs, needed)
        }
        # analysed now (Spark Connect analyses lazily): a source without files fails here
        [frame.schema for frame in pruned.values()]
    except PySparkException:
        return frames.__getitem__
    return pruned.__getitem__


def input_columns(rows: Any) -> List[str]:
    """The input's columns of a batch's `rows`, as the reader gave them (without FILE)."""
    return [c for c in rows.columns if c != FILE]
