"""The package form (design §2): a project on a plain dbt-spark profile (`type: spark`,
`method: session`) installs this repository with `packages.yml: - local:` and renders
`window_views.hop(...)` in a `table` model, checked by a data test against FLIP-145's rows.

It runs the dev environment's `dbt` CLI in a subprocess: its own JVM, with its warehouse,
Derby metastore and derby.log under a temporary directory (never the test session's
metastore, never the working directory)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pyspark

from tests.support.dbt_projects import TEST_JVM
from tests.support.processes import SPARK_LEFTOVERS, run_command

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "tests" / "package_form_project"


def test_package_form_on_a_spark_profile(tmp_path):
    assert pyspark.__version__.startswith("4.3."), pyspark.__version__
    project = tmp_path / "project"
    shutil.copytree(
        PROJECT, project, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages", "package-lock.yml")
    )
    # the copy lives elsewhere, so point it at this repository by absolute path
    (project / "packages.yml").write_text(f"packages:\n  - local: {REPO}\n")
    spark_home = tmp_path / "spark"
    cwd = tmp_path / "cwd"
    cwd.mkdir()

    env = {k: v for k, v in os.environ.items() if not k.startswith(("DBT_", "SPARK_", "PYSPARK_"))}
    env.update(PKG_FORM_SPARK_HOME=str(spark_home), DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    env["SPARK_SUBMIT_OPTS"] = TEST_JVM  # the tests' JVM options, which dbt-spark's session passes on
    dbt = str(Path(sys.executable).parent / "dbt")
    flags = ["--project-dir", str(project), "--profiles-dir", str(project)]

    run_command([dbt, "deps", *flags], cwd=cwd, env=env)
    assert (project / "dbt_packages" / "window_views" / "macros" / "windows" / "hop.sql").is_file()

    built = run_command([dbt, "build", *flags], cwd=cwd, env=env, timeout=900)
    assert "Registered adapter: spark=" in built.stdout
    manifest = json.loads((project / "target" / "manifest.json").read_text())
    assert manifest["metadata"]["adapter_type"] == "spark"
    model = manifest["nodes"]["model.pkg_form.pkg_hop_agg"]
    assert "macro.window_views.hop" in model["depends_on"]["macros"]
    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    assert {r["unique_id"]: r["status"] for r in results} == {
        "seed.pkg_form.pkg_bids": "success",
        "seed.pkg_form.pkg_hop_expected": "success",
        "model.pkg_form.pkg_hop_agg": "success",
        "test.pkg_form.pkg_hop_agg_equals_expected": "pass",
    }

    # Spark's state went where the profile said, not into the working or project directory
    for name in SPARK_LEFTOVERS:
        assert (spark_home / name).exists(), f"{name} not under {spark_home}"
    for directory in (cwd, project, project / "target"):
        stray = [name for name in SPARK_LEFTOVERS if (directory / name).exists()]
        assert not stray, f"{stray} left in {directory}"
