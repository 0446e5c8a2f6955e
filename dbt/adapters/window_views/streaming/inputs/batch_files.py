"""A micro-batch's late rows read again whole from their files (columns_read.py: the stream reads
only the columns the model reads, the late table keeps whole rows): each input as a table scan
of those files, which Spark prunes by file (`_metadata.file_path`)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from pyspark.sql import functions as F

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.records import BatchId
from dbt.adapters.window_views.storage import paths
from dbt.adapters.window_views.streaming.inputs.columns_read import FILE_PATH


class BatchFiles:
    """The inputs' tables as they are now, each listed once."""

    def __init__(self, spark: Any, plan: StreamPlan, batch_id: BatchId) -> None:
        self.plan = plan
        self.batch_id = batch_id
        sources = list(dict.fromkeys(i.source for i in plan.inputs))
        # a session keeps a table's listing from its last read, and a loader outside Spark's
        # catalog adds files without telling it
        for source in sources:
            spark.catalog.refreshTable(source)
        self.tables = {source: spark.read.table(source) for source in sources}

    def rows(self, files: Sequence[str]) -> Callable[[str], Any]:
        """A table's rows from `files` (Spark's names, as `_metadata.file_path` gives them); fails
        naming the first one the table no longer has."""
        listed = {paths.normalize(f) for table in self.tables.values() for f in table.inputFiles()}
        missing = sorted(f for f in files if paths.normalize(f) not in listed)
        if missing:
            raise gone(self.plan.model, self.batch_id, missing, self.inputs)
        kept = list(files)
        return lambda name: self.tables[name].where(F.col(FILE_PATH).isin(kept))

    @property
    def inputs(self) -> str:
        return ", ".join(self.tables)


def changed(model: str, batch_id: BatchId, files: Sequence[str], what: str) -> StreamFailure:
    """A batch failed by input files that no longer hold what it read (`what`, said before why)."""
    shown = sorted(files)
    return StreamFailure(
        model,
        f"{what}: a file was changed or removed while the batch ran",
        "let the input only grow by new files, and run again: committed micro-batches are kept, this one is redone",
        batch=batch_id,
        path=paths.shown(shown[0]) if shown else None,
    )


def gone(model: str, batch_id: BatchId, files: Sequence[str], inputs: str) -> StreamFailure:
    """A batch failed by input files removed after its stream read them."""
    return changed(model, batch_id, files, f"{len(files)} file(s) of {inputs} that this micro-batch read are gone")
