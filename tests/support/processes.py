"""Separate processes of the tests (a dbt process, a Spark JVM that lives for a step or two):
running them, waiting for them to end, and what a misconfigured one leaves behind."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Dict, List, Optional

from tests.support.dbt_projects import REPO, TEST_JVM

# what a Spark with a Derby metastore leaves in its working directory when misconfigured
SPARK_LEFTOVERS = ("metastore_db", "spark-warehouse", "derby.log")


def run_command(
    cmd: List[str], cwd: Path, env: Optional[Dict[str, str]] = None, timeout: int = 600
) -> subprocess.CompletedProcess:
    """Run a command (a separate dbt process), failing with the tail of its output."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(
            f"`{' '.join(cmd)}` (cwd {cwd}) exited {proc.returncode}\n"
            f"--- stdout (tail) ---\n{proc.stdout[-6000:]}\n--- stderr (tail) ---\n{proc.stderr[-4000:]}"
        )
    return proc


def wait_for_jvm(home: Path, timeout: float = 60) -> None:
    """A killed driver's JVM notices its parent is gone a moment later; the next process can
    only open the Derby metastore under `home` once it has exited."""
    marker = str(home).encode()
    deadline = time.time() + timeout
    while time.time() < deadline:
        alive = False
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit():
                try:
                    alive = alive or marker in (proc / "cmdline").read_bytes()
                except OSError:
                    pass
        if not alive:
            return
        time.sleep(0.5)
    raise AssertionError(f"a Spark JVM of {home} is still running after {timeout} s")


def test_jvm() -> str:
    """TEST_JVM, and Spark's class archive once built (class_archive.py, as the plugin gives its
    drivers): for the JVMs the tests start themselves, a cluster's daemons and executors."""
    from dbt.adapters.window_views.spark import class_archive

    return f"{TEST_JVM} {class_archive.jvm_options(start_build=False)}".strip()


def with_test_executors(params: Dict[str, str]) -> Dict[str, str]:
    """Spark settings whose executors (a cluster's) start as the tests' drivers do: TEST_JVM and
    Spark's class archive (spark_params gives a driver TEST_JVM, the plugin the archive)."""
    key = "spark.executor.extraJavaOptions"
    return {**params, key: f"{params.get(key, '')} {test_jvm()}".strip()}


def with_tests_importable(env: Dict[str, str]) -> Dict[str, str]:
    """A separate Python process's environment in which `tests.support` imports (the repository
    first on PYTHONPATH), as pytest's `pythonpath` makes it import in this one."""
    path = [str(REPO), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    return {**env, "PYTHONPATH": os.pathsep.join(path)}
