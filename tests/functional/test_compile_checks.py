"""`dbt compile` runs the window_view checks that need no Spark (compile_checks.py): a bad
streaming or on_window_close model fails compilation with the materialization's message, naming
the model, the window expression and the fix; good models compile without running anything."""

import subprocess
import sys
from pathlib import Path

from tests.support.dbt_projects import errors, sources_yml, write_project

STREAM = "materialized='window_view', execution='streaming', watermark={'column': 'ts', 'delay': '1 minute'}"
EOWC = "materialized='window_view', emit='on_window_close', watermark={'column': 'ts', 'delay': '1 minute'}"
TICKS = "{{ source('raw', 'ticks') }}"
FIX_ORDER = (
    "fix: order the window by the watermark column `ts` (ascending), or partition it by window_start, "
    "window_end of a window TVF"
)

# model -> (config, SQL, the message after "Compilation Error in model <model> (models/<model>.sql)")
BAD = {
    "stream_order": (
        STREAM,
        f"select ts, lag(price) over (order by seq) as p from {TICKS}",
        "window_view model 'stream_order': `LAG(price) OVER (ORDER BY seq)` is not ordered by the watermark "
        f"column, so its rows never close; {FIX_ORDER}",
    ),
    "stream_unbounded": (
        STREAM,
        f"select ts, sum(price) over (order by ts rows between current row and unbounded following) as p from {TICKS}",
        "window_view model 'stream_unbounded': `SUM(price) OVER (ORDER BY ts rows BETWEEN CURRENT ROW AND "
        "UNBOUNDED following)` has a frame ending in UNBOUNDED FOLLOWING, which never closes; fix: end the frame "
        "at CURRENT ROW or a bounded FOLLOWING offset",
    ),
    "stream_ntile": (
        STREAM,
        f"select ts, ntile(4) over (partition by stock order by ts) as q from {TICKS}",
        "window_view model 'stream_ntile': `NTILE(4) OVER (PARTITION BY stock ORDER BY ts)` depends on the whole "
        f"partition, which never closes; {FIX_ORDER}",
    ),
    "stream_no_watermark": (
        "materialized='window_view', execution='streaming'",
        f"select ts, lag(price) over (order by ts) as p from {TICKS}",
        "window_view model 'stream_no_watermark': config 'watermark' is missing: execution='streaming' needs one; "
        "add watermark={'column': '<event time column>', 'delay': '<interval>'}",
    ),
    "stream_upstream": (
        STREAM,
        "select ts, lag(price) over (order by ts) as p from {{ ref('landing') }}",
        "window_view model 'stream_upstream': upstream `landing` is a 'table' model, which is rewritten in place, "
        "so a stream would read its rows again as new rows; fix: streaming window views read sources, "
        "append-only incremental models and streaming on_window_close window views "
        "(e.g. materialized='incremental' with incremental_strategy='append')",
    ),
    "eowc_order": (
        EOWC,
        f"select ts, lag(price) over (partition by stock order by seq) as p from {TICKS}",
        "window_view model 'eowc_order': `LAG(price) OVER (PARTITION BY stock ORDER BY seq)` is not ordered by "
        f"the watermark column, so its rows never close; {FIX_ORDER}",
    ),
}


def write_models(project, models):
    project.write("models/sources.yml", sources_yml("ticks"))
    project.model("landing", f"{{{{ config(materialized='table') }}}}\nselect * from {TICKS}")
    for name, (config, sql, *_) in models.items():
        project.model(name, f"{{{{ config({config}) }}}}\n{sql}")


def test_bad_models_fail_dbt_compile_with_the_materialization_message(project):
    write_models(project, BAD)
    for name, (_, _, message) in BAD.items():
        # dbt compile stops at the first error, so one model at a time
        result = project.dbt("compile", "-s", name, ok=False)
        lines = [line.strip() for line in errors(result).splitlines()]
        assert f"Compilation Error in model {name} (models/{name}.sql)" in lines, errors(result)
        assert message in lines, errors(result)
    project.dbt("compile", "-s", "landing")


