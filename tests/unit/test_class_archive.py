"""The class archive's choices, without a JVM: which options a driver gets, when a background
build starts, and that a dump no builder finished is never mapped (a torn archive crashes a JVM)."""

import os
import subprocess
import time
from types import SimpleNamespace

import pytest

from dbt.adapters.window_views.spark import class_archive
from dbt.adapters.window_views.spark.class_archive import Archive, BuildLock


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(class_archive.CACHE_ENV, str(tmp_path / "jvm"))
    return tmp_path / "jvm"


@pytest.fixture
def spawned(monkeypatch):
    """Builders that would have started: Popen recorded, not run."""
    started = []

    class FakeProcess:
        pid = os.getpid()  # alive, as a builder just started is

    def fake_popen(cmd, **kwargs):
        started.append(cmd)
        return FakeProcess()

    fake = SimpleNamespace(Popen=fake_popen, DEVNULL=subprocess.DEVNULL, STDOUT=subprocess.STDOUT)
    monkeypatch.setattr(class_archive, "subprocess", fake)
    return started


def test_no_archive_yet_starts_one_build_and_the_driver_starts_as_before(cache, spawned):
    assert class_archive.jvm_options() == ""
    assert class_archive.jvm_options() == ""  # the first build's lock holds: one builder
    found = class_archive.archive()
    assert found is not None and found.path.parent == cache
    assert len(spawned) == 1 and spawned[0][-2:] == ["build", str(found.path)]
    assert BuildLock.from_json(found.building.read_text()).pid == os.getpid()


def test_a_built_archive_is_mapped_quietly(cache, spawned):
    found = class_archive.archive()
    found.path.parent.mkdir(parents=True)
    found.path.write_bytes(b"archive")
    assert class_archive.jvm_options() == f"-XX:SharedArchiveFile={found.path} {class_archive.QUIET}"
    assert spawned == []


def test_a_dump_no_builder_finished_is_never_mapped(cache, spawned):
    """A builder killed while its JVM dumped left `<archive>.<pid>.tmp`: not the archive."""
    found = class_archive.archive()
    found.path.parent.mkdir(parents=True)
    found.partial(123).write_bytes(b"torn")
    assert class_archive.jvm_options() == ""
    assert len(spawned) == 1  # and a build starts, which removes that dump first


def test_a_dead_builders_lock_is_taken_over(cache, spawned):
    found = class_archive.archive()
    found.path.parent.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    found.building.write_text(BuildLock(dead.pid, time.time()).to_json())
    class_archive.jvm_options()
    assert len(spawned) == 1


def test_a_live_builders_lock_is_respected_until_it_times_out(cache, spawned):
    found = class_archive.archive()
    found.path.parent.mkdir(parents=True)
    found.building.write_text(BuildLock(os.getpid(), time.time()).to_json())
    class_archive.jvm_options()
    assert spawned == []
    found.building.write_text(BuildLock(os.getpid(), time.time() - class_archive.BUILD_TIMEOUT - 1).to_json())
    class_archive.jvm_options()
    assert len(spawned) == 1


def test_a_failed_build_is_not_retried_for_a_day(cache, spawned):
    found = class_archive.archive()
    found.path.parent.mkdir(parents=True)
    found.failed.write_text("RuntimeError: the JVM exited 1 without an archive\n")
    class_archive.jvm_options()
    assert spawned == []
    day_ago = time.time() - class_archive.RETRY_AFTER - 1
    os.utime(found.failed, (day_ago, day_ago))
    class_archive.jvm_options()
    assert len(spawned) == 1


def test_off_and_an_unwritable_cache_leave_the_driver_as_it_was(tmp_path, monkeypatch, spawned):
    monkeypatch.setenv(class_archive.CACHE_ENV, "off")
    assert class_archive.archive() is None and class_archive.jvm_options() == ""
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    monkeypatch.setenv(class_archive.CACHE_ENV, str(blocked / "jvm"))
    assert class_archive.jvm_options() == ""
    monkeypatch.setenv(class_archive.CACHE_ENV, str(tmp_path / "my cache"))  # Spark splits options at spaces
    assert class_archive.archive() is None and class_archive.jvm_options() == ""
    assert spawned == []


def test_the_archive_is_named_for_the_java_and_the_jars(tmp_path):
    java, jars = tmp_path / "java", tmp_path / "jars"
    jars.mkdir()
    java.write_text("v17")
    (jars / "spark-core.jar").write_text("a")
    before = class_archive.install_key(java, jars)
    (jars / "extra.jar").write_text("b")
    with_jar = class_archive.install_key(java, jars)
    java.write_text("v21 binary")
    assert len({before, with_jar, class_archive.install_key(java, jars)}) == 3


def test_a_driver_given_its_own_archive_keeps_it(cache, spawned):
    own = {"spark.driver.extraJavaOptions": "-Dx=1 -XX:SharedArchiveFile=/opt/mine.jsa"}
    assert class_archive.with_archive(own) == own
    found = class_archive.archive()
    found.path.parent.mkdir(parents=True)
    found.path.write_bytes(b"archive")
    plain = {"spark.driver.extraJavaOptions": "-Dx=1"}
    assert class_archive.with_archive(plain)["spark.driver.extraJavaOptions"] == (
        f"-Dx=1 -XX:SharedArchiveFile={found.path} {class_archive.QUIET}"
    )


def test_a_build_removes_other_installs_archives_unused_for_a_month(cache):
    found = Archive(cache / "spark-4.3.0-aaaa.jsa")
    cache.mkdir(parents=True)
    old, recent = cache / "spark-4.2.0-bbbb.jsa", cache / "spark-4.2.1-cccc.jsa"
    for path in (found.path, old, recent):
        path.write_bytes(b"archive")
    month_ago = time.time() - class_archive.UNUSED_FOR - 1
    os.utime(old, (month_ago, month_ago))
    class_archive.prune(found)
    assert sorted(p.name for p in cache.iterdir()) == sorted([found.path.name, recent.name])


def test_a_build_is_said_once_with_where_it_goes_and_how_to_turn_it_off(cache, spawned, monkeypatch):
    said = []
    monkeypatch.setattr(class_archive, "logger", SimpleNamespace(info=said.append))
    class_archive.jvm_options()
    class_archive.jvm_options()  # the build runs: nothing said again
    assert len(said) == 1, said
    assert str(cache) in said[0] and f"{class_archive.CACHE_ENV}=off turns it off" in said[0]
