"""Other processes on this machine, by pid: whether one runs, its command line, when it
started (Linux's /proc; `ps` or nothing elsewhere). The run lock, the warm server and the class
archive's builder judge their holders by these."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Optional


def alive(pid: int) -> bool:
    """A process runs with this pid (a zombie, exited but not yet reaped, does not count)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        proc = subprocess.run(["ps", "-p", str(pid), "-o", "command="], capture_output=True, text=True)
        return proc.stdout


def started(pid: int) -> Optional[str]:
    """When the process started (clock ticks since boot, Linux's /proc), which tells a process
    from a later one given its pid again; None where there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[19]  # field 22, after the command name
    except (OSError, IndexError):
        return None
