"""The processing-time loop's waits (runner._await): Spark's awaitTermination takes whole
milliseconds and fails on 0, so a wait is never shorter than 1 ms, however close the deadline."""

from types import SimpleNamespace

from dbt.adapters.window_views.streaming import runner


class Query:
    isActive = False

    def __init__(self):
        self.waits = []
        self.stopped = False

    def awaitTermination(self, timeout):
        assert int(timeout * 1000) > 0, f"Spark refuses a timeout of {timeout} s: 'Timeout has to be positive'"
        self.waits.append(timeout)
        return False

    def stop(self):
        self.stopped = True


def test_a_deadline_less_than_a_millisecond_away_still_waits_a_millisecond(monkeypatch):
    # the deadline is 10 s from t=0; the loop reads the clock at 9.9996 s: 0.4 ms left
    clock = iter([0.0, 9.9996, 10.0])
    monkeypatch.setattr(runner.time, "monotonic", lambda: next(clock))
    trigger = SimpleNamespace(
        processing_time=SimpleNamespace(micros=5_000_000), max_duration=SimpleNamespace(micros=10_000_000)
    )
    plan = SimpleNamespace(config=SimpleNamespace(trigger=trigger))
    query, intervals = Query(), []
    runner._await(query, plan, lambda: intervals.append(1))
    assert query.waits == [0.001] and intervals == [1] and query.stopped
