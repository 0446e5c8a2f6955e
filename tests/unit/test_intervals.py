import pytest

from dbt.adapters.window_views.errors import MacroArgumentError
from dbt.adapters.window_views.query.intervals import Interval, IntervalError, did_you_mean, window_interval


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


@pytest.mark.parametrize(
    "value, signed, message",
    [
        (
            "5 minuts",
            False,
            "= '5 minuts' is not an interval: expected '<n> <unit>' with unit second(s), minute(s), "
            "hour(s) or day(s), e.g. '10 minutes'; did you mean '5 minutes'?",
        ),
        ("1 min", False, "did you mean '1 minute'?"),
        ("-30secs", True, "did you mean '-30 seconds'?"),
        ("0 minutes", False, "= '0 minutes' is zero: it must be a positive interval"),
        ("-5 minutes", False, "= '-5 minutes' is negative: it must be a positive interval"),
        ("-36501 days", True, "= '-36501 days' is too long: at most 36500 days (about 100 years)"),
        (10, False, " must be an interval string such as '10 minutes', got 10"),
    ],
)
def test_a_window_argument_is_refused_naming_the_macro_and_argument(value, signed, message):
    with pytest.raises(MacroArgumentError) as refused:
        window_interval(value, "window_views.tumble: argument 'size'", signed)
    assert str(refused.value.msg).startswith("window_views.tumble: argument 'size'")
    assert message in str(refused.value.msg)


def test_a_window_argument_keeps_its_text_single_spaced():
    assert window_interval(" 5   minutes ", "window_views.hop: argument 'slide'") == Interval(300_000_000, "5 minutes")
    assert window_interval("0 seconds", "window_views.hop: argument 'offset'", signed=True).micros == 0
    assert did_you_mean("1 month") == "" and did_you_mean("5 ms") == ""
