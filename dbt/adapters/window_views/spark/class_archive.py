"""A class-data archive of Spark's classes for the JVMs the plugin starts on this machine (the
embedded session's, a warm server's): Java's AppCDS maps the classes a Spark start loads from one
file instead of reading and verifying them from ~280 jars, which takes seconds off every cold
dbt command (bench/README.md, bench/history.md).

The archive is built once per Java and Spark install, in the background, by a JVM of its own
(`archive_builder.main`) that dumps it at its exit under a
temporary name; it is renamed into place only after that JVM exited cleanly, so a JVM never maps
a torn archive (one would crash it). Until then a JVM starts as it always did. An archive of
another Java or Spark is never picked (its name holds a hash of both); the JVM itself still checks
it and starts without it, quietly, on any mismatch.

WINDOW_VIEWS_JVM_CACHE: where the archives live (default: the user's cache directory), or `off`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Mapping, Optional

import pyspark
from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.window_views.spark import processes

logger = AdapterLogger("WindowViews")

CACHE_ENV = "WINDOW_VIEWS_JVM_CACHE"
DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
OFF = "off"
# a JVM that maps an archive of another Java or classpath says so on stdout; it starts as usual
QUIET = "-Xlog:cds=off,cds+dynamic=off"
BUILD_TIMEOUT = 600  # seconds the builder's JVM gets; a builder older than this is gone
RETRY_AFTER = 24 * 3600  # a failed build is not retried for a day: it would fail the same way
UNUSED_FOR = 30 * 24 * 3600  # another install's archive untouched this long is removed by a build
# not `-m`: the package imports this module first, and runpy warns of that on every build
BUILDER = "import sys; from dbt.adapters.window_views.spark import archive_builder; sys.exit(archive_builder.main())"


@dataclass(frozen=True)
class Archive:
    """The archive for this machine's Java and Spark: `path` once built, and the files of its
    build (`building`: the builder's lock, `failed`: why the last build failed)."""

    path: Path

    @property
    def building(self) -> Path:
        return self.path.with_name(self.path.name + ".building")

    @property
    def failed(self) -> Path:
        return self.path.with_name(self.path.name + ".failed")

    def partial(self, pid: int) -> Path:
        """Where the builder's JVM dumps the archive, renamed to `path` once that JVM exited."""
        return self.path.with_name(f"{self.path.name}.{pid}.tmp")


@dataclass(frozen=True)
class BuildLock:
    """What the `.building` file holds: the builder's pid and when it started (epoch seconds)."""

    pid: int
    started: float

    def to_json(self) -> str:
        return json.dumps({"pid": self.pid, "started": self.started})

    @classmethod
    def from_json(cls, text: str) -> "BuildLock":
        record = json.loads(text)
        return cls(int(record["pid"]), float(record["started"]))


def cache_dir() -> Optional[Path]:
    """Where archives live; None when turned off."""
    chosen = os.environ.get(CACHE_ENV, "").strip()
    if chosen.lower() == OFF:
        return None
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dbt-window-views" / "jvm"


def java_binary() -> Optional[Path]:
    """The `java` a Spark start runs (spark-class: JAVA_HOME's, else the one on PATH)."""
    java_home = os.environ.get("JAVA_HOME")
    found = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    return Path(found).resolve() if found and Path(found).exists() else None


def spark_jars() -> Path:
    return Path(pyspark.__file__).parent / "jars"


def install_key(java: Path, jars: Path) -> str:
    """What the archive depends on: the Java binary and the jars on Spark's classpath."""
    digest = hashlib.sha256()
    for path in [java, *sorted(jars.glob("*.jar"))]:
        stat = path.stat()
        digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def archive() -> Optional[Archive]:
    """This install's archive (built or not); None when turned off or Java is not found."""
    where, java = cache_dir(), java_binary()
    # Spark splits a driver's Java options at whitespace: a path with a space would break the start
    if where is None or java is None or not spark_jars().is_dir() or any(c.isspace() for c in str(where)):
        return None
    return Archive(where / f"spark-{pyspark.__version__}-{install_key(java, spark_jars())}.jsa")


def jvm_options(start_build: bool = True) -> str:
    """JVM options for a Spark driver started on this machine: the archive when it is built;
    otherwise none, and (`start_build`) a background build unless one runs or recently failed."""
    try:
        found = archive()
        if found is None:
            return ""
        if found.path.is_file():
            _touch(found.path)
            return f"-XX:SharedArchiveFile={found.path} {QUIET}"
        if start_build and start_builder(found) is not None:
            logger.info(building_notice(found))
    except OSError:  # a cache directory that cannot be read or written: start as before
        pass
    return ""


def building_notice(found: Archive) -> str:
    """Said once, when a build starts: what runs in the background, where it goes, how to stop it."""
    return (
        f"Building a class archive of Spark in the background ({found.path.parent}, about 225 MB) so that "
        f"later commands start Spark faster; {CACHE_ENV}=off turns it off"
    )


def with_archive(params: Mapping[str, str]) -> Dict[str, str]:
    """Spark settings of a driver JVM started here, with the archive's options unless they name
    an archive of their own."""
    current = params.get(DRIVER_JAVA_OPTIONS, "")
    extra = "" if "SharedArchiveFile" in current or "ArchiveClassesAtExit" in current else jvm_options()
    return {**params, DRIVER_JAVA_OPTIONS: f"{current} {extra}".strip()} if extra else dict(params)


def start_builder(found: Archive) -> Optional[int]:
    """Start the background build unless one runs (its lock) or one failed within RETRY_AFTER;
    returns the builder's pid, or None when none was started."""
    found.path.parent.mkdir(parents=True, exist_ok=True)
    if found.failed.exists() and time.time() - found.failed.stat().st_mtime < RETRY_AFTER:
        return None
    if not _take_lock(found):
        return None
    env = {**os.environ, CACHE_ENV: str(found.path.parent)}
    log = open(found.path.with_name(found.path.name + ".log"), "w")  # noqa: SIM115 (the child's)
    with log:
        proc = subprocess.Popen(
            [sys.executable, "-c", BUILDER, "build", str(found.path)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # outlives the dbt command that started it, and its Ctrl-C
        )
    found.building.write_text(BuildLock(proc.pid, time.time()).to_json())
    return proc.pid


def _take_lock(found: Archive) -> bool:
    """Create the `.building` file, replacing a builder's that is gone; False if one runs."""
    for _ in range(2):
        try:
            fd = os.open(found.building, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if _builder_alive(found):
                return False
            found.building.unlink(missing_ok=True)
            continue
        os.write(fd, BuildLock(os.getpid(), time.time()).to_json().encode())
        os.close(fd)
        return True
    return False


def _builder_alive(found: Archive) -> bool:
    try:
        lock = BuildLock.from_json(found.building.read_text())
    except (OSError, ValueError, KeyError):  # being written, or torn: judged by its age
        try:
            return time.time() - found.building.stat().st_mtime < 5
        except OSError:
            return False
    # a builder this process started and that ended is a zombie: not alive
    return time.time() - lock.started < BUILD_TIMEOUT and processes.alive(lock.pid)


def _touch(path: Path) -> None:
    """Mark the archive used (a build removes others unused for UNUSED_FOR), at most daily."""
    if time.time() - path.stat().st_mtime > 24 * 3600:
        os.utime(path)


def prune(found: Archive) -> None:
    """Remove other installs' archives unused for UNUSED_FOR, and dumps no builder finishes."""
    now = time.time()
    for other in found.path.parent.glob("spark-*.jsa*"):
        if other == found.path or other.name.startswith(found.path.name + "."):
            continue
        try:
            if now - other.stat().st_mtime > UNUSED_FOR:
                other.unlink()
        except OSError:
            pass
