"""A warm Spark between dbt commands (`warm_spark: true`): one local Spark Connect server per
project's target directory, started by the first dbt command that needs Spark with PySpark's own
`sbin/start-connect-server.sh`, reused by every later dbt process of that project with the same
Spark settings, and stopped after an idle time (a watchdog process started with it) or by

    python -m dbt.adapters.window_views.spark.warm_server stop --project-dir .

Everything is under `<target>/warm_spark/`: `server.json` (the record), `lock` (one process
starts or replaces the server at a time), `clients/<pid>` (the dbt processes that used it),
`logs/` (the server's and the watchdog's). The server's warehouse and Derby metastore are the
embedded default's (`<target>/spark-warehouse`, `<target>/metastore_db`): the same tables whether
the project runs warm or in-process, one JVM at a time."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.spark import warm_up
from dbt.adapters.window_views.spark.processes import alive, command_line

RECORD_VERSION = 1
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
IDENT = "window-views"  # SPARK_IDENT_STRING: names the server's pid and log files
# the keys connections.py adds to server_side_parameters; never sent to Spark
DIR_KEY = "window_views.warm_spark.dir"
PROJECT_KEY = "window_views.warm_spark.project_dir"
IDLE_KEY = "window_views.warm_spark.idle_timeout_seconds"
START_TIMEOUT = 300  # seconds a server gets to listen on its port (a busy laptop: a minute)
LOCK_TIMEOUT = START_TIMEOUT + 60  # a process waits this long for another one starting the server
STOP_WAIT = 30  # seconds a server gets to exit on SIGTERM before SIGKILL
START_ATTEMPTS = 3  # a free port taken by another process before the server bound it: another port


def log(message: str) -> None:
    """A line in dbt's log and console (the watchdog's goes to its log file)."""
    from dbt.adapters.events.logging import AdapterLogger

    AdapterLogger("WindowViews").info(message)


@dataclass(frozen=True)
class WarmSpec:
    """What a dbt process asks for: the project's warm directory and the server's settings."""

    home: str  # <target>/warm_spark
    project_dir: str
    idle_timeout: float  # seconds
    settings: Tuple[Tuple[str, str], ...]  # the Spark settings the server starts with

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Optional["WarmSpec"]:
        """The spec connections.py put in the profile's server_side_parameters, or None."""
        if DIR_KEY not in params:
            return None
        settings = tuple(sorted((k, v) for k, v in params.items() if k.startswith("spark.") and k != "spark.remote"))
        return cls(params[DIR_KEY], params.get(PROJECT_KEY, ""), float(params[IDLE_KEY]), settings)

    @property
    def settings_hash(self) -> str:
        """Spark's settings, PySpark's version, the Python and the plugin's version the server's
        Python workers run: a change in any of them needs another server."""
        import pyspark

        from dbt.adapters.window_views.__version__ import version

        text = json.dumps([self.settings, pyspark.__version__, sys.executable, version])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ServerRecord:
    """`server.json`: the running server of a project, as the dbt process that started it wrote it."""

    pid: int
    port: int
    project_dir: str
    settings_hash: str
    started_at: float
    last_used: float
    idle_timeout: float
    watchdog_pid: int = 0
    version: int = RECORD_VERSION

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def describe(self) -> str:
        return f"pid {self.pid}, port {self.port}"

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "ServerRecord":
        data = json.loads(text)
        if data.get("version") != RECORD_VERSION:
            raise ValueError(f"record version {data.get('version')!r}, expected {RECORD_VERSION}")
        return cls(**data)


@dataclass(frozen=True)
class LockHolder:
    """`lock`: the process that starts, replaces or stops the server right now."""

    pid: int
    host: str
    since: float
    version: int = RECORD_VERSION

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "LockHolder":
        return cls(**json.loads(text))


def record_path(home: Path) -> Path:
    return home / "server.json"


def read_record(home: Path) -> Optional[ServerRecord]:
    """The record, or None (none, or unreadable: a half-written or older record is stale)."""
    try:
        return ServerRecord.from_json(record_path(home).read_text())
    except (OSError, ValueError, TypeError):
        return None


METASTORE_URL = "spark.hadoop.javax.jdo.option.ConnectionURL"


