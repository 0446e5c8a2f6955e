"""A filesystem with an object store's semantics over a local directory, for the crash tests:
installed in a process (`install()`), the streaming runner's file operations on local paths get
S3's rules instead of POSIX's, while Spark itself still reads and writes the same directories.

- a PUT is atomic: a written file appears whole or not at all (kept aside until complete);
- a conditional PUT (If-None-Match: *, which S3, GCS and ADLS have) creates only a missing key;
- there is no rename: a move is a copy (the target appears whole), then a delete of the source,
  and between the two both are visible; with `DBT_WINDOW_VIEWS_FAULT=copied` the process dies
  there (faults.py: os._exit(137), as kill -9 would) at the first move of a table's (not a late
  table's) file, leaving the copy and its source;
- there are no directories: a "directory" exists while a key is under it; mkdirs creates
  nothing, an empty directory is not listed, and deleting one deletes its files one by one.

Every operation is also counted by kind (`ObjectStoreFileSystem.calls`), so a test can check
that the runner really went through it.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections import Counter
from pathlib import Path
from typing import List

from dbt.adapters.window_views.storage import filesystems
from dbt.adapters.window_views.storage.filesystems import Entry, FileSystem
from tests.support import faults

PENDING = ".objectstore-put-"  # an upload in flight: not a key yet, so never listed


class ObjectStoreFileSystem(FileSystem):
    def __init__(self) -> None:
        self.calls: Counter = Counter()

    def _has_keys(self, path: Path) -> bool:
        return path.is_dir() and any(p.is_file() and not p.name.startswith(PENDING) for p in path.rglob("*"))

    def _put(self, location: str, data: bytes, only_new: bool) -> bool:
        path = Path(location)
        path.parent.mkdir(parents=True, exist_ok=True)
        pending = path.with_name(f"{PENDING}{uuid.uuid4().hex}")
        pending.write_bytes(data)
        try:
            if only_new:
                try:
                    os.link(pending, path)
                except FileExistsError:
                    return False
            else:
                os.replace(pending, path)
        finally:
            pending.unlink(missing_ok=True)
        return True

    def read_bytes(self, location: str) -> bytes:
        self.calls["read"] += 1
        path = Path(location)
        if not path.is_file():
            raise FileNotFoundError(2, "NoSuchKey", location)
        return path.read_bytes()

    def write_bytes(self, location: str, data: bytes) -> None:
        self.calls["put"] += 1
        self._put(location, data, only_new=False)

    def create_new(self, location: str, data: bytes) -> bool:
        self.calls["conditional_put"] += 1
        return self._put(location, data, only_new=True)

    def exists(self, location: str) -> bool:
        self.calls["head"] += 1
        path = Path(location)
        return path.is_file() or self._has_keys(path)

    def is_dir(self, location: str) -> bool:
        self.calls["list"] += 1
        return self._has_keys(Path(location))

    def list(self, location: str) -> List[Entry]:
        self.calls["list"] += 1
        path = Path(location)
        if not path.is_dir():
            return []
        found = []
        for child in path.iterdir():
            if child.is_file() and not child.name.startswith(PENDING):
                found.append(Entry(child.name, False, child.stat().st_mtime, child.stat().st_size))
            elif self._has_keys(child):
                found.append(Entry(child.name, True, child.stat().st_mtime))
        return sorted(found, key=lambda e: e.name)

    def delete(self, location: str) -> None:
        self.calls["delete"] += 1
        path = Path(location)
        if path.is_file():
            path.unlink()
        elif path.is_dir():
            for key in sorted(p for p in path.rglob("*") if p.is_file()):  # one key at a time
                key.unlink()
            shutil.rmtree(path, ignore_errors=True)

    def mkdirs(self, location: str) -> None:
        self.calls["mkdirs"] += 1  # no directories: nothing to create

    def move(self, source: str, target: str) -> None:
        self.calls["copy"] += 1
        src = Path(source)
        if not src.is_file():
            raise FileNotFoundError(2, "NoSuchKey", source)
        self._put(target, src.read_bytes(), only_new=False)
        if not Path(target).parent.name.endswith("__late"):
            faults.crash_at("copied", faults.model_in(target))
        self.calls["delete"] += 1
        src.unlink()


def install() -> ObjectStoreFileSystem:
    """Local locations get object-store semantics in this process (idempotent)."""
    if not isinstance(filesystems.LOCAL, ObjectStoreFileSystem):
        filesystems.LOCAL = ObjectStoreFileSystem()
    return filesystems.LOCAL


def uninstall() -> None:
    filesystems.LOCAL = filesystems.LocalFileSystem()