GOOD = {
    # streaming: over windows, a window TVF, and streams over append-only inputs
    "good_stream_over": (
        STREAM + ", emit='on_window_close'",
        "select stock, ts, lag(price) over (partition by stock order by ts, seq) as prev,\n"
        "  sum(price) over (partition by stock order by ts desc, seq desc rows between 1 preceding and current row) as pair\n"
        f"from {TICKS}",
    ),
    "good_stream_tvf": (
        STREAM + ", emit='on_window_close'",
        "select window_start, window_end, count(*) as n\n"
        "from {{ window_views.tumble(source('raw', 'ticks'), 'ts', '10 minutes') }}\ngroup by window_start, window_end",
    ),
    "good_stream_chain": (
        STREAM.replace("'ts'", "'window_end'"),
        "select window_end, sum(n) over (order by window_end rows between 2 preceding and current row) as n3\n"
        "from {{ ref('good_stream_tvf') }}",
    ),
    "good_stream_appended": (STREAM, "select ts, lag(price) over (order by ts) as prev from {{ ref('appended') }}"),
    # batch: on_window_close over windows and TVF, on_update
    "good_batch_eowc": (
        EOWC,
        "select stock, ts, avg(price) over (partition by stock order by ts rows between 2 preceding and current row) as avg3\n"
        f"from {TICKS}",
    ),
    "good_batch_tvf": (
        EOWC,
        "select window_start, window_end, sum(price) as total\n"
        "from {{ window_views.hop(source('raw', 'ticks'), 'ts', '5 minutes', '10 minutes') }}\n"
        "group by window_start, window_end",
    ),
    "good_batch": (
        "materialized='window_view'",
        f"select stock, ntile(4) over (order by price) as q from {TICKS}",
    ),
}


def refuse(name):
    def called(*args, **kwargs):
        raise AssertionError(f"{name} ran")

    return called


def test_good_models_compile_without_running_anything(project, monkeypatch):
    from dbt.adapters.window_views.impl import WindowViewsAdapter
    from dbt.adapters.window_views.streaming import runner

    for name in ("run_stream", "batch_statement"):
        monkeypatch.setattr(WindowViewsAdapter, name, refuse(name))
    monkeypatch.setattr(runner, "run", refuse("runner.run"))
    write_models(project, GOOD)
    project.model(
        "appended",
        f"{{{{ config(materialized='incremental', incremental_strategy='append') }}}}\nselect * from {TICKS}",
    )
    result = project.dbt("compile")
    assert sorted(r.node.name for r in result.result if r.status == "success") == sorted([*GOOD, "landing", "appended"])
    for name in GOOD:
        assert (project.root / "target" / "compiled" / "wv_test" / "models" / f"{name}.sql").exists(), name
    # nothing was written or started
    assert not project.spark.catalog.databaseExists(project.schema)
    assert project.spark.streams.active == []


def test_run_and_build_fail_at_compile_before_the_materialization(project, monkeypatch):
    from dbt.adapters.window_views.impl import WindowViewsAdapter

    for name in ("window_view_plan", "run_stream", "batch_statement"):
        monkeypatch.setattr(WindowViewsAdapter, name, refuse(name))
    cases = {name: BAD[name] for name in ("stream_order", "stream_no_watermark", "eowc_order")}
    write_models(project, cases)
    for command in ("run", "build"):
        result = project.dbt(command, "-s", *cases, ok=False)
        by_model = {r.node.name: r for r in result.result}
        for name, (_, _, message) in cases.items():
            assert by_model[name].status == "error", (command, name)
            assert by_model[name].message == f"Compilation Error in model {name} (models/{name}.sql)\n  {message}"
    exists = project.spark.catalog.databaseExists(project.schema)
    assert not exists or not [t for t in project.spark.catalog.listTables(project.schema) if not t.isTemporary]


def test_a_compile_that_looks_nothing_up_starts_no_spark(tmp_path):
    """dbt lists every schema's tables before the models compile; the adapter lists a schema at
    its first lookup instead, so a `dbt compile` of models that query nothing starts no JVM (a
    separate dbt process on the embedded default: its metastore would appear under target/)."""
    write_project(tmp_path, "wv_compile", "compiled", {})
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "sources.yml").write_text(sources_yml("ticks"))
    (tmp_path / "models" / "tumbled.sql").write_text(
        "{{ config(materialized='window_view') }}\n"
        "select window_start, window_end, count(*) as n\n"
        "from {{ window_views.tumble(source('raw', 'ticks'), 'ts', '10 minutes') }}\n"
        "group by window_start, window_end\n"
    )
    dbt = str(Path(sys.executable).with_name("dbt"))
    proc = subprocess.run(
        [dbt, "compile", "--project-dir", str(tmp_path), "--profiles-dir", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert (tmp_path / "target" / "compiled" / "wv_compile" / "models" / "tumbled.sql").exists()
    assert not (tmp_path / "target" / "metastore_db").exists(), "the compile started Spark"
