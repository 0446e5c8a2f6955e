"""One run at a time per checkpoint: a lock file in the checkpoint names its holder.

The lock is published whole and only where there is none (`FileSystem.create_new`: a hard link
on local disk, a create without overwrite on HDFS, ABFS and GCS), then read back: on a store
whose conditional create is check-then-put (S3 without conditional writes) two runs starting in
the same instant can both write it, and the one whose lock was overwritten sees so and fails.
Of two runs starting together one gets it and the other fails at once, naming the holder. A lock
left by a run that died is taken over without manual steps: on the holder's own host when its
process is gone (or its pid now belongs to a process started later), elsewhere when its heartbeat (refreshed while the run lives) is older than
STALE_AFTER. No rename is needed (object stores have no atomic one): a run takes a stale lock
over only after it created the takeover marker named after that holder, which succeeds once,
so two runs cannot both take over the same stale lock.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from dbt.adapters.window_views.spark import processes
from dbt.adapters.window_views.storage import paths
from dbt.adapters.window_views.storage.filesystems import FileSystem

HEARTBEAT_SECONDS = 30.0
STALE_AFTER = 300.0  # seconds without heartbeat before another host may take a lock over


@dataclass(frozen=True)
class Holder:
    """What a lock file says of the run holding it (a torn file: the defaults, `torn`)."""

    run_id: str = ""
    host: str = "?"
    pid: int = -1
    pid_start: Optional[str] = None  # when its process started (None: unknown, the pid alone decides)
    started: float = 0
    heartbeat: float = 0

    @property
    def torn(self) -> bool:
        return not self.run_id

    def to_json(self) -> bytes:
        return json.dumps(dataclasses.asdict(self)).encode()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Holder":
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in known})


def _parsed(raw: bytes) -> Holder:
    """A lock file's holder; a torn one (a crash mid-write): `Holder()`."""
    try:
        data = json.loads(raw.decode())
    except ValueError:
        return Holder()
    return Holder.from_json(data) if isinstance(data, dict) else Holder()


class LockHeld(Exception):
    """Another live run holds the lock; `holder` says who."""

    def __init__(self, holder: Holder) -> None:
        super().__init__(describe(holder))
        self.holder = holder


def describe(holder: Holder) -> str:
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(holder.started))
    return f"run {holder.run_id or '?'} (host {holder.host}, pid {holder.pid if holder.pid >= 0 else '?'}, since {started})"


def stale(holder: Optional[Holder], now: Optional[float] = None) -> bool:
    """Whether the run that wrote `holder` is surely gone (an unreadable lock is stale too:
    locks are written whole, so only a crash mid-write leaves one)."""
    if holder is None or holder.torn:
        return True
    if holder.host == socket.gethostname():
        if not processes.alive(holder.pid):
            return True
        # a busy host reuses pids: a live process that started after the holder is another one
        return holder.pid_start is not None and processes.started(holder.pid) not in (None, holder.pid_start)
    return (now or time.time()) - float(holder.heartbeat) > STALE_AFTER


class RunLock:
    def __init__(self, fs: FileSystem, path: str, run_id: str) -> None:
        self.fs = fs
        self.path = paths.normalize(path)
        self.me = Holder(run_id, socket.gethostname(), os.getpid(), processes.started(os.getpid()))
        self._stop = threading.Event()
        self._beat: Optional[threading.Thread] = None

    def _read(self) -> Optional[Holder]:
        try:
            return _parsed(self.fs.read_bytes(self.path))
        except FileNotFoundError:
            return None

    def _started(self) -> bytes:
        now = time.time()
        return dataclasses.replace(self.me, started=now, heartbeat=now).to_json()

    def _create(self) -> bool:
        """Publish a complete lock file, only if there is none, and check it is ours."""
        if not self.fs.create_new(self.path, self._started()):
            return False
        holder = self._read()
        return holder is not None and holder.run_id == self.me.run_id

    def _marker(self, holder: Holder) -> str:
        token = f"{holder.run_id or 'torn'}-{holder.started}"
        return paths.join(paths.parent(self.path), f".{paths.name(self.path)}.takeover.{token}")

    def acquire(self) -> None:
        """Take the lock or raise LockHeld (PermissionError etc. pass through)."""
        self.fs.mkdirs(paths.parent(self.path))
        for _ in range(3):
            if self._create():
                self._beat = threading.Thread(target=self._heartbeat, daemon=True, name=f"lock {self.path}")
                self._beat.start()
                return
            holder = self._read()
            if holder is None:
                continue  # released meanwhile
            if holder.run_id == self.me.run_id or not stale(holder):
                raise LockHeld(holder)
            # the takeover marker of this holder is created once: only its creator removes the lock
            # (a marker whose creator died too is itself stale, and removed)
            marker = self._marker(holder)
            if self.fs.create_new(marker, self._started()):
                if self._read() == holder:
                    self.fs.delete(self.path)
            else:
                try:
                    taker: Optional[Holder] = _parsed(self.fs.read_bytes(marker))
                except FileNotFoundError:
                    taker = None
                if stale(taker):
                    self.fs.delete(marker)
        raise LockHeld(self._read() or Holder())

    def _heartbeat(self) -> None:
        while not self._stop.wait(HEARTBEAT_SECONDS):
            holder = self._read()
            if holder is None or holder.run_id != self.me.run_id:
                return
            self.fs.write_bytes(self.path, dataclasses.replace(holder, heartbeat=time.time()).to_json())

    def release(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
        holder = self._read()
        if holder is not None and holder.run_id == self.me.run_id:
            self.fs.delete(self.path)
        folder, prefix = paths.parent(self.path), f".{paths.name(self.path)}.takeover."
        for old in self.fs.list(folder):
            if old.name.startswith(prefix):
                self.fs.delete(paths.join(folder, old.name))

    def __enter__(self) -> "RunLock":
        self.acquire()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()
