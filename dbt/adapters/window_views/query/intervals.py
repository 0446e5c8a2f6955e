"""Interval strings ('10 minutes', '-1 hour') parsed into exact microseconds."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Optional

from dbt.adapters.window_views.errors import IntervalError

UNIT_MICROS = {
    "second": 1_000_000,
    "minute": 60_000_000,
    "hour": 3_600_000_000,
    "day": 86_400_000_000,
}
# the macros match with this very pattern (macros/_internal/_rules.sql, made from rules.py)
PATTERN = r"(?i)^\s*([+-]?)\s*([0-9]{1,12})\s+(second|minute|hour|day)s?\s*$"
_INTERVAL = re.compile(PATTERN)
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
        at most MAX_DAYS. The macros check window arguments by this rule (rules.py)."""
        if not isinstance(value, str):
            raise IntervalError(f"expected an interval string such as '10 minutes', got {value!r}")
        match = _INTERVAL.match(value)
        if not match:
            raise IntervalError(f"{value!r} is not an interval: expected {ALLOWED}")
        sign, amount, unit = match.groups()
        micros = int(amount) * UNIT_MICROS[unit.lower()] * (-1 if sign == "-" else 1)
        if micros == 0 and not allow_zero:
            raise IntervalError(f"{value!r} is zero: the interval must be positive")
        if micros < 0 and not allow_negative:
            raise IntervalError(f"{value!r} is negative: the interval must be positive")
        if window and abs(micros) > MAX_MICROS:
            raise IntervalError(f"{value!r} is too long: at most {MAX_DAYS} days (about 100 years)")
        return cls(micros=micros, text=" ".join(value.split()))

    def __str__(self) -> str:
        return self.text


def describe_epoch_micros(micros: Optional[int]) -> str:
    """Epoch microseconds as the UTC time they stand for, to the second ("none" for None)."""
    if micros is None:
        return "none"
    return (dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=micros)).strftime("%Y-%m-%d %H:%M:%S")
