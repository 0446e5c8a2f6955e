"""One rule for window arguments: the plugin's Python checks them (query/macro_arguments.py); the
package form's macros check by constants made from it (macros/_internal/_rules.sql, rules.py).
The file is current, and every value and call is accepted or refused alike, with the same
message, by the Python and by the package form's macros (arguments.sql rendered by plain Jinja)."""

import re
from typing import Any

import pytest
from dbt_common.clients.jinja import get_template

from dbt.adapters.window_views import rules
from dbt.adapters.window_views.errors import IntervalError, MacroArgumentError
from dbt.adapters.window_views.names import name_problem
from dbt.adapters.window_views.query import macro_arguments
from dbt.adapters.window_views.query.intervals import Interval, window_interval

MACROS = [rules.RULES_SQL.parent / name for name in ("_rules.sql", "arguments.sql", "window_bounds.sql")]


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
    """dbt-spark's adapter, as the package form's macros see it: its quoting, and a dispatch that
    finds the default__ macros."""

    def __init__(self, package: Package) -> None:
        self.package = package

    @staticmethod
    def quote(name: str) -> str:
        return f"`{name}`"

    def dispatch(self, name: str, namespace: str):
        assert namespace == "window_views"
        return self.package[f"default__{name}"]


@pytest.fixture(scope="module")
def macros() -> Package:
    """The files as dbt compiles macros (captured as dbt_macro__<name>), with the context the
    macros use: dbt's `return`, `exceptions`, `adapter.quote` and `dispatch`, `modules.re`."""
    package = Package()
    context = {
        "return": _return,
        "window_views": package,
        "exceptions": Exceptions,
        "adapter": Adapter(package),
        "modules": type("Modules", (), {"re": re}),
    }
    package.modules = [get_template(p.read_text(), context, capture_macros=True).module for p in MACROS]
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


def _python_message(check) -> str:
    try:
        return f"accepted {check()!r}"
    except MacroArgumentError as refused:
        return str(refused.msg)


def _jinja_message(check) -> str:
    try:
        return f"accepted {check()!r}"
    except Refused as refused:
        return str(refused)


@pytest.mark.parametrize("signed", [False, True], ids=["size", "offset"])
@pytest.mark.parametrize("value", INTERVALS + ["5 minuts", "1 min", "1 dys", "-30secs", "3 hrs", "2 fortnights"])
def test_an_interval_is_refused_with_one_message(macros, value, signed):
    python = _python_message(lambda: window_interval(value, "window_views.tumble: argument 'size'", signed).micros)
    jinja = _jinja_message(lambda: macros["_interval_micros"](value, "tumble", "size", allow_negative=signed))
    assert jinja == python


@pytest.mark.parametrize("value", NAMES)
def test_a_column_name_is_refused_with_one_message(macros, value):
    python = _python_message(lambda: f"`{macro_arguments.MacroArgument('tumble', 'time_col', value).column()}`")
    assert _jinja_message(lambda: macros["_column"](value, "tumble", "time_col")) == python


CALLS = [
    ("tumble", {"time_col": "ts", "size": "10  minutes"}),
    ("tumble", {"time_col": "ts", "size": "10 minutes", "offset": "-3 minutes"}),
    ("tumble", {"time_col": "ts", "size": "10 minutes", "offset": "0 minutes"}),
    ("tumble", {"time_col": "_wv_t", "size": "10 minutes"}),
    ("tumble", {"time_col": "ts", "size": "10 minutes", "offset": "1 week"}),
    ("hop", {"time_col": "ts", "slide": "5 minutes", "size": "1 hour", "offset": "-2 minutes"}),
    ("hop", {"time_col": "ts", "slide": "10 minutes", "size": "5 minutes"}),
    ("hop", {"time_col": "ts", "slide": "0 seconds", "size": "5 minutes"}),
    ("hop", {"time_col": "ts", "slide": "5 minutes", "size": None}),
    ("cumulate", {"time_col": "ts", "step": "4 minutes", "size": "12 minutes"}),
    ("cumulate", {"time_col": "ts", "step": "3 minutes", "size": "10 minutes"}),
    ("session", {"time_col": "ts", "gap": "10 minutes", "partition_by": ["item", "price"]}),
    ("session", {"time_col": "ts", "gap": "10 minutes", "partition_by": "item"}),
    ("session", {"time_col": "ts", "gap": "10 minutes", "partition_by": {"a": 1}}),
    ("session", {"time_col": "ts", "gap": "10 minutes", "partition_by": 3}),
    ("session", {"time_col": "ts", "gap": "10 minutes", "partition_by": ["ok", "no way"]}),
    ("session", {"time_col": "ts", "gap": "1 year"}),
]


@pytest.mark.parametrize("kind, arguments", CALLS, ids=lambda c: str(c))
def test_a_window_call_is_read_alike(macros, kind, arguments):
    python = _python_message(lambda: macro_arguments.window_spec(kind, arguments))
    assert _jinja_message(lambda: macros["_window_spec"](kind, **arguments)) == python


WINDOWS = [
    {"kind": "hop", "time_col": "ts", "size": "1 hour", "slide": "1 minute"},
    {"kind": "cumulate", "time_col": "ts", "size": "1 hour", "step": "7 minutes"},
    {"kind": "hop", "time_col": "ts", "size": "10 minutes", "slide": "1 hour"},
    {"kind": "tumble", "time_col": "ts", "size": "1 hourz"},
    {"kind": "tumble", "time_col": "ts", "size": "1 hour", "offset": "999999999999 days"},
    {"kind": "slide", "time_col": "ts"},
    {"time_col": "ts"},
    {"kind": "hop", "time_col": "ts", "size": "1 hour"},
    {"kind": "tumble", "time_col": "ts", "size": "1 hour", "slide": "1 minute", "gap": "1 minute"},
    ["tumble"],
]


@pytest.mark.parametrize("window", WINDOWS, ids=str)
def test_a_window_aggregate_window_is_read_alike(macros, window):
    python = _python_message(lambda: macro_arguments.window_aggregate_spec(window))
    assert _jinja_message(lambda: macros["_window_aggregate_spec"](window)) == python
