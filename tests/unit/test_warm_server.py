"""warm_spark without Spark: the profile's settings checked with the fix named, the records on
disk, the settings hash that keeps a changed profile from sharing a server, and the start lock."""

from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.connections import WindowViewsCredentials
from dbt.adapters.window_views.spark import warm_server
from dbt.adapters.window_views.spark.warm_server import LockHolder, ServerRecord, WarmSpec


def credentials(**profile):
    return WindowViewsCredentials.from_dict({"schema": "s", "method": "session", **profile})


def test_warm_spark_settings_are_read_with_their_default():
    assert credentials().warm_spark is False
    creds = credentials(warm_spark=True)
    assert creds.idle_timeout_seconds == 1800
    assert credentials(warm_spark=True, warm_spark_idle_timeout="90 seconds").idle_timeout_seconds == 90


@pytest.mark.parametrize(
    "profile, message",
    [
        ({"warm_spark": "yes"}, "profile setting 'warm_spark' = 'yes' is not valid; expected true or false"),
        (
            {"warm_spark": True, "warm_spark_idle_timeout": "soon"},
            "profile setting 'warm_spark_idle_timeout' = 'soon' is not valid: 'soon' is not an interval",
        ),
        ({"warm_spark": True, "warm_spark_idle_timeout": 30}, "fix: an interval such as '30 minutes'"),
        (
            {"warm_spark": True, "server_side_parameters": {"spark.remote": "sc://h:15002"}},
            "spark.remote already names one; fix: remove warm_spark",
        ),
        ({"warm_spark": True, "method": "thrift", "host": "h"}, "needs method: session"),
    ],
)
def test_a_bad_warm_spark_setting_is_named_with_the_fix(profile, message):
    with pytest.raises(DbtRuntimeError) as raised:
        credentials(**profile)
    assert message in str(raised.value)


def test_records_round_trip_and_an_unreadable_one_is_stale(tmp_path):
    record = ServerRecord(12, 15002, "/p", "abc", 1.0, 2.0, 60.0, watchdog_pid=13)
    assert ServerRecord.from_json(record.to_json()) == record
    assert record.url == "sc://127.0.0.1:15002"
    holder = LockHolder(1, "h", 3.0)
    assert LockHolder.from_json(holder.to_json()) == holder
    warm_server.write_record(tmp_path, record)
    assert warm_server.read_record(tmp_path) == record
    (tmp_path / "server.json").write_text('{"pid": 1')  # half written
    assert warm_server.read_record(tmp_path) is None
    (tmp_path / "server.json").write_text('{"version": 0, "pid": 1}')  # an older plugin's
    assert warm_server.read_record(tmp_path) is None


def test_the_settings_hash_changes_with_any_spark_setting_and_ignores_the_warm_keys():
    base = {warm_server.DIR_KEY: "/p/target/warm_spark", warm_server.IDLE_KEY: "60", "spark.sql.x": "1"}
    spec = WarmSpec.from_params(base)
    assert spec is not None and spec.idle_timeout == 60 and spec.settings == (("spark.sql.x", "1"),)
    longer = WarmSpec.from_params({**base, warm_server.IDLE_KEY: "600"})
    assert longer is not None and longer.settings_hash == spec.settings_hash
    changed = WarmSpec.from_params({**base, "spark.sql.x": "2"})
    assert changed is not None and changed.settings_hash != spec.settings_hash
    assert WarmSpec.from_params({"spark.sql.x": "1"}) is None


def test_the_lock_admits_one_process_and_a_dead_holders_lock_is_taken_over(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / "lock").write_text(LockHolder(dead.pid, warm_server.socket.gethostname(), time.time()).to_json())
    order = []

    def second() -> None:
        with warm_server.locked(tmp_path):
            order.append("second")

    with warm_server.locked(tmp_path, timeout=5):
        assert LockHolder.from_json((tmp_path / "lock").read_text()).pid == os.getpid()
        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.5)
        order.append("first")
    thread.join(5)
    assert order == ["first", "second"] and not (tmp_path / "lock").exists()
    (tmp_path / "lock").write_text(LockHolder(os.getpid(), warm_server.socket.gethostname(), time.time()).to_json())
    with pytest.raises(DbtRuntimeError, match="is being started or stopped by pid"):
        with warm_server.locked(tmp_path, timeout=0.5):
            pass


