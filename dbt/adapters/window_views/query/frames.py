"""Window forms standard SQL has and Spark SQL 4 lacks, rewritten into Spark SQL with the same
rows (docs/frames.md): GROUPS frames, EXCLUDE, DISTINCT window aggregates and
`nth_value(x, n) FROM LAST`. A call that needs the rows' peer groups gets helper columns (a
dense rank, a row number over its order) from a subquery under its SELECT.

`rewrite(tree)` returns the tree itself when nothing needs rewriting, else a new tree, with the
calls whose rewrite is out of a frame's reach: it reads each partition from its start (a dense
rank of peer groups, a row number), in reverse order (FROM LAST), or a set of values computed
in a subquery (sum / avg DISTINCT), so it is exact over the whole input only and refused
(`Rewrite.refuse`) for a run that reads or keeps part of it, where the engines read the frames
of one query over its input. Every other call becomes ROWS and RANGE frames over the order as
written, which the engines' reach and state read as they read the model's own. A form the
rewrite cannot make exact at all is refused with a FrameError naming the call, why, and the fix."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from sqlglot import exp

from dbt.adapters.window_views import names
from dbt.adapters.window_views.errors import AnalysisError, IntervalError
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.query.intervals import Interval
from dbt.adapters.window_views.query.shown import WRITTEN, shown

# a frame bound as sqlexpr.frame takes it: (value, side)
Bound = Tuple[object, Optional[str]]
UNBOUNDED_PRECEDING: Bound = ("UNBOUNDED", "PRECEDING")
UNBOUNDED_FOLLOWING: Bound = ("UNBOUNDED", "FOLLOWING")
CURRENT_ROW: Bound = ("CURRENT ROW", None)
_EXCLUDED = (exp.Sum, exp.Count, exp.Min, exp.Max, exp.Avg)  # what EXCLUDE combines from pieces
_ORDER_ONLY = (exp.RowNumber, exp.Rank, exp.DenseRank, exp.Lag, exp.Lead, exp.Ntile, exp.PercentRank, exp.CumeDist)


class FrameError(AnalysisError):
    """A window form Spark lacks that the plugin cannot rewrite exactly (or not in this query)."""


def lacking(window: exp.Window, select: Optional[exp.Select] = None) -> Optional[str]:
    """The form of a window call (with its named window, in `select`) that Spark SQL lacks, as
    a message names it; None when Spark runs it as it is."""
    resolved = _resolved(window, select) if select is not None else window
    spec = resolved.args.get("spec")
    if spec is not None and str(spec.args.get("kind") or "").upper() == "GROUPS":
        return "a GROUPS frame"
    if spec is not None and spec.args.get("exclude") is not None:
        return f"EXCLUDE {spec.args['exclude'].name.upper()}"
    func, _ = _peeled(resolved)
    if isinstance(func.this, exp.Distinct):
        return "DISTINCT in a window aggregate"
    if isinstance(func, exp.NthValue) and func.args.get("from_first") is not None:
        return f"nth_value FROM {'FIRST' if func.args['from_first'] else 'LAST'}"
    return None


def calls(tree: exp.Expression) -> List[Tuple[exp.Window, str]]:
    """Every window call Spark SQL lacks a form of, with that form."""
    found = []
    for node in tree.find_all(exp.Window):
        form = lacking(node, node.find_ancestor(exp.Select)) if node.arg_key != "windows" else None
        if form is not None:
            found.append((node, form))
    return found


@dataclass(frozen=True)
class OutOfReach:
    """A call whose rewrite reads what no reach of a frame over the ascending order bounds: the
    call as the model writes it, its form, and what the rewrite reads."""

    call: str
    form: str
    reads: str
    instead: str  # the fix that keeps the form in reach


@dataclass(frozen=True)
class Rewrite:
    """A query in Spark SQL, and its calls whose rewrite is exact only over the whole input."""

    tree: exp.Expression
    out_of_reach: Tuple[OutOfReach, ...] = ()

    def refuse(self, why: str, fix: str) -> None:
        """Raise a FrameError for the first call out of reach, for a run that reads or keeps part
        of the input (`why`, and the fix of the run's mode)."""
        if self.out_of_reach:
            first = self.out_of_reach[0]
            raise FrameError(
                f"`{first.call}` uses {first.form}, which Spark SQL lacks and the plugin rewrites over {first.reads}: "
                f"{why}; fix: {first.instead}, or {fix}"
            )


def rewrite(tree: exp.Expression) -> Rewrite:
    """`tree` in Spark SQL (itself when Spark has every form it uses, else a rewritten copy), with
    the calls whose rewrite is out of a frame's reach."""
    if not calls(tree):
        return Rewrite(tree)
    tree = tree.copy()
    selects = [s for s in tree.find_all(exp.Select) if any(_own(w, s) for w, _ in calls(s))]
    out_of_reach: List[OutOfReach] = []
    for select in reversed(selects):  # innermost first: an outer SELECT's subquery is rewritten already
        out_of_reach += _Select(select).rewrite()
    return Rewrite(tree, tuple(out_of_reach))


def spark(tree: exp.Expression) -> exp.Expression:
    """`tree` in Spark SQL: itself when Spark has every form it uses, else a rewritten copy."""
    return rewrite(tree).tree


def _own(window: exp.Window, select: exp.Select) -> bool:
    return window.find_ancestor(exp.Select) is select


def _resolved(window: exp.Window, select: Optional[exp.Select]) -> exp.Window:
    """A copy of the call with its named window's PARTITION BY, ORDER BY and frame written in."""
    copy = window.copy()
    base = window.args.get("alias")
    if base is None or select is None:
        return copy
    named = {w.alias_or_name.lower(): w for w in select.args.get("windows") or []}
    definition = named.get(base.name.lower())
    if definition is None:  # Spark says so, in its words
        return copy
    for key in ("partition_by", "order", "spec"):
        if copy.args.get(key) is None and definition.args.get(key) is not None:
            copy.set(
                key, definition.args[key].copy() if key != "partition_by" else [p.copy() for p in definition.args[key]]
            )
    copy.set("alias", None)
    return copy


def _peeled(window: exp.Window) -> Tuple[exp.Expression, Optional[exp.Expression]]:
    """The function a call computes, under IGNORE / RESPECT NULLS, and its FILTER condition."""
    func, condition = window.this, None
    while isinstance(func, (exp.IgnoreNulls, exp.RespectNulls, exp.Filter)):
        if isinstance(func, exp.Filter):
            condition = func.expression.this
        func = func.this
    return sqlexpr.node(func), condition


@dataclass
class _Helpers:
    """The helper columns a SELECT's calls read, computed under it: each window by its text, with
    the column's name."""

    columns: Dict[str, Tuple[str, exp.Expression]] = field(default_factory=dict)
    out_of_reach: Dict[str, Tuple[str, str]] = field(default_factory=dict)  # a call as written: (reads, instead)

    def column(self, func: exp.Expression, partition: Sequence[exp.Expression], order: exp.Expression) -> exp.Column:
        return self.of(exp.Window(this=func, partition_by=[p.copy() for p in partition] or None, order=order.copy()))

    def of(self, window: exp.Window) -> exp.Column:
        key = window.sql(sqlexpr.DIALECT)
        if key not in self.columns:
            self.columns[key] = (names.internal(f"frame{len(self.columns)}"), window)
        return sqlexpr.column(self.columns[key][0])


class _Select:
    """One SELECT's calls rewritten; the helper columns they read computed in a subquery of its
    FROM item (the WHERE moves in with it, as it filters before the windows)."""

    def __init__(self, select: exp.Select) -> None:
        self.select = select
        self.helpers = _Helpers()

    def rewrite(self) -> List[OutOfReach]:
        """The SELECT rewritten in place; its calls whose rewrite is out of a frame's reach."""
        lacking_calls = [(w, form) for w, form in calls(self.select) if _own(w, self.select)]
        out_of_reach = []
        for window, form in lacking_calls:
            call = shown(window)
            rewritten = _Call(_resolved(window, self.select), call, self.helpers).spark()
            for piece in rewritten.find_all(exp.Window):  # an engine's message quotes the call as written
                piece.meta[WRITTEN] = call
            window.replace(rewritten)
            if call in self.helpers.out_of_reach:
                out_of_reach.append(OutOfReach(call, form, *self.helpers.out_of_reach[call]))
        named = self.select.args.get("windows") or []
        kept = [w for w in named if lacking(w) is None]
        self.select.set("windows", kept or None)
        if self.helpers.columns:
            self._compute_helpers(lacking_calls[0][0])
        return out_of_reach

    def _compute_helpers(self, first: exp.Window) -> None:
        select = self.select
        source = select.args.get("from_")
        why = _unwrappable(select)
        if why is not None or source is None:
            raise FrameError(
                f"`{shown(first)}` is rewritten over columns the plugin computes in a subquery of the relation the "
                f"query reads (its rows' peer groups, or the set of distinct values), and {why or 'it reads none'}; "
                "fix: compute the query's rows in a CTE or an upstream model and apply the window over them in a "
                "query of its own"
            )
        helpers = [exp.alias_(w, n, quoted=True) for n, w in self.helpers.columns.values()]
        inner = exp.select(exp.Star(), *helpers).from_(source.this.copy())
        if select.args.get("where") is not None:
            inner.set("where", select.args["where"].copy())
        alias = source.this.alias_or_name or sqlexpr.ROWS
        source.set("this", inner.subquery(alias, copy=False))
        select.set("where", None)
        hidden = [sqlexpr.column(n) for n, _ in self.helpers.columns.values()]
        stars = [e if isinstance(e, exp.Star) else e.this for e in select.expressions if e.is_star]
        for star in stars:
            star.set("except_", [*(star.args.get("except_") or []), *(h.copy() for h in hidden)])


def _unwrappable(select: exp.Select) -> Optional[str]:
    """Why the SELECT's FROM cannot hold its helper columns: what else it does before its windows."""
    for key, what in (("joins", "a join"), ("group", "GROUP BY"), ("having", "HAVING"), ("laterals", "LATERAL VIEW")):
        if select.args.get(key):
            return f"the query has {what}"
    for agg in select.find_all(exp.AggFunc):
        if agg.find_ancestor(exp.Window, exp.Select) is select:
            return "the query aggregates"
    return None


@dataclass(frozen=True)
class _Frame:
    """A call's frame: its kind and bounds as sqlexpr.frame takes them, and EXCLUDE's option."""

    kind: str
    start: Bound
    end: Bound
    exclude: Optional[str]

    @classmethod
    def of(cls, window: exp.Window) -> "_Frame":
        spec = window.args.get("spec")
        if spec is None:  # SQL's default: to the current row's last peer with ORDER BY, else the partition
            end = CURRENT_ROW if window.args.get("order") else UNBOUNDED_FOLLOWING
            return cls("RANGE", UNBOUNDED_PRECEDING, end, None)
        exclude = spec.args.get("exclude")
        return cls(
            str(spec.args.get("kind") or "RANGE").upper(),
            _bound(spec, "start"),
            _bound(spec, "end") if spec.args.get("end") is not None else CURRENT_ROW,
            None if exclude is None or exclude.name.upper() == "NO OTHERS" else exclude.name.upper(),
        )

    def spec(self, kind: Optional[str] = None) -> exp.WindowSpec:
        return _spec(kind or self.kind, self.start, self.end)

    @property
    def mirrored(self) -> "_Frame":
        """The frame over the reversed order: bounds swapped, PRECEDING ↔ FOLLOWING."""
        return _Frame(self.kind, _flipped(self.end), _flipped(self.start), self.exclude)

    @property
    def at_null(self) -> "_Frame":
        """The frame of a row whose ORDER BY value is NULL: its offset bounds at its peers' edges."""
        start, end = (b if b[0] == "UNBOUNDED" else CURRENT_ROW for b in (self.start, self.end))
        return _Frame(self.kind, start, end, self.exclude)

    @property
    def by_peers(self) -> bool:
        """Whether the bounds are only UNBOUNDED and CURRENT ROW: a RANGE frame that is a GROUPS one."""
        return all(b[0] in ("UNBOUNDED", "CURRENT ROW") for b in (self.start, self.end))


def _bound(spec: exp.WindowSpec, end: str) -> Bound:
    value, side = spec.args.get(end), spec.args.get(f"{end}_side")
    if isinstance(value, str):
        value = value.upper()
    return (value, str(side).upper() if side and value != "CURRENT ROW" else None)


def _spec(kind: str, start: Bound, end: Bound) -> exp.WindowSpec:
    """sqlexpr.frame of copies: a bound's node may frame several pieces."""
    copied = [(v.copy() if isinstance(v, exp.Expression) else v, side) for v, side in (start, end)]
    return sqlexpr.frame(kind, copied[0], copied[1])


def _flipped(bound: Bound) -> Bound:
    value, side = bound
    return (value, {"PRECEDING": "FOLLOWING", "FOLLOWING": "PRECEDING"}.get(side or "", side))


def _signed(bound: Bound, call: str) -> float:
    """A ROWS / GROUPS bound as a signed count of rows / groups (-inf .. inf)."""
    value, side = bound
    sign = -1 if side == "PRECEDING" else 1
    if value == "CURRENT ROW":
        return 0
    if value == "UNBOUNDED":
        return sign * math.inf
    if isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit():
        return sign * int(value.this)
    raise FrameError(f"the frame offset {value} in `{call}` must be a whole number; fix: write it as one")


def _range_sign(bound: Bound, call: str) -> int:
    """Where a RANGE bound lies from the current row's value: -1 before, 0 at it, 1 after."""
    value, side = bound
    if value == "CURRENT ROW":
        return 0
    sign = -1 if side == "PRECEDING" else 1
    if value == "UNBOUNDED":
        return sign
    if not isinstance(value, exp.Interval):
        raise FrameError(
            f"`{call}` excludes rows from a RANGE frame with a numeric offset, whose rows just before and after "
            "the current value the plugin cannot bound (it can for an INTERVAL on a timestamp); fix: order by a "
            "timestamp with INTERVAL offsets, or use a GROUPS or ROWS frame"
        )
    return sign if _micros(value, call) else 0


def _micros(value: exp.Interval, call: str) -> int:
    text = f"{value.this.name} {value.unit.name if value.unit else ''}".strip()
    try:
        return Interval.parse(text.lower(), allow_zero=True).micros
    except IntervalError as exc:
        raise FrameError(f"RANGE frame offset in `{call}`: {exc}") from exc


def _day_to_second(micros: int) -> exp.Interval:
    """An interval as DAY TO SECOND: Spark frames a RANGE only by two bounds of one interval type."""
    seconds, fraction = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    days, hour = divmod(hours, 24)
    text = "{} {:02d}:{:02d}:{:02d}.{:06d}".format(days, hour, minute, second, fraction)
    span = exp.IntervalSpan(this=exp.Var(this="DAY"), expression=exp.Var(this="SECOND"))
    return exp.Interval(this=exp.Literal.string(text), unit=span)


# the least step of a timestamp: a RANGE bound just before or after the current value
_MICRO = _day_to_second(1)
_BEFORE: Bound = (exp.Literal.number(1), "PRECEDING")
_AFTER: Bound = (exp.Literal.number(1), "FOLLOWING")


# what a call's rewrite reads out of its frame's reach, and the fix that keeps the form in reach
_PEER_RANK = (
    "the dense rank of its rows' peer groups from the partition's start, which no frame's reach bounds",
    "write the frame as ROWS, or as RANGE with INTERVAL offsets on the time",
)
_ROW_NUMBER = (
    "the number of each row from the partition's start, which no frame's reach bounds",
    "exclude the current row from a ROWS frame, or the current row's peers (EXCLUDE GROUP or TIES) from a RANGE "
    "frame with INTERVAL offsets",
)
_REVERSED = (
    "its order reversed (its frame's last row first), which no reach in ascending order of time bounds",
    "count from the frame's last row only for n = 1 (last_value, which reads the frame in its own order)",
)
_DISTINCT_SET = (
    "the frame's set of distinct values, computed in a subquery of its own, while the run computes the over "
    "windows of one query that reads its input directly",
    "keep count, min or max DISTINCT, which the query computes itself, or select collect_set(x) over the frame "
    "and aggregate the set in a downstream model",
)


@dataclass
class _Call:
    """One call rewritten: `window` is a copy, its named window written in; `call` as the user wrote it."""

    window: exp.Window
    call: str
    helpers: _Helpers

    @property
    def partition(self) -> List[exp.Expression]:
        return list(self.window.args.get("partition_by") or [])

    @property
    def order(self) -> Optional[exp.Order]:
        return self.window.args.get("order")

    def spark(self) -> exp.Expression:
        func, _ = _peeled(self.window)
        if isinstance(func, _ORDER_ONLY):  # they read no frame, in SQL as in Spark, which refuses one
            self.window.set("spec", None)
            return self.window
        frame = _Frame.of(self.window)
        if isinstance(func, exp.NthValue) and func.args.get("from_first") is not None:
            frame = self._from_first(func, frame)
        if self.order is None and (frame.kind == "GROUPS" or frame.exclude is not None):
            raise FrameError(
                f"`{self.call}` has a {frame.kind} frame{' with EXCLUDE' if frame.exclude else ''} without ORDER BY, "
                "which the plugin rewrites over its rows' peer groups; fix: add an ORDER BY"
            )
        if frame.exclude is not None:
            return _Excluded(self, frame).spark()
        ranked = frame.kind == "GROUPS" and not frame.by_peers
        if frame.kind == "GROUPS":
            self.window = self._groups(frame)
        elif self.window.args.get("spec") is not None:
            self.window.set("spec", frame.spec())  # EXCLUDE NO OTHERS dropped
        return _distinct(self, ranked)

    def _from_first(self, func: exp.Expression, frame: _Frame) -> _Frame:
        """nth_value FROM FIRST is Spark's own; FROM LAST is last_value for the last row, else
        FROM FIRST over the reversed order."""
        from_first = func.args.get("from_first")
        func.set("from_first", None)
        if from_first:
            return frame
        if self.order is None:
            raise FrameError(
                f"`{self.call}` counts from the last row of a frame without ORDER BY, which has no last row; "
                "fix: add an ORDER BY"
            )
        offset = func.args.get("offset")
        if isinstance(offset, exp.Literal) and not offset.is_string and offset.this == "1":
            func.replace(exp.LastValue(this=func.this))  # the frame read in its own order: in reach
            return frame
        for key in self.order.expressions:
            key.set("desc", not key.args.get("desc") or None)
            key.set("nulls_first", not key.args.get("nulls_first"))
        mirrored = frame.mirrored
        self.window.set("spec", mirrored.spec())
        self.helpers.out_of_reach.setdefault(self.call, _REVERSED)
        return mirrored

    def peer_rank(self) -> exp.Column:
        """The dense rank of the current row's peer group in its partition (a helper column)."""
        assert self.order is not None
        self.helpers.out_of_reach.setdefault(self.call, _PEER_RANK)
        return self.helpers.column(exp.DenseRank(), self.partition, self.order)

    def row_number(self) -> exp.Column:
        """The row's number in its partition's order, ties in a fixed order (a helper column)."""
        assert self.order is not None
        self.helpers.out_of_reach.setdefault(self.call, _ROW_NUMBER)
        return self.helpers.column(exp.RowNumber(), self.partition, self.order)

    def over_ranks(self, start: Bound, end: Bound) -> exp.Window:
        """The call's function over a RANGE frame of peer ranks: groups `start` .. `end`."""
        return sqlexpr.window(
            self.window.this, self.partition, [sqlexpr.ordered(self.peer_rank())], _spec("RANGE", start, end)
        )

    def _groups(self, frame: _Frame) -> exp.Window:
        if frame.by_peers:  # UNBOUNDED / CURRENT ROW bounds: RANGE over the order as written
            self.window.set("spec", frame.spec("RANGE"))
            return self.window
        for bound in (frame.start, frame.end):
            _signed(bound, self.call)
        return self.over_ranks(frame.start, frame.end)


# an aggregate of the distinct values a frame holds, over the set of them: Spark's own aggregate,
# so its type is the one the aggregate has over the column
_OF_SET = sqlexpr.parse("(SELECT :agg FROM explode(:set) AS :name(:value))")
_SET, _VALUE = names.internal("set"), names.internal("value")  # the exploded set, and its column
_SET_VALUE = sqlexpr.column(_VALUE)


def _distinct(call: _Call, ranked: bool) -> exp.Expression:
    """A DISTINCT aggregate over the frame's set of values: count(DISTINCT x) its size, min / max
    as they are, any other the aggregate over the exploded set (a helper column, so not over a
    frame of peer ranks, itself a helper: `ranked`)."""
    window = call.window
    func, condition = _peeled(window)
    distinct = func.this
    if not isinstance(distinct, exp.Distinct):
        return window
    if not isinstance(func, (exp.Count, exp.Min, exp.Max)):
        call.helpers.out_of_reach.setdefault(call.call, _DISTINCT_SET)
    if isinstance(func, (exp.Min, exp.Max)):
        func.set("this", distinct.expressions[0])
        return window
    if len(distinct.expressions) != 1 or ranked and not isinstance(func, exp.Count):
        raise FrameError(
            f"`{call.call}`: Spark computes no DISTINCT window aggregate, and the plugin computes one of a single "
            "value over a ROWS or RANGE frame (or GROUPS with UNBOUNDED and CURRENT ROW bounds); fix: aggregate "
            "one value, e.g. a struct of the columns, or use such a frame"
        )
    value = distinct.expressions[0].copy()
    if condition is not None:
        value = exp.case().when(condition.copy(), value)
    order = window.args["order"].expressions if window.args.get("order") else []
    collected = sqlexpr.window(exp.func("collect_set", value), window.args.get("partition_by") or [], order)
    collected.set("spec", window.args.get("spec"))
    if isinstance(func, exp.Count):  # both skip NULLs; the set's size is count's BIGINT
        return exp.cast(exp.func("size", collected), exp.DataType.build("bigint"))
    aggregate = func.copy()
    aggregate.set("this", _SET_VALUE.copy())
    name, value = exp.to_identifier(_SET), exp.to_identifier(_VALUE)
    return sqlexpr.fill(_OF_SET, agg=aggregate, set=call.helpers.of(collected), name=name, value=value)


class _Excluded:
    """sum / count / min / max / avg with EXCLUDE: the frame split into pieces Spark can frame,
    each aggregated, and the aggregates combined (the current row added back for TIES)."""

    def __init__(self, call: _Call, frame: _Frame, at_null: bool = False) -> None:
        self.call, self.frame, self.at_null = call, frame, at_null  # at_null: the frame of a NULL value
        func, condition = _peeled(call.window)
        if not isinstance(func, _EXCLUDED) or isinstance(func.this, exp.Distinct):
            raise FrameError(
                f"`{call.call}`: the plugin computes EXCLUDE {frame.exclude} (which Spark lacks) for sum, count, "
                "min, max and avg without DISTINCT; fix: compute the frame's rows another way, e.g. subtract the "
                "current row's value from the whole frame's aggregate"
            )
        self.func, self.condition = func, condition

    def spark(self) -> exp.Expression:
        if self.frame.kind == "RANGE" and not self.frame.by_peers:
            # a NULL value's offset bounds are its peers' (the NULLs), which no interval reaches past
            key = _keys(self.call.order)[0].this
            self._holds_peers()  # a numeric offset is refused before anything is built
            at_null = _Excluded(self.call, self.frame.at_null, at_null=True).combined()
            return exp.If(this=exp.Is(this=key.copy(), expression=exp.Null()), true=at_null, false=self.combined())
        return self.combined()

    def combined(self) -> exp.Expression:
        pieces = self._pieces()
        own = self._own_row() if self.frame.exclude == "TIES" and self._holds_peers() else None
        return _combined(self.func, [self._aggregate(w) for w in pieces], own)

    def _holds_peers(self) -> bool:
        if self.frame.kind == "RANGE" and not self.frame.by_peers:
            signs = [_range_sign(b, self.call.call) for b in (self.frame.start, self.frame.end)]
            return signs[0] <= 0 <= signs[1]
        return _signed(self.frame.start, self.call.call) <= 0 <= _signed(self.frame.end, self.call.call)

    def _pieces(self) -> List[exp.Window]:
        """The frame less the rows EXCLUDE takes out, as windows Spark frames."""
        call, frame = self.call, self.frame
        if not self._holds_peers():  # the current row and its peers are outside the frame
            if frame.kind == "GROUPS":
                return [call.over_ranks(frame.start, frame.end)]
            return [sqlexpr.window(call.window.this, call.partition, _keys(call.order), frame.spec())]
        if frame.kind == "ROWS":
            if frame.exclude != "CURRENT ROW":
                raise FrameError(
                    f"`{call.call}` excludes the current row's peers from a ROWS frame, which Spark cannot bound by "
                    "peers; fix: use a GROUPS or RANGE frame, or EXCLUDE CURRENT ROW"
                )
            return self._around(frame, "ROWS", _BEFORE, _AFTER)
        if frame.kind == "RANGE" and not frame.by_peers:
            pieces = self._around(frame, "RANGE", (_MICRO, "PRECEDING"), (_MICRO, "FOLLOWING"))
        else:
            pieces = (
                _beyond_nulls(call, frame, self.func, self.condition) if self.at_null else self._around_ranks(frame)
            )
        if frame.exclude == "CURRENT ROW":  # the current row's peers but itself, in their fixed order
            peers = [*call.partition, *(k.this for k in _keys(call.order))]
            by_row = [sqlexpr.ordered(call.row_number())]
            for start, end in ((UNBOUNDED_PRECEDING, _BEFORE), (_AFTER, UNBOUNDED_FOLLOWING)):
                pieces.append(sqlexpr.window(call.window.this, peers, by_row, _spec("ROWS", start, end)))
        return pieces

    def _around(self, frame: _Frame, kind: str, before: Bound, after: Bound) -> List[exp.Window]:
        """The frame's part before the current row (its peers) and after, framed over the order."""
        call, pieces = self.call, []
        before_current, after_current = self._sign(frame.start) < 0, self._sign(frame.end) > 0
        if kind == "RANGE":  # bounds of one interval type with the microsecond's
            frame = _Frame(kind, self._typed(frame.start), self._typed(frame.end), frame.exclude)
        order = _keys(call.order)
        if before_current:
            pieces.append(sqlexpr.window(call.window.this, call.partition, order, _spec(kind, frame.start, before)))
        if after_current:
            pieces.append(sqlexpr.window(call.window.this, call.partition, order, _spec(kind, after, frame.end)))
        return pieces

    def _typed(self, bound: Bound) -> Bound:
        value, side = bound
        return (_day_to_second(_micros(value, self.call.call)), side) if isinstance(value, exp.Interval) else bound

    def _around_ranks(self, frame: _Frame) -> List[exp.Window]:
        """The frame's groups before and after the current row's, as RANGE frames of peer ranks."""
        pieces = []
        if self._sign(frame.start) < 0:
            pieces.append(self.call.over_ranks(frame.start, _BEFORE))
        if self._sign(frame.end) > 0:
            pieces.append(self.call.over_ranks(_AFTER, frame.end))
        return pieces

    def _sign(self, bound: Bound) -> float:
        if self.frame.kind == "RANGE" and not self.frame.by_peers:
            return _range_sign(bound, self.call.call)
        return _signed(bound, self.call.call)

    def _aggregate(self, window: exp.Window) -> exp.Expression:
        """A piece's aggregate: its sum and count for avg."""
        if isinstance(self.func, exp.Avg):
            parts = []
            for make in (exp.Sum, exp.Count):
                piece = window.copy()
                _peeled(piece)[0].replace(make(this=self.func.this.copy()))
                parts.append(piece)
            return exp.Tuple(expressions=parts)
        return window

    def _own_row(self) -> exp.Expression:
        """The current row's own value, as its aggregate would take it (FILTER applied)."""
        value = exp.Literal.number(1) if isinstance(self.func.this, exp.Star) else self.func.this.copy()
        if self.condition is not None:
            value = exp.case().when(self.condition.copy(), value)
        if isinstance(self.func, exp.Count):
            return exp.If(
                this=exp.Not(this=exp.Is(this=value, expression=exp.Null())),
                true=exp.Literal.number(1),
                false=exp.Literal.number(0),
            )
        if isinstance(self.func, exp.Avg):
            counted = exp.If(
                this=exp.Not(this=exp.Is(this=value, expression=exp.Null())),
                true=exp.Literal.number(1),
                false=exp.Literal.number(0),
            )
            return exp.Tuple(expressions=[value, counted])
        return value


def _beyond_nulls(
    call: _Call, frame: _Frame, func: exp.Expression, condition: Optional[exp.Expression]
) -> List[exp.Window]:
    """The frame of a NULL value (its offset bounds at its peers, the NULLs) beyond them, with no
    rank: the NULLs sort first or last, so before them lie no rows or every other row of the
    partition (a whole-partition window of those), and after them the same, as far as an
    UNBOUNDED bound reaches."""
    key = _keys(call.order)[0]
    first = bool(key.args.get("nulls_first"))
    if not (frame.start == UNBOUNDED_PRECEDING and not first or frame.end == UNBOUNDED_FOLLOWING and first):
        return []
    where: exp.Expression = exp.Not(this=exp.Is(this=key.this.copy(), expression=exp.Null()))
    if condition is not None:
        where = sqlexpr.node(exp.and_(condition.copy(), where))
    filtered = exp.Filter(this=func.copy(), expression=exp.Where(this=where))
    return [sqlexpr.window(filtered, call.partition)]


def _keys(order: Optional[exp.Order]) -> List[exp.Ordered]:
    return list(order.expressions) if order is not None else []


def _combined(func: exp.Expression, pieces: Sequence[exp.Expression], own: Optional[exp.Expression]) -> exp.Expression:
    """The aggregate of the union of the pieces' rows (and the current row), from theirs."""
    terms = [*pieces, *([own] if own is not None else [])]
    if not terms:  # the frame held the current row's peers alone, all excluded
        return exp.Literal.number(0) if isinstance(func, exp.Count) else exp.Null()
    if isinstance(func, exp.Count):
        return _fold(terms, _add, exp.Literal.number(0))
    if isinstance(func, (exp.Min, exp.Max)):
        kind = exp.Least if isinstance(func, exp.Min) else exp.Greatest
        first, *rest = terms
        return kind(this=first, expressions=rest) if rest else first
    if isinstance(func, exp.Sum):
        return _sum(terms)
    sums = _sum([t.expressions[0] for t in terms])
    counts = _fold([t.expressions[1] for t in terms], _add, exp.Literal.number(0))
    return exp.Div(this=sums, expression=exp.Nullif(this=counts, expression=exp.Literal.number(0)))


def _sum(terms: Sequence[exp.Expression]) -> exp.Expression:
    """The sum of the terms, NULL only where every term is (a sum of no non-NULL value)."""
    if len(terms) == 1:
        return terms[0]
    none = exp.and_(*(exp.Is(this=t.copy(), expression=exp.Null()) for t in terms))
    total = _fold([exp.Coalesce(this=t.copy(), expressions=[exp.Literal.number(0)]) for t in terms], _add, exp.Null())
    return exp.If(this=none, true=exp.Null(), false=total)


def _add(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Add(this=a, expression=b)


def _fold(
    terms: Sequence[exp.Expression],
    combine: Callable[[exp.Expression, exp.Expression], exp.Expression],
    empty: exp.Expression,
) -> exp.Expression:
    if not terms:
        return empty
    total = terms[0]
    for term in terms[1:]:
        total = combine(total, term)
    return total