def holding_metastore(params: Mapping[str, str]) -> Optional[ServerRecord]:
    """The live warm server of the project whose target/ holds this embedded session's metastore:
    Derby lets one JVM open it, so a session started beside that server cannot (warm_spark turned
    off while the server still runs). None when there is none."""
    found = re.search(r"databaseName=([^;]+)", params.get(METASTORE_URL, ""))
    if found is None:
        return None
    record = read_record(Path(found.group(1)).parent / "warm_spark")
    return record if record is not None and alive(record.pid) else None


def holds_metastore_message(record: ServerRecord) -> str:
    return (
        f"the project's warm Spark (pid {record.pid}, started by warm_spark: true) still runs and holds the "
        "project's metastore, so Spark cannot start in this command; fix: stop it with `python -m "
        f"dbt.adapters.window_views.spark.warm_server stop --project-dir {record.project_dir}`, or set "
        "warm_spark: true again to use it"
    )


def write_record(home: Path, record: ServerRecord) -> None:
    tmp = home / f"server.json.{os.getpid()}"
    tmp.write_text(record.to_json())
    os.replace(tmp, record_path(home))  # readers see the old record or the new one, whole


def remove_record(home: Path) -> None:
    record_path(home).unlink(missing_ok=True)


def is_server(pid: int, port: int) -> bool:
    """The pid is a Spark Connect server bound to this port (a reused pid is not)."""
    line = command_line(pid)
    return alive(pid) and SERVER_CLASS in line and f"spark.connect.grpc.binding.port={port}" in line


def port_answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def why_unusable(record: ServerRecord) -> Optional[str]:
    """Why a recorded server cannot serve (None: it can)."""
    if not alive(record.pid):
        return f"its process ({record.describe()}) is gone"
    if not is_server(record.pid, record.port):
        return f"pid {record.pid} is now another process, not a Spark Connect server on port {record.port}"
    if not port_answers(record.port):
        return f"it does not answer on port {record.port}"
    return None


def why_gone(spec: WarmSpec) -> Optional[str]:
    """Why the project's warm server no longer serves (None: it does)."""
    record = read_record(Path(spec.home))
    return "it was stopped" if record is None else why_unusable(record)


RUN_AGAIN = "run the command again, which starts a new warm Spark"


