"""The run lock of a streaming checkpoint: one holder at a time, a dead holder taken over once."""

import json
import os
import socket
import subprocess
import threading
import time

import pytest

from dbt.adapters.window_views.streaming import lock as run_lock
from dbt.adapters.window_views.streaming.lock import LockHeld, RunLock


def test_one_holder_at_a_time(tmp_path):
    path = tmp_path / "checkpoint" / "run.lock"
    first = RunLock(path, "first")
    first.acquire()
    with pytest.raises(LockHeld, match=r"run first \(host .*, pid %d, since " % os.getpid()):
        RunLock(path, "second").acquire()
    first.release()
    assert not path.exists()
    with RunLock(path, "second"):
        assert json.loads(path.read_text())["run_id"] == "second"


def test_racing_runs_get_it_once(tmp_path):
    path = tmp_path / "run.lock"
    won, lost = [], []
    barrier = threading.Barrier(8)

    def race(i):
        barrier.wait()
        try:
            RunLock(path, f"r{i}").acquire()
            won.append(i)
        except LockHeld:
            lost.append(i)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1 and len(lost) == 7


def test_a_dead_holder_on_this_host_is_taken_over(tmp_path):
    path = tmp_path / "run.lock"
    gone = subprocess.Popen(["true"])
    gone.wait()
    path.write_text(json.dumps({"run_id": "dead", "host": socket.gethostname(), "pid": gone.pid, "started": 0, "heartbeat": 0}))
    with RunLock(path, "next"):
        assert json.loads(path.read_text())["run_id"] == "next"
    assert not list(tmp_path.glob(".run.lock.stale.*"))


def test_another_hosts_lock_is_stale_only_without_heartbeat(tmp_path):
    path = tmp_path / "run.lock"
    now = time.time()
    path.write_text(json.dumps({"run_id": "far", "host": "elsewhere", "pid": 1, "started": now, "heartbeat": now}))
    with pytest.raises(LockHeld, match="host elsewhere"):
        RunLock(path, "here").acquire()
    old = now - run_lock.STALE_AFTER - 1
    path.write_text(json.dumps({"run_id": "far", "host": "elsewhere", "pid": 1, "started": old, "heartbeat": old}))
    with RunLock(path, "here"):
        pass


def test_a_torn_lock_is_stale(tmp_path):
    path = tmp_path / "run.lock"
    path.write_text('{"run_id": "to')
    with RunLock(path, "next"):
        assert json.loads(path.read_text())["run_id"] == "next"


def test_the_heartbeat_keeps_a_long_run_alive(tmp_path, monkeypatch):
    monkeypatch.setattr(run_lock, "HEARTBEAT_SECONDS", 0.05)
    path = tmp_path / "run.lock"
    with RunLock(path, "long"):
        first = json.loads(path.read_text())["heartbeat"]
        time.sleep(0.3)
        assert json.loads(path.read_text())["heartbeat"] > first
