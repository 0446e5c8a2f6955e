"""A real Spark standalone cluster on loopback for the tests: one master and two workers (1 core,
1 GB each), started with the `spark-class` that PySpark ships, each with its own work directory,
logs under <repo>/target/cluster-logs/. Used by test_cluster.py through the `standalone_cluster`
fixture (tests/conftest.py; session-scoped: one cluster for the run)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List

import pyspark
import pytest

from tests.support.dbt_projects import REPO
from tests.support.processes import test_jvm

SPARK_HOME = Path(pyspark.__file__).parent
LOG_DIR = REPO / "target" / "cluster-logs"
WORKERS = 2
START_TIMEOUT = 120  # seconds until both workers must be registered


# Every daemon binds port 0 and the master's log says where it went: ports picked here and bound
# later could be taken in between by another test's server (CI once read some other page's HTML).
MASTER_AT = re.compile(r"Starting Spark master at (spark://\S+)")
MASTER_UI_AT = re.compile(r"Bound MasterWebUI to \S+, and started at http://[^:/\s]+:(\d+)")


def tail(path: Path, chars: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError as exc:
        return f"<{exc}>"


@dataclass
class Cluster:
    """A running standalone cluster: its master URL, web UI and daemons."""

    master_url: str
    webui_url: str
    root: Path
    procs: Dict[str, subprocess.Popen] = field(default_factory=dict)
    logs: Dict[str, Path] = field(default_factory=dict)

    def state(self) -> dict:
        """The master's status JSON (aliveworkers, activeapps, completedapps, ...)."""
        with urllib.request.urlopen(self.webui_url + "/json/", timeout=5) as resp:
            state = json.loads(resp.read())
        if state.get("url") != self.master_url:
            raise ValueError(f"{self.webui_url} answers for {state.get('url')}, not {self.master_url}")
        return state

    def log_tails(self, chars: int = 3000) -> str:
        return "\n".join(f"--- {name} ({path}) ---\n{tail(path, chars)}" for name, path in self.logs.items())

    def stop(self) -> None:
        """Terminate every daemon (SIGTERM to its process group), then kill what is left."""
        for proc in self.procs.values():
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.time() + 20
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=10)


def start_cluster(
    root: Path, log_dir: Path = LOG_DIR, workers: int = WORKERS, timeout: float = START_TIMEOUT
) -> Cluster:
    """Start a master and `workers` workers on 127.0.0.1 and wait until all are registered."""
    if log_dir.exists():
        shutil.rmtree(log_dir)
    log_dir.mkdir(parents=True)
    spark_class = SPARK_HOME / "bin" / "spark-class"
    env = {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_DAEMON_MEMORY": "256m",
        "SPARK_DAEMON_JAVA_OPTS": test_jvm(),
        "SPARK_LOG_DIR": str(log_dir),
        "PYSPARK_PYTHON": sys.executable,
    }
    env.pop("SPARK_REMOTE", None)
    cluster = Cluster(master_url="", webui_url="", root=root)

    def launch(name: str, args: List[str]) -> None:
        log = log_dir / f"{name}.log"
        cluster.logs[name] = log
        with log.open("wb") as out:
            cluster.procs[name] = subprocess.Popen(
                ["bash", str(spark_class), *args],
                env=env,
                cwd=root,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    try:
        launch(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--webui-port",
                "0",
            ],
        )
        deadline = time.time() + timeout
        _wait_for_master(cluster, deadline)
        for i in range(1, workers + 1):
            work = root / f"worker{i}"
            work.mkdir(parents=True, exist_ok=True)
            launch(
                f"worker{i}",
                [
                    "org.apache.spark.deploy.worker.Worker",
                    cluster.master_url,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "1",
                    "--memory",
                    "1g",
                    "--work-dir",
                    str(work),
                    "--webui-port",
                    "0",
                ],
            )
        alive = None
        while time.time() < deadline:
            _check_alive(cluster)
            try:
                alive = cluster.state().get("aliveworkers")
            except (OSError, ValueError):
                alive = None
            if alive == workers:
                return cluster
            time.sleep(1)
        raise RuntimeError(f"{alive or 0} of {workers} workers registered with {cluster.master_url} after {timeout} s")
    except BaseException as exc:
        cluster.stop()
        message = f"the standalone cluster did not start: {exc}\n{cluster.log_tails()}"
        if isinstance(exc, RuntimeError):
            pytest.fail(message, pytrace=False)
        raise


def _check_alive(cluster: Cluster) -> None:
    dead = [name for name, proc in cluster.procs.items() if proc.poll() is not None]
    if dead:
        raise RuntimeError(f"{', '.join(dead)} exited while the cluster started")


def _wait_for_master(cluster: Cluster, deadline: float) -> None:
    """Read the master's RPC address and web UI port from its log once it has bound both."""
    while time.time() < deadline:
        _check_alive(cluster)
        text = tail(cluster.logs["master"], 1_000_000)
        rpc, ui = MASTER_AT.search(text), MASTER_UI_AT.search(text)
        if rpc and ui:
            cluster.master_url = rpc.group(1)
            cluster.webui_url = f"http://127.0.0.1:{ui.group(1)}"
            return
        time.sleep(0.5)
    raise RuntimeError("the master did not report its address and web UI")
