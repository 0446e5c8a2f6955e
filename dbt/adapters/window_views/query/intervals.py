"""Interval strings ('10 minutes', '-1 hour') parsed into exact microseconds, and the rule a
window macro's interval argument is checked by (`window_interval`)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Optional, Tuple

from dbt.adapters.window_views.errors import IntervalError, MacroArgumentError

UNIT_MICROS = {
    "second": 1_000_000,
    "minute": 60_000_000,
    "hour": 3_600_000_000,
    "day": 86_400_000_000,
}
# the package form's macros match with this very pattern (macros/_internal/_rules.sql, made from rules.py)
PATTERN = r"(?i)^\s*([+-]?)\s*([0-9]{1,12})\s+(second|minute|hour|day)s?\s*$"
_INTERVAL = re.compile(PATTERN)
# a number and a word that may be a misspelt unit ('5 minuts', '10mins', '-30secs')
_NUMBER_AND_WORD = re.compile(r"^ *([+-]?) *([0-9]{1,12}) *([A-Za-z]+) *$")
ALLOWED = "'<n> <unit>' with unit second(s), minute(s), hour(s) or day(s), e.g. '10 minutes'"
# a window argument's limit, about 100 years: window bounds are epoch micros in a BIGINT, and
# every bound of a timestamp in Spark's range (years 1-9999) stays far inside it
MAX_DAYS = 36_500
MAX_MICROS = MAX_DAYS * UNIT_MICROS["day"]


@dataclass(frozen=True)
class Interval:
    micros: int
    text: str

    @classmethod
    def parse(
        cls, value: object, *, allow_negative: bool = False, allow_zero: bool = False, window: bool = False
    ) -> "Interval":
        """`value` parsed; `window`: as a window argument (a size, slide, step, offset or gap),
        at most MAX_DAYS (a window macro's own arguments: `window_interval`)."""
        problem, micros = _checked(value, allow_negative, allow_zero, window)
        if problem is not None:
            shown = repr(value)
            raise IntervalError(
                {
                    "type": f"expected an interval string such as '10 minutes', got {shown}",
                    "form": f"{shown} is not an interval: expected {ALLOWED}",
                    "zero": f"{shown} is zero: the interval must be positive",
                    "negative": f"{shown} is negative: the interval must be positive",
                    "long": f"{shown} is too long: at most {MAX_DAYS} days (about 100 years)",
                }[problem]
            )
        assert isinstance(value, str)
        return cls(micros=micros, text=text_of(value))

    def __str__(self) -> str:
        return self.text


def _checked(value: object, negative: bool, zero: bool, capped: bool) -> Tuple[Optional[str], int]:
    """The one check of an interval: (what is wrong with it, or None; its microseconds). Both
    readers (`Interval.parse`, `window_interval`) word the problem for their callers."""
    if not isinstance(value, str):
        return "type", 0
    micros = _micros(value)
    if micros is None:
        return "form", 0
    if micros == 0 and not zero:
        return "zero", micros
    if micros < 0 and not negative:
        return "negative", micros
    if capped and abs(micros) > MAX_MICROS:
        return "long", micros
    return None, micros


def _micros(value: str) -> Optional[int]:
    """The microseconds of an interval string, or None when it is not one."""
    match = _INTERVAL.match(value)
    if not match:
        return None
    sign, amount, unit = match.groups()
    return int(amount) * UNIT_MICROS[unit.lower()] * (-1 if sign == "-" else 1)


_DAY_TO_SECOND = re.compile(r"^\s*([0-9]{1,9}) ([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?\s*$")


def day_to_second_micros(value: str) -> Optional[int]:
    """The microseconds of a DAY TO SECOND interval's text ('0 02:00:00.000001'), as query/frames.py
    writes a RANGE frame's bounds, or None when it is not one."""
    match = _DAY_TO_SECOND.match(value)
    if not match:
        return None
    days, hours, minutes, seconds, fraction = match.groups()
    whole = ((int(days) * 24 + int(hours)) * 60 + int(minutes)) * 60 + int(seconds)
    return whole * 1_000_000 + int((fraction or "").ljust(6, "0"))


def text_of(value: str) -> str:
    """An interval as the marker, table properties and labels show it: its words, single-spaced."""
    return " ".join(value.split())


def window_interval(value: object, argument: str, signed: bool = False) -> Interval:
    """A window macro's interval argument (a size, slide, step or gap; `signed`: an offset, which
    may be zero or negative), at most MAX_DAYS. `argument` names it ("window_views.hop: argument
    'slide'"); MacroArgumentError says what is wrong and how to fix it."""
    problem, micros = _checked(value, signed, signed, True)
    if problem is not None:
        raise MacroArgumentError(
            {
                "type": f"{argument} must be an interval string such as '10 minutes', got {value}",
                "form": f"{argument} = '{value}' is not an interval: expected {ALLOWED}{did_you_mean(str(value))}",
                "zero": f"{argument} = '{value}' is zero: it must be a positive interval",
                "negative": f"{argument} = '{value}' is negative: it must be a positive interval",
                "long": f"{argument} = '{value}' is too long: at most {MAX_DAYS} days (about 100 years), so that "
                "window bounds stay within Spark's timestamps; fix: use a shorter interval",
            }[problem]
        )
    assert isinstance(value, str)
    return Interval(micros=micros, text=text_of(value))


def did_you_mean(value: str) -> str:
    """ "; did you mean '5 minutes'?" for a misspelt unit, else '': a unit whose letters the word's
    (less a plural s) spell in order from its first ('minuts', '3 hrs', '1 dys', '10mins'), or that
    the word holds in order ('minnutes'); never for another unit ('1 month', '5 ms')."""
    match = _NUMBER_AND_WORD.match(value)
    if not match:
        return ""
    sign, amount, word = match.groups()
    word = word.lower()
    word = word[:-1] if word.endswith("s") else word
    for unit in UNIT_MICROS:
        if len(word) >= 2 and (re.match("^" + ".*".join(word), unit) or re.match("^" + ".*".join(unit), word)):
            return f"; did you mean '{sign}{amount} {unit}{'' if int(amount) == 1 else 's'}'?"
    return ""


def describe_epoch_micros(micros: Optional[int]) -> str:
    """Epoch microseconds as the UTC time they stand for, to the second ("none" for None)."""
    if micros is None:
        return "none"
    return (dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=micros)).strftime("%Y-%m-%d %H:%M:%S")
