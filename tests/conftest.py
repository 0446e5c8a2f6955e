"""Shared fixtures: one local Spark session for the whole run, and throwaway dbt projects that
use it in-process (dbtRunner), each in its own schema."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Dict, List, Optional

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))
# what a Spark with a Derby metastore leaves in its working directory when misconfigured
SPARK_LEFTOVERS = ("metastore_db", "spark-warehouse", "derby.log")

# FLIP-145's Bid table (its times are on 2020-04-15)
FLIP145_BID = """\
bidtime,price,item
2020-04-15 08:07:00,2,A
2020-04-15 08:11:00,3,B
2020-04-15 08:05:00,4,C
2020-04-15 08:09:00,5,D
2020-04-15 08:13:00,1,E
2020-04-15 08:17:00,6,F
"""


def sources_yml(*tables: str) -> str:
    """A sources.yml declaring tables appended to by the tests, as source('raw', <table>), in the
    project's own schema."""
    return yaml.safe_dump(
        {
            "version": 2,
            "sources": [{"name": "raw", "schema": "{{ target.schema }}", "tables": [{"name": t} for t in tables]}],
        }
    )


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


# A JVM that lives for a step or two of a test (a dbt process of the crash drill, a cluster's):
# the C1 compiler alone compiles what it runs, and sparing C2's threads takes ~40% off such a
# run's CPU (2 cores, two test workers). Not for the shared session: over a whole worker's tests,
# C2's faster code pays back.
TEST_JVM = "-XX:TieredStopAtLevel=1"


def spark_params(home: Path) -> Dict[str, str]:
    """Profile settings that point every test project at the session's one metastore."""
    from dbt.adapters.window_views.session import java_options

    return {
        "spark.sql.warehouse.dir": str(home / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={home / 'metastore_db'};create=true",
        "spark.driver.extraJavaOptions": java_options(home),
    }


def short_lived(params: Dict[str, str]) -> Dict[str, str]:
    """Spark settings for a JVM that lives for a step or two of a test (TEST_JVM)."""
    keys = ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions")
    return {**params, **{key: f"{params.get(key, '')} {TEST_JVM}".strip() for key in keys}}


@pytest.fixture(scope="session")
def spark_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("spark")


@pytest.fixture(scope="session")
def spark(spark_home):
    from dbt.adapters.window_views.session import embedded_defaults, spark_session

    return spark_session({**embedded_defaults(spark_home), **spark_params(spark_home)})


class DbtProject:
    """A dbt project on disk, run in this process against the shared Spark session."""

    def __init__(self, root: Path, schema: str, home: Path, spark) -> None:
        self.root = root
        self.schema = schema
        self.spark = spark
        (root / "models").mkdir(parents=True, exist_ok=True)
        (root / "seeds").mkdir(exist_ok=True)
        (root / "dbt_project.yml").write_text(
            yaml.safe_dump({"name": "wv_test", "version": "1.0", "config-version": 2, "profile": "wv_test"})
        )
        profile = {
            "type": "window_views",
            "method": "session",
            "schema": schema,
            "threads": 1,
            "server_side_parameters": spark_params(home),
        }
        (root / "profiles.yml").write_text(yaml.safe_dump({"wv_test": {"target": "dev", "outputs": {"dev": profile}}}))

    def write(self, path: str, text: str) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip())
        return target

    def model(self, name: str, sql: str) -> Path:
        return self.write(f"models/{name}.sql", sql)

    def seed(self, name: str, csv: str) -> Path:
        return self.write(f"seeds/{name}.csv", csv)

    def dbt(self, *args: str, ok: bool = True):
        from dbt.cli.main import dbtRunner

        result = dbtRunner().invoke([*args, "--project-dir", str(self.root), "--profiles-dir", str(self.root)])
        if ok and not result.success:
            raise AssertionError(f"dbt {' '.join(args)} failed: {errors(result)}")
        if not ok:
            assert not result.success, f"dbt {' '.join(args)} succeeded, expected a failure"
        return result

    def rows(self, relation: str, order_by: str = "all") -> List[tuple]:
        df = self.spark.sql(f"select * from {self.schema}.{relation} order by {order_by}")
        return [tuple(r) for r in df.collect()]

    def columns(self, relation: str) -> List[str]:
        return self.spark.table(f"{self.schema}.{relation}").columns


def errors(result) -> str:
    """Every error message of a dbtRunner result, as one string."""
    if result.exception is not None:
        return str(result.exception)
    out = []
    for r in result.result or []:
        if getattr(r, "status", None) in ("error", "fail") or getattr(r, "message", None) and r.status != "success":
            out.append(f"{r.node.name}: {r.message}")
    return "\n".join(out)


@pytest.fixture
def project(request, tmp_path, spark_home, spark) -> DbtProject:
    schema = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50]
    spark.sql(f"drop database if exists {schema} cascade")
    return DbtProject(tmp_path / "project", schema, spark_home, spark)


@pytest.fixture(params=["local", "objectstore"])
def fs(request):
    """The filesystem local locations get in this process: the local disk, or one with an object
    store's semantics (tests/support/objectstore.py) for the commit protocol's tests."""
    import objectstore

    from dbt.adapters.window_views import filesystems

    if request.param == "objectstore":
        yield objectstore.install()
        objectstore.uninstall()
    else:
        yield filesystems.LOCAL
