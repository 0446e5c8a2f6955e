"""One rule for intervals and column names: the macros read it from macros/_internal/_rules.sql,
made from the Python (rules.py); the file is current, and every value is accepted or refused
alike by the Python and by the macros (arguments.sql rendered by plain Jinja)."""

import re
from typing import Any

import pytest
from dbt_common.clients.jinja import get_template

from dbt.adapters.window_views import rules
from dbt.adapters.window_views.errors import IntervalError
from dbt.adapters.window_views.names import name_problem
from dbt.adapters.window_views.query.intervals import Interval

ARGUMENTS = rules.RULES_SQL.parent / "arguments.sql"


class Refused(Exception):
    """exceptions.raise_compiler_error"""


class Returned(Exception):
    """dbt's `return`: a macro's value travels as an exception (dbt's MacroReturn)."""

    def __init__(self, value: Any) -> None:
        self.value = value


def _return(value: Any) -> None:
    raise Returned(value)


class Package(dict):
    """`window_views.<macro>` as dbt resolves it (a mapping, so the sandbox allows `_` names): the
    macros of both files, each returning its value."""

    def __init__(self) -> None:
        super().__init__()
        self.modules: list = []

    def __missing__(self, name: str):
        macro = next(getattr(m, f"dbt_macro__{name}") for m in self.modules if hasattr(m, f"dbt_macro__{name}"))

        def call(*args, **kwargs):
            try:
                return str(macro(*args, **kwargs))
            except Returned as returned:
                return returned.value

        return call


class Exceptions:
    @staticmethod
    def raise_compiler_error(message: str) -> None:
        raise Refused(message)


class Adapter:
    @staticmethod
    def quote(name: str) -> str:
        return f"`{name}`"


@pytest.fixture(scope="module")
def macros() -> Package:
    """Both files as dbt compiles macros (captured as dbt_macro__<name>), with the context the
    macros use: dbt's `return`, `exceptions`, `adapter.quote`, `modules.re`."""
    package = Package()
    context = {
        "return": _return,
        "window_views": package,
        "exceptions": Exceptions,
        "adapter": Adapter,
        "modules": type("Modules", (), {"re": re}),
    }
    package.modules = [
        get_template(p.read_text(), context, capture_macros=True).module for p in (rules.RULES_SQL, ARGUMENTS)
    ]
    return package


def test_the_rules_file_is_current():
    assert rules.RULES_SQL.read_text() == rules.macro_sql(), "run `python -m dbt.adapters.window_views.rules`"


def test_the_macros_read_the_python_constants(macros):
    assert macros["_rules"]() == rules.constants()


INTERVALS = [
    "10 minutes",
    "1 second",
    " +3  Hours ",
    "2 DAY",
    "36500 days",
    "-36500 days",
    "0 minutes",
    "-0 seconds",
    "-5 minutes",
    "36501 days",
    "876001 hours",
    "52560001 minutes",
    "999999999999 days",
    "1234567890123 seconds",
    "1 month",
    "5 ms",
    "10mins",
    "1 hourz",
    "ten minutes",
    "",
    "10\tminutes",
    "1.5 hours",
    "\u0661 minute",  # an Arabic-Indic digit
    7,
    None,
]


def _python_interval(value: Any, signed: bool):
    try:
        return Interval.parse(value, allow_negative=signed, allow_zero=signed, window=True).micros
    except IntervalError:
        return "refused"


def _jinja_interval(macros: Package, value: Any, signed: bool):
    try:
        return macros["_interval_micros"](value, "tumble", "size", allow_negative=signed)
    except Refused:
        return "refused"


@pytest.mark.parametrize("signed", [False, True], ids=["size", "offset"])
@pytest.mark.parametrize("value", INTERVALS)
def test_an_interval_is_accepted_or_refused_alike(macros, value, signed):
    assert _jinja_interval(macros, value, signed) == _python_interval(value, signed)


NAMES = ["ts", "_ts", "bid_time2", "A", "2ts", "a b", "a-b", "", "é", "ts;", "`ts`", "_wv_t", "_WV_x", "_wv", 3, None]


@pytest.mark.parametrize("value", NAMES)
def test_a_column_name_is_accepted_or_refused_alike(macros, value):
    try:
        jinja = macros["_column"](value, "tumble", "time_col")
    except Refused as refused:
        jinja = "refused"
        assert str(refused).startswith("window_views.tumble: argument 'time_col' ")
    assert jinja == ("refused" if name_problem(value) else f"`{value}`")


def test_only_window_arguments_are_capped():
    """The cap keeps window bounds inside Spark's timestamps; a watermark delay may be longer."""
    assert Interval.parse("40000 days").micros == 40000 * 86_400_000_000
    with pytest.raises(IntervalError, match="is too long: at most 36500 days"):
        Interval.parse("40000 days", window=True)
