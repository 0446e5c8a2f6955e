"""The wheel as a user gets it: built from this repository, installed into a clean virtualenv
(dependencies from the package index), then the `dbt` CLI of that virtualenv parses and builds a
tiny project on the embedded default. The CLI runs in its own process, with its own JVM and its
own metastore under the project's target/, so it does not touch the test session's."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import stat
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import Dict

import pytest

from tests.support.data import FLIP145_BID as BID
from tests.support.dbt_projects import TEST_JVM
from tests.support.processes import SPARK_LEFTOVERS, run_command

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.drill  # a clean venv and a dbt CLI of its own: scripts/test.sh --drills
# a warning of the JVM's (`WARNING: ...`), a library's (`Warning: ...`) or Spark's log (`... WARN Utils: ...`)
JVM_WARNING = re.compile(r"^WARNING: |^Warning: | WARN \S+: ")
# what the JVM prints before Spark runs for the module options Spark's launcher gives every
# driver, which no setting removes (docs/troubleshooting.md, "Spark's own logs")
JVM_STARTS = (
    "WARNING: Using incubator modules: jdk.incubator.vector",
    "WARNING: package sun.security.action not in java.base",  # Java 24 and later
)


def clean_env(venv: Path) -> Dict[str, str]:
    """This environment minus anything that would point the CLI at the dev install."""
    drop = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "SPARK_HOME", "SPARK_REMOTE", "PYSPARK_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop) and not k.startswith("DBT_")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
    # the tests' JVM options for the embedded default's driver, which spark-submit reads from here
    env["SPARK_SUBMIT_OPTS"] = TEST_JVM
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    cmd = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out)]
    if importlib.util.find_spec("hatchling") is not None:
        cmd.append("--no-isolation")  # the dev venv has the backend; no index round trip
    run_command(cmd, cwd=REPO)
    wheels = list(out.glob("dbt_window_views-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_ships_the_macros_as_files(wheel):
    include = "dbt/include/window_views/"
    with zipfile.ZipFile(wheel) as whl:
        infos = {i.filename: i for i in whl.infolist()}
        tumble = infos.get(include + "macros/windows/tumble.sql")
        assert tumble is not None, sorted(infos)
        assert not stat.S_ISLNK(tumble.external_attr >> 16), "tumble.sql is a symlink in the wheel"
        assert whl.read(tumble) == (REPO / "macros/windows/tumble.sql").read_bytes()
        # every macro of the package form is in the plugin, with the same text
        for path in sorted((REPO / "macros").rglob("*.sql")):
            name = include + "macros/" + path.relative_to(REPO / "macros").as_posix()
            assert name in infos, f"{name} missing from the wheel"
            assert whl.read(name) == path.read_bytes(), name
        assert include + "dbt_project.yml" in infos
        assert "dbt/adapters/window_views/__init__.py" in infos


def write_project(root: Path) -> None:
    files = {
        # the README's landing-table pattern, the second time as on every run after the first
        "dbt_project.yml": "name: wheel_check\nversion: '1.0'\nconfig-version: 2\nprofile: wheel_check\n"
        "on-run-start:\n  - create database if not exists wheel_landing\n"
        "  - create database if not exists wheel_landing\n",
        # the embedded default: no method, no host, no Spark settings
        "profiles.yml": """
            wheel_check:
              target: dev
              outputs:
                dev:
                  type: window_views
                  schema: wheel_check
                  threads: 1
            """,
        "seeds/bid.csv": BID,
        "models/bids_per_window.sql": """
            {{ config(materialized='window_view') }}
            select window_start, window_end, window_time, sum(price) as price, count(*) as bids
            from {{ window_views.tumble(ref('bid'), 'bidtime', '10 minutes') }}
            group by window_start, window_end, window_time
            """,
        # approx_count_distinct over panes merges DataSketches' HLL sketches, whose library has
        # its own warning about Java versions (kept out: docs/troubleshooting.md)
        "models/bidders_per_window.sql": """
            {{ config(materialized='window_view') }}
            select * from {{ window_views.window_aggregate(ref('bid'),
                {'kind': 'hop', 'time_col': 'bidtime', 'size': '10 minutes', 'slide': '5 minutes'},
                {'bidders': 'approx_count_distinct(item)'}) }}
            """,
        # not selected below: `--select +bids_per_window` must leave it alone
        "models/unselected.sql": "select 1 as x\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


def test_installed_wheel_builds_a_window_view_on_the_embedded_default(wheel, tmp_path):
    venv = tmp_path / "venv"
    run_command([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    run_command([str(python), "-m", "pip", "install", "--quiet", str(wheel)], cwd=tmp_path, timeout=1200)
    env = clean_env(venv)
    # no class archive: this install's jars would need one of their own, a build in the
    # background of the suite (test_class_archive_build.py builds and maps one)
    env["WINDOW_VIEWS_JVM_CACHE"] = "off"

    # the CLI imports the installed wheel, not this checkout
    where = run_command(
        [
            str(python),
            "-c",
            "import dbt.adapters.window_views as a, dbt.include.window_views as i; print(a.__file__); print(i.PACKAGE_PATH)",
        ],
        cwd=tmp_path,
        env=env,
    ).stdout.split()
    site = venv.resolve()
    assert all(Path(p).resolve().is_relative_to(site) for p in where), where
    assert (Path(where[1]) / "macros" / "windows" / "tumble.sql").is_file()

    project = tmp_path / "project"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_project(project)
    dbt = str(venv / "bin" / "dbt")
    flags = ["--project-dir", str(project), "--profiles-dir", str(project)]

    run_command([dbt, "parse", *flags], cwd=project, env=env)
    manifest = json.loads((project / "target" / "manifest.json").read_text())
    node = manifest["nodes"]["model.wheel_check.bids_per_window"]
    assert node["config"]["materialized"] == "window_view"
    assert node["depends_on"]["nodes"] == ["seed.wheel_check.bid"]
    assert "macro.window_views.tumble" in node["depends_on"]["macros"]

    built = run_command(
        [dbt, "build", "--select", "+bids_per_window", "bidders_per_window", *flags], cwd=project, env=env
    )
    for line in (built.stdout + built.stderr).splitlines():
        # an existing database is an expected outcome: no metastore ERROR line or Java stack for it
        assert "AlreadyExistsException" not in line and not line.startswith("\tat "), line
        # no JVM or Spark warning but the lines the JVM itself prints as it starts
        if JVM_WARNING.search(line):
            assert line in JVM_STARTS, line
    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    assert {r["unique_id"]: r["status"] for r in results if not r["unique_id"].startswith("operation.")} == {
        "seed.wheel_check.bid": "success",
        "model.wheel_check.bids_per_window": "success",
        "model.wheel_check.bidders_per_window": "success",
    }

    # read the table back through the CLI, from another directory
    shown = run_command(
        [
            dbt,
            "--quiet",
            "show",
            *flags,
            "--output",
            "json",
            "--inline",
            "select * from {{ ref('bids_per_window') }} order by window_start",
        ],
        cwd=elsewhere,
        env=env,
    ).stdout
    assert json.loads(shown)["show"] == [
        {
            "window_start": "2020-04-15T08:00:00",
            "window_end": "2020-04-15T08:10:00",
            "window_time": "2020-04-15T08:09:59.999999",
            "price": 11,
            "bids": 3,
        },
        {
            "window_start": "2020-04-15T08:10:00",
            "window_end": "2020-04-15T08:20:00",
            "window_time": "2020-04-15T08:19:59.999999",
            "price": 10,
            "bids": 3,
        },
    ]

    # the embedded default keeps Spark's state under the project's target/, nowhere else
    target = project / "target"
    for name in SPARK_LEFTOVERS:
        assert (target / name).exists(), f"{name} not under {target}: {sorted(p.name for p in target.iterdir())}"
    assert (target / "spark-warehouse" / "wheel_check.db" / "bids_per_window").is_dir()
    for directory in (project, elsewhere, tmp_path):
        stray = [name for name in SPARK_LEFTOVERS if (directory / name).exists()]
        assert not stray, f"{stray} left in {directory}"
