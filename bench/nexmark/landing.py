"""The landing folders, one per kind, and their files: each written under a hidden temporary name
(a leading dot, which Spark's file listing skips) and renamed into place when complete, so a reader
never sees half a file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import TracebackType
from typing import Dict, Optional, Sequence, Type

import pyarrow as pa
import pyarrow.parquet as pq

from bench.nexmark.config import ConfigError, Landing
from bench.nexmark.event_kind import EventKind

TEMPORARY_SUFFIX = ".tmp"


def prepare(landing: Landing, kinds: Sequence[EventKind]) -> None:
    """Make the kind folders; refuse ones holding files unless `overwrite`, which empties them."""
    if landing.out.exists() and not landing.out.is_dir():
        raise ConfigError(f"--out {landing.out} is a file; pass a folder to land the events in")
    for kind in kinds:
        folder = landing.out / kind.name
        if folder.is_dir() and any(folder.iterdir()):
            if not landing.overwrite:
                raise ConfigError(
                    f"--out {landing.out} already holds {kind.name}/ files from an earlier run; pass --overwrite "
                    "to replace them, or another --out"
                )
            shutil.rmtree(folder)
        folder.mkdir(parents=True, exist_ok=True)


def file_name(number: int, deliveries: int) -> str:
    """The landed name of delivery `number` (from 1): zero-padded so that names sort as deliveries do."""
    return f"delivery-{number:0{max(5, len(str(deliveries)))}d}.parquet"


class DeliveryFiles:
    """One parquet file per kind for one delivery, written piece by piece and renamed into place one
    after another on a clean exit; on an error the temporary files are removed and nothing lands."""

    def __init__(self, landing: Landing, number: int, kinds: Sequence[EventKind]) -> None:
        name = file_name(number, landing.deliveries)
        self.paths: Dict[str, Path] = {kind.name: landing.out / kind.name / name for kind in kinds}
        self.rows: Dict[str, int] = {kind.name: 0 for kind in kinds}
        self._kinds = list(kinds)
        self._writers: Dict[str, pq.ParquetWriter] = {}

    def _temporary(self, kind: EventKind) -> Path:
        path = self.paths[kind.name]
        return path.with_name("." + path.name + TEMPORARY_SUFFIX)

    def __enter__(self) -> DeliveryFiles:
        for kind in self._kinds:
            self._writers[kind.name] = pq.ParquetWriter(self._temporary(kind), kind.schema, compression="snappy")
        return self

    def write(self, kind: EventKind, table: pa.Table) -> None:
        if table.num_rows:
            self._writers[kind.name].write_table(table)
            self.rows[kind.name] += table.num_rows

    def __exit__(
        self, error_type: Optional[Type[BaseException]], error: Optional[BaseException], trace: Optional[TracebackType]
    ) -> None:
        for writer in self._writers.values():
            writer.close()
        for kind in self._kinds:
            if error is None:
                os.replace(self._temporary(kind), self.paths[kind.name])
            else:
                self._temporary(kind).unlink(missing_ok=True)