@contextmanager
def locked(home: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """One process at a time starts, replaces or stops the server: a lock file created only if
    absent; a dead holder's lock (same host) is taken over."""
    path = home / "lock"
    me = LockHolder(os.getpid(), socket.gethostname(), time.time())
    deadline = time.time() + timeout
    told = False
    while True:
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                text = path.read_text()
                holder = LockHolder.from_json(text)
            except (OSError, ValueError, TypeError):
                holder, text = None, ""
            if holder is None and time.time() - _mtime(path) > 10:
                path.unlink(missing_ok=True)  # a lock left half written by a process killed while writing it
            elif holder is not None and holder.host == me.host and not alive(holder.pid):
                if path.exists() and path.read_text() == text:
                    path.unlink(missing_ok=True)
            elif time.time() > deadline:
                who = f"pid {holder.pid} on {holder.host}" if holder else "an unknown process"
                raise DbtRuntimeError(
                    f"the warm Spark of this project is being started or stopped by {who} for more than "
                    f"{int(timeout)} s (lock {path}); fix: wait for it, or remove {path} if that process is gone"
                ) from None
            elif not told and holder is not None:
                log(f"waiting for dbt process {holder.pid}, which is starting this project's warm Spark")
                told = True
            time.sleep(0.2)
            continue
        with os.fdopen(fd, "w") as f:
            f.write(me.to_json())
        break
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return time.time()


def spark_home() -> Path:
    """PySpark's own installation: the server runs the same Spark version as the client."""
    import pyspark

    return Path(pyspark.__file__).parent


def pid_file(home: Path) -> Path:
    return home / f"spark-{IDENT}-{SERVER_CLASS}-1.pid"


def server_env(home: Path) -> Dict[str, str]:
    return {
        **os.environ,
        "SPARK_HOME": str(spark_home()),
        "SPARK_LOG_DIR": str(home / "logs"),
        "SPARK_PID_DIR": str(home),
        "SPARK_IDENT_STRING": IDENT,
        # the server's Python workers run foreachBatch: they need this Python, with the plugin
        "PYSPARK_PYTHON": sys.executable,
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def log_tail(home: Path, chars: int = 3000) -> str:
    logs = sorted((home / "logs").glob(f"spark-{IDENT}-*.out"), key=_mtime)
    return logs[-1].read_text(errors="replace")[-chars:] if logs else "(no log)"


def start(spec: WarmSpec) -> ServerRecord:
    """Start a server for the spec on a free loopback port and wait until it listens."""
    from dbt.adapters.window_views.spark import class_archive  # pyspark's import: only to start a server

    home = Path(spec.home)
    (home / "logs").mkdir(parents=True, exist_ok=True)
    for attempt in range(1, START_ATTEMPTS + 1):
        port = free_port()
        conf = {
            # the Hive catalog (Derby metastore), as the in-process session's enableHiveSupport():
            # the server's own default keeps tables in memory, lost when it stops
            "spark.sql.catalogImplementation": "hive",
            **dict(spec.settings),
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(port),
        }
        conf = class_archive.with_archive(conf)  # the server's JVM starts like the embedded one
        args = [a for k, v in conf.items() for a in ("--conf", f"{k}={v}")]
        pid_file(home).unlink(missing_ok=True)
        started = time.time()
        script = spark_home() / "sbin" / "start-connect-server.sh"
        proc = subprocess.run(
            ["bash", str(script), *args],
            env=server_env(home),
            cwd=home,
            capture_output=True,
            text=True,
            start_new_session=True,  # not in dbt's process group: a Ctrl-C of dbt leaves it running
        )
        pid = _read_pid(home)
        if proc.returncode != 0 or pid is None:
            raise DbtRuntimeError(
                f"could not start the warm Spark ({script} exited {proc.returncode}): "
                f"{(proc.stdout + proc.stderr)[-2000:]}\n{log_tail(home)}"
            )
        while time.time() - started < START_TIMEOUT and alive(pid):
            if port_answers(port):
                return ServerRecord(
                    pid, port, spec.project_dir, spec.settings_hash, started, started, spec.idle_timeout
                )
            time.sleep(0.25)
        tail = log_tail(home)
        stop_pid(pid)
        if "Address already in use" in tail or "Failed to bind" in tail:
            log(f"port {port} was taken before the warm Spark bound it (attempt {attempt}); trying another port")
            continue
        raise DbtRuntimeError(
            f"the warm Spark (pid {pid}) did not listen on port {port} within {START_TIMEOUT} s; "
            f"its log ({home / 'logs'}):\n{tail}"
        )
    raise DbtRuntimeError(f"the warm Spark found no free loopback port in {START_ATTEMPTS} attempts")


def _read_pid(home: Path) -> Optional[int]:
    try:
        return int(pid_file(home).read_text().strip())
    except (OSError, ValueError):
        return None


def stop_pid(pid: int) -> None:
    """SIGTERM (Spark's shutdown hooks close the metastore), then SIGKILL after STOP_WAIT s."""
    for sig, wait in ((signal.SIGTERM, STOP_WAIT), (signal.SIGKILL, 10)):
        if not alive(pid):
            return
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.time() + wait
        while time.time() < deadline and alive(pid):
            time.sleep(0.2)


def stop_server(home: Path, record: Optional[ServerRecord]) -> None:
    """Stop the recorded server if it still runs as one, and an orphan the pid file names (a
    server whose record was removed); remove the record."""
    if record is not None and is_server(record.pid, record.port):
        stop_pid(record.pid)
    orphan = _read_pid(home)
    if orphan is not None and alive(orphan) and SERVER_CLASS in command_line(orphan):
        stop_pid(orphan)
    pid_file(home).unlink(missing_ok=True)
    remove_record(home)


def live_clients(home: Path, exclude: int = 0) -> List[int]:
    """The dbt processes that used the server and still run (the others' files are removed)."""
    out = []
    for path in (home / "clients").glob("*"):
        try:
            pid = int(path.name)
        except ValueError:
            continue
        if pid != exclude and alive(pid):
            out.append(pid)
        elif pid != exclude:
            path.unlink(missing_ok=True)
    return out


def start_watchdog(home: Path, pid: int) -> int:
    out = open(home / "logs" / "watchdog.log", "a")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dbt.adapters.window_views.spark.warm_server",
            "watch",
            "--home",
            str(home),
            "--pid",
            str(pid),
        ],
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        close_fds=True,
    )
    out.close()
    return proc.pid


