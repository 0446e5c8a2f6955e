"""One run at a time per checkpoint: a lock file in the checkpoint names its holder.

The lock is published whole and exclusively (a hard link fails when the name exists), so of two runs starting together one gets it and the
other fails at once, naming the holder. A lock left by a run that died is taken over without
manual steps: on the holder's own host when its process is gone, elsewhere when its heartbeat
(refreshed while the run lives) is older than STALE_AFTER. Taking over renames the stale lock
away first: a rename succeeds once, so two runs cannot both take over the same stale lock.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Dict, Optional

HEARTBEAT_SECONDS = 30.0
STALE_AFTER = 300.0  # seconds without heartbeat before another host may take a lock over


class LockHeld(Exception):
    """Another live run holds the lock; `holder` says who."""

    def __init__(self, holder: Dict[str, Any]) -> None:
        super().__init__(describe(holder))
        self.holder = holder


def describe(holder: Dict[str, Any]) -> str:
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(holder.get("started", 0)))
    return f"run {holder.get('run_id', '?')} (host {holder.get('host', '?')}, pid {holder.get('pid', '?')}, since {started})"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def stale(holder: Optional[Dict[str, Any]], now: Optional[float] = None) -> bool:
    """Whether the run that wrote `holder` is surely gone (an unreadable lock is stale too:
    locks are written whole, so only a crash mid-write leaves one)."""
    if not holder:
        return True
    if holder.get("host") == socket.gethostname():
        return not _alive(int(holder.get("pid", -1)))
    return (now or time.time()) - float(holder.get("heartbeat", 0)) > STALE_AFTER


class RunLock:
    def __init__(self, path: Path, run_id: str) -> None:
        self.path = path
        self.me = {"run_id": run_id, "host": socket.gethostname(), "pid": os.getpid()}
        self._stop = threading.Event()
        self._beat: Optional[threading.Thread] = None

    def _read(self) -> Optional[Dict[str, Any]]:
        try:
            return json.loads(self.path.read_text())
        except FileNotFoundError:
            return None
        except ValueError:
            return {}

    def _create(self) -> bool:
        """Publish a complete lock file, only if there is none: written aside, then hard-linked
        into place (link fails when the name exists), so no reader sees a half-written lock."""
        now = time.time()
        tmp = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex}.tmp")
        tmp.write_text(json.dumps({**self.me, "started": now, "heartbeat": now}))
        try:
            os.link(tmp, self.path)
        except FileExistsError:
            return False
        finally:
            tmp.unlink()
        return True

    def acquire(self) -> None:
        """Take the lock or raise LockHeld (PermissionError etc. pass through)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(3):
            if self._create():
                self._beat = threading.Thread(target=self._heartbeat, daemon=True, name=f"lock {self.path}")
                self._beat.start()
                return
            holder = self._read()
            if holder is None:
                continue  # released meanwhile
            if not stale(holder):
                raise LockHeld(holder)
            try:
                os.rename(self.path, self.path.with_name(f".{self.path.name}.stale.{uuid.uuid4().hex}"))
            except FileNotFoundError:
                pass  # another run took it over first; try again
        holder = self._read()
        raise LockHeld(holder or {})

    def _heartbeat(self) -> None:
        while not self._stop.wait(HEARTBEAT_SECONDS):
            holder = self._read()
            if not holder or holder.get("run_id") != self.me["run_id"]:
                return
            tmp = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex}.tmp")
            tmp.write_text(json.dumps({**holder, "heartbeat": time.time()}))
            os.replace(tmp, self.path)

    def release(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
        holder = self._read()
        if holder and holder.get("run_id") == self.me["run_id"]:
            self.path.unlink(missing_ok=True)
        for old in self.path.parent.glob(f".{self.path.name}.stale.*"):
            old.unlink(missing_ok=True)

    def __enter__(self) -> "RunLock":
        self.acquire()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()
