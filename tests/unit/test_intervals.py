import pytest

from dbt.adapters.window_views.query.intervals import Interval, IntervalError


@pytest.mark.parametrize(
    "text, micros",
    [
        ("10 minutes", 600_000_000),
        ("1 minute", 60_000_000),
        ("30 seconds", 30_000_000),
        ("1 second", 1_000_000),
        ("2 HOURS", 7_200_000_000),
        ("1 day", 86_400_000_000),
        ("  5   minutes ", 300_000_000),
    ],
)
def test_parses_positive_intervals(text, micros):
    assert Interval.parse(text).micros == micros


def test_negative_and_zero_only_where_allowed():
    assert Interval.parse("-1 minute", allow_negative=True).micros == -60_000_000
    assert Interval.parse("0 seconds", allow_zero=True).micros == 0
    with pytest.raises(IntervalError, match="is negative"):
        Interval.parse("-1 minute")
    with pytest.raises(IntervalError, match="is zero"):
        Interval.parse("0 minutes")


@pytest.mark.parametrize(
    "text", ["1 month", "1 week", "ten minutes", "5", "minutes", "1.5 hours", "1 minute; drop", "'1 minute'", ""]
)
def test_rejects_what_is_not_an_interval(text):
    with pytest.raises(IntervalError, match="is not an interval"):
        Interval.parse(text)


def test_rejects_non_strings():
    with pytest.raises(IntervalError, match="expected an interval string"):
        Interval.parse(10)
