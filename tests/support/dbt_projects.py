"""Throwaway dbt projects on the shared Spark session, run in this process (dbtRunner), each in
its own schema; and what their files and results need (sources.yml, the profile's Spark
settings, a result's errors)."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Dict, List

import yaml

from tests.support import manifests

REPO = Path(__file__).resolve().parents[2]

# Every JVM of the tests compiles with C1 alone and collects with the parallel collector: the
# tests run small data through many short queries, where C2's and G1's own threads cost more of
# the 2 cores than their faster code and shorter pauses give back (bench/README.md, the test
# suite). C1 alone gets a 48 MB code cache by default, which a worker's session or a dbt run of
# several streams fills ("CodeCache is full. Compiler has been disabled"): the rest would run interpreted
TEST_JVM = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m -XX:+UseParallelGC"


def sources_yml(*tables: str) -> str:
    """A sources.yml declaring tables appended to by the tests, as source('raw', <table>), in the
    project's own schema."""
    return yaml.safe_dump(
        {
            "version": 2,
            "sources": [{"name": "raw", "schema": "{{ target.schema }}", "tables": [{"name": t} for t in tables]}],
        }
    )


def spark_params(home: Path) -> Dict[str, str]:
    """Profile settings that point every test project at the session's one metastore, and the
    tests' JVM options (TEST_JVM) for a driver they start."""
    from dbt.adapters.window_views.spark import kafka_jars, s3
    from dbt.adapters.window_views.spark.session import java_options

    # Kafka's connector when fetched (scripts/setup.sh): four jars on the classpath cost the
    # session's start nothing measurable, and the Kafka tests then share it (tests/functional/test_kafka.py);
    # hadoop-aws likewise for the S3 tests (tests/functional/test_s3a.py), which set its bucket's settings
    jars = ",".join(str(jar) for jar in [*kafka_jars.jars_if_cached(), *s3.jars_if_cached()])
    return {
        "spark.sql.warehouse.dir": str(home / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={home / 'metastore_db'};create=true",
        "spark.driver.extraJavaOptions": f"{java_options(home)} {TEST_JVM}",
        **({"spark.jars": jars} if jars else {}),
    }


def write_project(root: Path, name: str, schema: str, spark: Dict[str, str]) -> None:
    """`root`'s dbt_project.yml and profiles.yml: a project `name` whose one target runs on the
    embedded Spark with the settings `spark`, in `schema`."""
    (root / "dbt_project.yml").write_text(
        yaml.safe_dump({"name": name, "version": "1.0", "config-version": 2, "profile": name})
    )
    profile = {
        "type": "window_views",
        "method": "session",
        "schema": schema,
        "threads": 1,
        "server_side_parameters": spark,
    }
    (root / "profiles.yml").write_text(yaml.safe_dump({name: {"target": "dev", "outputs": {"dev": profile}}}))


class DbtProject:
    """A dbt project on disk, run in this process against the shared Spark session."""

    def __init__(self, root: Path, schema: str, home: Path, spark) -> None:
        self.root = root
        self.schema = schema
        self.spark = spark
        (root / "models").mkdir(parents=True, exist_ok=True)
        (root / "seeds").mkdir(exist_ok=True)
        write_project(root, "wv_test", schema, spark_params(home))

    def write(self, path: str, text: str) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip())
        return target

    def model(self, name: str, sql: str) -> Path:
        return self.write(f"models/{name}.sql", sql)

    def seed(self, name: str, csv: str) -> Path:
        return self.write(f"seeds/{name}.csv", csv)

    def dbt(self, *args: str, ok: bool = True, artifacts: bool = False):
        """`dbt <args>` on the project. Only with `artifacts` (and for `dbt docs`) does dbt write
        manifest.json and run_results.json: a quarter second a command that the tests, reading
        the result object, never look at. The manifest of the last parse is reused while the
        project's files and the parse's arguments are unchanged (manifests.py)."""
        from dbt.cli.main import dbtRunner

        skip = [] if artifacts or args[0] == "docs" else ["--no-write-json"]
        full = [*args, *skip, "--project-dir", str(self.root), "--profiles-dir", str(self.root)]
        with manifests.reused(self.root, full) as manifest:
            result = dbtRunner(manifest=manifest).invoke(full)
        if ok and not result.success:
            raise AssertionError(f"dbt {' '.join(args)} failed: {errors(result)}")
        if not ok:
            assert not result.success, f"dbt {' '.join(args)} succeeded, expected a failure"
        return result

    def rows(self, relation: str, order_by: str = "all") -> List[tuple]:
        df = self.spark.sql(f"select * from {self.schema}.{relation} order by {order_by}")
        return [tuple(r) for r in df.collect()]

    def temp_views(self) -> List[str]:
        """The plugin's temporary views in the shared session (a run must leave none behind)."""
        return sorted(t.name for t in self.spark.catalog.listTables(pattern="_wv_*") if t.isTemporary)

    def columns(self, relation: str) -> List[str]:
        return self.spark.table(f"{self.schema}.{relation}").columns

    def land(self, table: str, name: str, select: str) -> Path:
        """A Parquet file `name`.parquet of the rows `select` gives, put into the folder of the
        project's table `table` as a loader that does not check the table's schema would."""
        (location,) = (
            self.spark.sql(f"describe table extended {self.schema}.{table}").where("col_name = 'Location'").collect()
        )
        scratch = self.root / "scratch" / name
        self.spark.sql(select).coalesce(1).write.mode("overwrite").parquet(str(scratch))
        (written,) = scratch.glob("*.parquet")
        landed = Path(location.data_type.removeprefix("file:")) / f"{name}.parquet"
        shutil.move(written, landed)
        shutil.rmtree(scratch)
        return landed


def errors(result) -> str:
    """Every error message of a dbtRunner result, as one string."""
    if result.exception is not None:
        return str(result.exception)
    out = []
    for r in result.result or []:
        if getattr(r, "status", None) in ("error", "fail") or getattr(r, "message", None) and r.status != "success":
            out.append(f"{r.node.name}: {r.message}")
    return "\n".join(out)