def ensure(spec: WarmSpec, before_start: Callable[[], None]) -> str:
    """The URL of this project's warm Spark: the recorded server when it is alive and has the
    same settings, else a new one (the stale or differently configured one stopped first), after
    `before_start` (the Java check, which raises with the fix)."""
    home = Path(spec.home)
    home.mkdir(parents=True, exist_ok=True)
    with locked(home):
        record = read_record(home)
        if record is not None:
            reason = why_unusable(record)
            if reason is None and record.settings_hash != spec.settings_hash:
                users = live_clients(home, exclude=os.getpid())
                if users:
                    raise DbtRuntimeError(
                        f"this project's warm Spark ({record.describe()}) runs with other Spark settings than "
                        f"this profile's, and dbt process(es) {', '.join(map(str, users))} are using it; fix: wait "
                        "for them to finish (a command after them replaces it), or stop it with `python -m "
                        f"dbt.adapters.window_views.spark.warm_server stop --project-dir {record.project_dir}`"
                    )
                reason = "the profile's Spark settings changed since it started"
            if reason is not None:
                log(f"the warm Spark recorded in {record_path(home)} cannot be used: {reason}; starting a new one")
                stop_server(home, record)
                record = None
        if record is None:
            before_start()
            stop_server(home, None)  # an orphan of this project holds its metastore
            log(f"starting a warm Spark for this project (logs in {home / 'logs'})")
            record = start(spec)
            log(f"the warm Spark listens on {record.url} ({record.describe()}); later dbt commands reuse it")
        if not alive(record.watchdog_pid):
            record = replace(record, watchdog_pid=start_watchdog(home, record.pid))
        record = replace(record, last_used=time.time(), idle_timeout=spec.idle_timeout)
        write_record(home, record)
        (home / "clients").mkdir(exist_ok=True)
        (home / "clients" / str(os.getpid())).touch()
    return record.url


def idle_for(home: Path, record: ServerRecord) -> float:
    """Seconds since the last dbt command used the server (0 while one still runs)."""
    if live_clients(home):
        return 0.0
    return time.time() - record.last_used


def watch(home: Path, pid: int) -> None:
    """The watchdog: warms the server up while no command uses it (warm_up.py), stops it once it
    has been idle for its record's idle timeout; exits when the server is gone or another one is
    recorded."""
    warming: Optional[warm_up.WarmUp] = None
    while True:
        record = read_record(home)
        if record is None or record.pid != pid or not alive(pid):
            print(f"{time.ctime()}: server {pid} is gone or replaced; the watchdog exits", flush=True)
            return
        if warming is None:
            warming = warm_up.WarmUp(record.url, warm_up.rounds(), busy=lambda: bool(live_clients(home)))
        warming.step()
        pause = 0.5 if warming.pending else min(30.0, max(0.5, record.idle_timeout / 10))
        if idle_for(home, record) >= record.idle_timeout:
            with locked(home):
                record = read_record(home)
                if record is not None and record.pid == pid and idle_for(home, record) >= record.idle_timeout:
                    print(f"{time.ctime()}: idle for {int(record.idle_timeout)} s; stopping server {pid}", flush=True)
                    stop_server(home, record)
                    return
        _sleep_while_alive(pid, pause)


def _sleep_while_alive(pid: int, seconds: float) -> None:
    """Sleep up to `seconds`, waking when the server's process is gone: the watchdog then exits
    at once, not after an idle server's long pause."""
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))


def stop(project_dir: Path, target_path: str = "target") -> str:
    """Stop a project's warm Spark; what was done, as a line for the user."""
    home = (project_dir / target_path).resolve() / "warm_spark"
    if not home.is_dir():
        return f"no warm Spark was started for {project_dir.resolve()} (no {home})"
    with locked(home):
        record = read_record(home)
        running = record is not None and is_server(record.pid, record.port)
        stop_server(home, record)
    if running and record is not None:
        return f"stopped the warm Spark of {project_dir.resolve()} ({record.describe()})"
    return f"no warm Spark runs for {project_dir.resolve()}"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dbt.adapters.window_views.spark.warm_server")
    commands = parser.add_subparsers(dest="command", required=True)
    stop_cmd = commands.add_parser("stop", help="stop the project's warm Spark")
    stop_cmd.add_argument("--project-dir", default=".")
    stop_cmd.add_argument("--target-path", default=os.environ.get("DBT_TARGET_PATH", "target"))
    watch_cmd = commands.add_parser("watch", help="(started with the server) stop it when idle")
    watch_cmd.add_argument("--home", required=True)
    watch_cmd.add_argument("--pid", type=int, required=True)
    args = parser.parse_args(argv)
    if args.command == "stop":
        print(stop(Path(args.project_dir), args.target_path))
    else:
        watch(Path(args.home), args.pid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
