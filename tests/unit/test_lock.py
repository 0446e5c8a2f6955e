"""The run lock of a streaming checkpoint: one holder at a time, a dead holder taken over once."""

import json
import os
import socket
import subprocess
import threading
import time

import pytest

from dbt.adapters.window_views.spark import processes
from dbt.adapters.window_views.streaming.commit import lock as run_lock
from dbt.adapters.window_views.streaming.commit.lock import LockHeld, RunLock


def test_one_holder_at_a_time(tmp_path, fs):
    path = tmp_path / "checkpoint" / "run.lock"
    first = RunLock(fs, str(path), "first")
    first.acquire()
    with pytest.raises(LockHeld, match=r"run first \(host .*, pid %d, since " % os.getpid()):
        RunLock(fs, str(path), "second").acquire()
    first.release()
    assert not path.exists()
    with RunLock(fs, str(path), "second"):
        assert json.loads(path.read_text())["run_id"] == "second"


def race(fs, path, runs: int):
    """`runs` threads acquiring the lock at once: the run ids that got it, and those refused."""
    won, lost = [], []
    barrier = threading.Barrier(runs)

    def attempt(i):
        barrier.wait()
        try:
            RunLock(fs, str(path), f"r{i}").acquire()
            won.append(i)
        except LockHeld:
            lost.append(i)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(runs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return won, lost


def test_racing_runs_get_it_once(tmp_path, fs):
    won, lost = race(fs, tmp_path / "run.lock", 8)
    assert len(won) == 1 and len(lost) == 7


def test_a_dead_holder_on_this_host_is_taken_over(tmp_path, fs):
    path = tmp_path / "run.lock"
    gone = subprocess.Popen(["true"])
    gone.wait()
    path.write_text(
        json.dumps({"run_id": "dead", "host": socket.gethostname(), "pid": gone.pid, "started": 0, "heartbeat": 0})
    )
    with RunLock(fs, str(path), "next"):
        assert json.loads(path.read_text())["run_id"] == "next"
    assert not list(tmp_path.glob(".run.lock.takeover.*"))


def test_a_holder_whose_pid_a_later_process_got_is_taken_over(tmp_path, fs):
    """A busy host reuses pids: the lock of a run that died names a pid a newer process has now
    (here: this one, with another start time), which does not hold it."""
    path = tmp_path / "run.lock"
    me = {"run_id": "dead", "host": socket.gethostname(), "pid": os.getpid(), "started": 0, "heartbeat": 0}
    holder = run_lock.Holder.from_json(me)
    assert not run_lock.stale(run_lock.Holder.from_json({**me, "pid_start": processes.started(os.getpid())}))
    assert not run_lock.stale(holder)  # no start time recorded (no /proc): the pid alone decides
    path.write_text(json.dumps({**me, "pid_start": "1"}))
    with RunLock(fs, str(path), "next"):
        assert json.loads(path.read_text())["run_id"] == "next"


def test_another_hosts_lock_is_stale_only_without_heartbeat(tmp_path, fs):
    path = tmp_path / "run.lock"
    now = time.time()
    path.write_text(json.dumps({"run_id": "far", "host": "elsewhere", "pid": 1, "started": now, "heartbeat": now}))
    with pytest.raises(LockHeld, match="host elsewhere"):
        RunLock(fs, str(path), "here").acquire()
    old = now - run_lock.STALE_AFTER - 1
    path.write_text(json.dumps({"run_id": "far", "host": "elsewhere", "pid": 1, "started": old, "heartbeat": old}))
    with RunLock(fs, str(path), "here"):
        pass


def test_a_torn_lock_is_stale(tmp_path, fs):
    path = tmp_path / "run.lock"
    path.write_text('{"run_id": "to')
    with RunLock(fs, str(path), "next"):
        assert json.loads(path.read_text())["run_id"] == "next"


def test_the_heartbeat_keeps_a_long_run_alive(tmp_path, monkeypatch, fs):
    monkeypatch.setattr(run_lock, "HEARTBEAT_SECONDS", 0.05)
    path = tmp_path / "run.lock"
    with RunLock(fs, str(path), "long"):
        first = json.loads(path.read_text())["heartbeat"]
        time.sleep(0.3)
        assert json.loads(path.read_text())["heartbeat"] > first


def test_a_stale_lock_is_taken_over_once_by_racing_runs(tmp_path, fs):
    """No rename: the takeover marker named after the dead holder is created once."""
    path = tmp_path / "run.lock"
    gone = subprocess.Popen(["true"])
    gone.wait()
    path.write_text(
        json.dumps({"run_id": "dead", "host": socket.gethostname(), "pid": gone.pid, "started": 0, "heartbeat": 0})
    )
    won, lost = race(fs, path, 6)
    assert len(won) == 1 and len(lost) == 5
    assert json.loads(path.read_text())["run_id"] == f"r{won[0]}"


def test_a_takeover_marker_left_by_a_dead_run_does_not_block(tmp_path, fs):
    path = tmp_path / "run.lock"
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = {"run_id": "dead", "host": socket.gethostname(), "pid": gone.pid, "started": 0, "heartbeat": 0}
    path.write_text(json.dumps(dead))
    (tmp_path / ".run.lock.takeover.dead-0").write_text(json.dumps({**dead, "run_id": "dead-taker"}))
    with RunLock(fs, str(path), "next"):
        assert json.loads(path.read_text())["run_id"] == "next"
    assert not list(tmp_path.glob(".run.lock.takeover.*"))


def test_a_lock_overwritten_by_a_racing_put_is_not_taken(tmp_path, fs, monkeypatch):
    """A store whose conditional create is check-then-put: both runs' PUTs succeed, the later
    one's stays; the run whose lock was overwritten reads it back and gives way."""
    path = tmp_path / "run.lock"
    other = json.dumps(
        {"run_id": "other", "host": "elsewhere", "pid": 1, "started": time.time(), "heartbeat": time.time()}
    )
    create_new = type(fs).create_new

    def check_then_put(self, location, data):
        ok = create_new(self, location, data)
        if ok and location == str(path):
            path.write_text(other)  # the racing run's PUT lands after ours
        return ok

    monkeypatch.setattr(type(fs), "create_new", check_then_put)
    with pytest.raises(LockHeld, match="run other"):
        RunLock(fs, str(path), "mine").acquire()