def test_java_is_checked_only_before_a_server_starts(tmp_path, monkeypatch):
    """A reused server needs no `java -version` (a JVM start of its own, per dbt command)."""
    spec = WarmSpec(str(tmp_path), "/p", 60.0, (("spark.sql.x", "1"),))
    checks = []
    started = ServerRecord(os.getpid(), 15002, "/p", spec.settings_hash, 1.0, 1.0, 60.0, watchdog_pid=os.getpid())
    monkeypatch.setattr(warm_server, "start", lambda spec: started)
    monkeypatch.setattr(warm_server, "why_unusable", lambda record: None)
    assert warm_server.ensure(spec, before_start=lambda: checks.append("java")) == started.url
    assert checks == ["java"]
    assert warm_server.ensure(spec, before_start=lambda: checks.append("java")) == started.url
    assert checks == ["java"]  # the recorded server reused: no check


def test_with_warm_spark_a_schema_is_listed_when_a_lookup_first_needs_it_and_then_once():
    """dbt's cache population before any model runs would open a Spark Connect client even for a
    `dbt compile` that looks nothing up; deferred, a schema is listed at its first lookup, once."""
    from dbt.adapters.cache import RelationsCache
    from dbt.adapters.spark.relation import SparkRelation

    from dbt.adapters.window_views.relation_cache import DeferredSchemas

    class Adapter:
        def __init__(self) -> None:
            self.cache = RelationsCache()
            self.listed: list = []

        def list_relations_without_caching(self, schema_relation):
            self.listed.append(schema_relation.schema)
            return [SparkRelation.create(schema=schema_relation.schema, identifier="t", type="table")]

    adapter, deferred = Adapter(), DeferredSchemas()
    deferred.defer([SparkRelation.create(schema="S1"), SparkRelation.create(schema="s2")])
    assert adapter.listed == [] and (None, "s1") not in adapter.cache
    deferred.fill(adapter, None, "s1")
    deferred.fill(adapter, None, "S1")
    deferred.fill(adapter, None, "other")  # not deferred: dbt's own lookup
    assert adapter.listed == ["S1"] and (None, "s1") in adapter.cache and (None, "s2") not in adapter.cache
    assert [r.identifier for r in adapter.cache.get_relations(None, "s1")] == ["t"]


def test_warm_spark_without_spark_connects_client_is_named_when_the_profile_is_read(monkeypatch):
    from pyspark.errors import PySparkImportError
    from pyspark.sql.connect import utils

    def missing():
        raise PySparkImportError(
            errorClass="PACKAGE_NOT_INSTALLED", messageParameters={"package_name": "Pandas", "minimum_version": "2.2.0"}
        )

    monkeypatch.setattr(utils, "check_dependencies", missing)
    with pytest.raises(DbtRuntimeError) as raised:
        credentials(warm_spark=True)
    message = str(raised.value)
    assert "needs Spark Connect's client" in message and "Pandas" in message, message
    assert "pip install 'dbt-window-views[connect]'" in message
    assert credentials().warm_spark is False  # without warm_spark nothing is asked of the install


def test_an_embedded_start_beside_the_projects_live_warm_server_names_it_and_its_stop(tmp_path, monkeypatch):
    """warm_spark turned off while its server runs: the server holds the Derby metastore."""
    from pyspark.sql import SparkSession

    from dbt.adapters.window_views.spark import session

    target = tmp_path / "target"
    (target / "warm_spark").mkdir(parents=True)
    params = session.embedded_settings(target, {})
    assert warm_server.holding_metastore(params) is None  # no record: nothing to say
    warm_server.write_record(
        target / "warm_spark", ServerRecord(os.getpid(), 15002, str(tmp_path), "h", 1.0, 1.0, 60.0)
    )
    monkeypatch.setattr(SparkSession, "getActiveSession", classmethod(lambda cls: None))
    with pytest.raises(DbtRuntimeError) as raised:
        session.spark_session(params)
    message = str(raised.value)
    assert f"warm Spark (pid {os.getpid()}" in message and "holds the project's metastore" in message, message
    assert f"warm_server stop --project-dir {tmp_path}`" in message, message
    dead = ServerRecord(2**22 + 7, 15002, str(tmp_path), "h", 1.0, 1.0, 60.0)  # a pid no process has
    warm_server.write_record(target / "warm_spark", dead)
    assert warm_server.holding_metastore(params) is None
