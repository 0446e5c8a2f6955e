"""The warm server's warm-up without Spark: rounds only while no dbt command uses the server,
its database dropped when done, an error ending the warm-up (never the watchdog), and the
rounds' setting."""

from __future__ import annotations

import subprocess
import sys
from typing import List

import pytest
from sqlglot import exp

from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.query.windows import Tumble
from dbt.adapters.window_views.spark import warm_up
from dbt.adapters.window_views.spark.warm_up import DATABASE, WarmUp


class FakeSpark:
    def __init__(self, fail_on: str = "") -> None:
        self.statements: List[str] = []
        self.fail_on = fail_on
        self.stopped = False
        self.release_session_on_close = True

    def sql(self, statement: str) -> "FakeSpark":
        if self.fail_on and self.fail_on in statement:
            raise RuntimeError("[CONNECT] the server is gone\nat org.apache.spark...")
        self.statements.append(statement)
        return self

    def collect(self) -> List[object]:
        return []

    def stop(self) -> None:
        self.stopped = True


def warm(monkeypatch, total: int, busy: List[bool], spark: FakeSpark) -> WarmUp:
    warming = WarmUp("sc://127.0.0.1:1", total, busy=lambda: busy[0])

    def connect() -> None:
        warming.spark = spark
        for statement in warm_up.SETUP:
            warming._sql(statement)

    monkeypatch.setattr(warming, "_connect", connect)
    return warming


def test_rounds_run_only_while_no_command_uses_the_server_and_its_database_is_dropped(monkeypatch, capsys):
    spark, busy = FakeSpark(), [True]
    warming = warm(monkeypatch, 2, busy, spark)
    warming.step()
    assert spark.statements == [] and warming.pending  # a dbt command runs: not even a connection
    busy[0] = False
    warming.step()
    per_round = len(warm_up.ROUND) + len(warm_up.QUERIES)
    assert spark.statements[0] == f"DROP DATABASE IF EXISTS {DATABASE} CASCADE"  # a cut-off warm-up's leftovers
    assert len(spark.statements) == len(warm_up.SETUP) + per_round and warming.pending
    warming.step()
    assert not warming.pending and spark.stopped
    assert spark.statements[-1] == f"DROP DATABASE IF EXISTS {DATABASE} CASCADE"
    assert len(spark.statements) == len(warm_up.SETUP) + 2 * per_round + 1
    assert "warmed up in 2 round(s)" in capsys.readouterr().out
    warming.step()  # done: nothing more
    assert len(spark.statements) == len(warm_up.SETUP) + 2 * per_round + 1


def test_an_error_ends_the_warm_up_with_one_line_and_the_watchdog_goes_on(monkeypatch, capsys):
    spark = FakeSpark(fail_on="RENAME TO")
    warming = warm(monkeypatch, 5, [False], spark)
    warming.step()  # raises nothing
    assert not warming.pending and spark.stopped
    assert not spark.release_session_on_close  # the server may be gone: no release retried against it
    out = capsys.readouterr().out
    assert "warm-up stopped after 0 round(s): [CONNECT] the server is gone" in out
    assert "org.apache" not in out


def test_every_statement_stays_in_the_warm_up_database():
    for statement in (*warm_up.ROUND, *warm_up.QUERIES, *warm_up.SETUP[2:]):
        text = sqlexpr.to_sql(statement)
        if text != "SHOW DATABASES":
            tables = [t for t in statement.find_all(exp.Table) if isinstance(t.this, exp.Identifier)]  # not RANGE(n)
            assert all(t.db == DATABASE for t in tables) or f"IN {DATABASE} " in text, text
            assert tables or isinstance(statement, exp.Command), text


def test_the_warm_up_windows_are_the_plugins():
    """The warm-up's window aggregate renders its windows with the plugin's own arithmetic."""
    t = sqlexpr.epoch_micros(sqlexpr.column("ts"))
    start = Tumble("ts", size=10 * 60_000_000).start_sql(t)
    assert any(node == start for node in warm_up.ROUND[4].find_all(type(start)))


@pytest.mark.parametrize(
    "value, rounds", [(None, warm_up.DEFAULT_ROUNDS), ("0", 0), (" 3 ", 3), ("-2", 0), ("many", 12)]
)
def test_the_rounds_setting(monkeypatch, capsys, value, rounds):
    if value is None:
        monkeypatch.delenv(warm_up.ROUNDS_ENV, raising=False)
    else:
        monkeypatch.setenv(warm_up.ROUNDS_ENV, value)
    assert warm_up.rounds() == rounds
    if value == "many":
        assert "WINDOW_VIEWS_WARM_UP_ROUNDS='many' is not a whole number" in capsys.readouterr().out


def test_the_stop_command_prints_no_python_warning(tmp_path):
    cmd = [sys.executable, "-m", "dbt.adapters.window_views.spark.warm_server", "stop", "--project-dir", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "no warm Spark was started" in proc.stdout
    assert proc.stderr == ""
