"""Pane ("window slicing") plans for HOP and CUMULATE aggregates.

Spark's sliding `window()` and the HOP/CUMULATE TVFs copy every row into each of its windows.
Here rows are first aggregated into panes (gcd(size, slide) for HOP, `step` for CUMULATE), and
each window combines the partial aggregates of its panes with a window function over the
panes: for HOP the difference of two running totals where that is exact (counts, integral
sums), else a sliding RANGE frame; for CUMULATE a running frame per period. HOP windows whose
last pane is empty get a "probe" row, CUMULATE ones a copy of the window before them, so
exactly the windows the TVF form produces are produced, no more. Measures whose aggregates do
not decompose fall back to the TVF form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from dbt.adapters.window_views.names import NAME_RULE, PANE, PANES, TIME, internal, is_identifier, name_problem
from dbt.adapters.window_views.query import sqlexpr, tvf
from dbt.adapters.window_views.query.windows import Cumulate, Hop, Tumble

# the windows a pane plan computes (a SESSION's windows follow the rows, not panes)
Paned = Union[Tumble, Hop, Cumulate]


class PlanError(ValueError):
    """A window_aggregate argument that cannot be planned; names the argument."""


def _fail(argument: str, problem: str) -> PlanError:
    return PlanError(f"window_views.window_aggregate: argument '{argument}' {problem}")


def _name(value: Any, argument: str) -> str:
    if not is_identifier(value):
        raise _fail(argument, f"{NAME_RULE}, got {value!r}")
    return value


@dataclass(frozen=True)
class Leaf:
    """One decomposable aggregate: computed per pane, then combined over the window's panes."""

    pane: exp.Expression  # the aggregate per pane
    combine: str  # 'count' | 'sum' | 'min' | 'max' | 'hll'


@dataclass(frozen=True)
class Measure:
    alias: str
    tree: exp.Expression


@dataclass(frozen=True)
class Plan:
    """A pane plan's query, or None with the reason the TVF form must be used."""

    query: Optional[exp.Query]
    fallback_reason: Optional[str] = None

    @property
    def sql(self) -> Optional[str]:
        """The query as Spark SQL, parenthesised to stand as a FROM item (the macro renders it)."""
        return None if self.query is None else sqlexpr.to_sql(exp.paren(self.query))


def parse_measures(measures: Any) -> List[Measure]:
    if not isinstance(measures, Mapping) or not measures:
        raise _fail(
            "measures",
            f"must be a non-empty dict of output name -> aggregate, e.g. {{'revenue': 'sum(price)'}}, got {measures!r}",
        )
    parsed = []
    for alias, text in measures.items():
        _name(alias, f"measures.{alias}")
        if not isinstance(text, str) or ";" in text:
            raise _fail(f"measures.{alias}", f"must be one aggregate expression, got {text!r}")
        try:
            tree = sqlglot.parse_one(text, read="spark")
        except ParseError as exc:
            raise _fail(f"measures.{alias}", f"= {text!r} is not valid SQL: {exc}") from exc
        if not isinstance(tree, exp.Expression) or isinstance(tree, (exp.Query, exp.Command)):
            raise _fail(f"measures.{alias}", f"= {text!r} must be an aggregate expression")
        if tree.find(exp.Window):
            raise _fail(f"measures.{alias}", f"= {text!r} must not use OVER: it is aggregated per window")
        aggregates = [a for a in tree.find_all(exp.AggFunc) if not a.find_ancestor(exp.AggFunc)]
        if not aggregates:
            raise _fail(f"measures.{alias}", f"= {text!r} is not an aggregate (use e.g. sum(...), count(*), max(...))")
        for column in tree.find_all(exp.Column):
            if not column.find_ancestor(exp.AggFunc):
                raise _fail(f"measures.{alias}", f"= {text!r} uses column {column.sql('spark')} outside an aggregate")
        parsed.append(Measure(alias, tree))
    return parsed


def _col(name: str) -> exp.Column:
    """One of the plan's own columns (`_wv_p`, ...): a plain name."""
    return exp.column(name)


def _n(value: int) -> exp.Expression:
    return exp.Literal.number(value)


PARTIAL = internal("m")  # the prefix of a pane partial's column
# the plan's own columns (and PANE, a pane's start; TIME, a row's, both epoch micros)
_START = internal("s")  # a TUMBLE window's start, a CUMULATE's period start
_NEXT = internal("q")  # the start of the key's next pane, NULL after its last
_END = internal("e")  # a window's end
_GAP_END = internal("gap_e")  # a CUMULATE window's end in the gap after a pane
_PROBE = internal("probe_p")  # the pane start of a HOP window whose last pane is empty
# the plan's steps: its CTEs after PANES, the subqueries and lateral views
_SLOTS, _WINDOWS = internal("slots"), internal("windows")
CTES = frozenset({PANES, _SLOTS, _WINDOWS})  # what a reader of the plan's input skips (slicing.py)
_TUMBLE, _ENDS, _FOLLOWING = internal("tumble"), internal("ends"), internal("next")
_GAPS, _PROBES = internal("gap"), internal("probe")
# the named windows over the panes (a WINDOW clause)
_FRAME, _UPTO, _BEFORE = internal("frame"), internal("upto"), internal("before")

# the plan's scalar shapes, parsed once and filled with nodes (_fill)
_PRESENT = sqlexpr.parse(":ts IS NOT NULL")
_LEAF = {
    "count": sqlexpr.parse("count(:x)"),
    "sum": sqlexpr.parse("sum(:x)"),
    "min": sqlexpr.parse("min(:x)"),
    "max": sqlexpr.parse("max(:x)"),
    "hll": sqlexpr.parse("hll_sketch_agg(cast(:x as string))"),
}
_OVER_FRAME = {
    "sum": sqlexpr.parse("sum(:c) OVER :frame"),
    "min": sqlexpr.parse("min(:c) OVER :frame"),
    "max": sqlexpr.parse("max(:c) OVER :frame"),
}
_SKETCH = sqlexpr.parse("hll_sketch_estimate(hll_union_agg(:c, true) OVER :frame)")
_RUNNING = sqlexpr.parse("(sum(:c) OVER :upto - coalesce(sum(:c) OVER :before, 0))")
_BIGINT_RUNNING = sqlexpr.parse("if(typeof(:c) = 'bigint', :running, sum(:c) OVER :frame)")
_SUM = sqlexpr.parse("if(:count = 0, NULL, :sum)")
_AVG = sqlexpr.parse("if(:count = 0, NULL, :sum / :count)")
_LEAD = sqlexpr.parse("lead(:p)")
_REAL = sqlexpr.parse("if((:probe IS NULL OR :probe = :p), :c, NULL)")
_AFTER_PANE = sqlexpr.parse(":p + :pane")
_PERIOD_LAST = sqlexpr.parse("coalesce(:next, :start + :size)")
_CUMULATE_END = sqlexpr.parse("coalesce(:gap_end, :p + :pane)")
_CUMULATE_GAPS = sqlexpr.parse("explode(if(:last > :p + :pane, sequence(:p + :pane, :last, :pane), NULL))")
_HOP_LAST_PROBE = sqlexpr.parse("least(coalesce(:next, :p + :size), :p + :size)")
_HOP_PROBES = sqlexpr.parse(
    "explode(if(:first <= :last, concat(array(:p), sequence(:first - :pane, :last - :pane, :slide)), NULL))"
)
_HOP_KEEP = sqlexpr.parse("pmod(:e - :phase, :slide) = 0")
# what the shapes' placeholders for the plan's own names stand for
_OWN: Dict[str, exp.Expr] = {
    "p": exp.column(PANE),
    "next": exp.column(_NEXT),
    "start": exp.column(_START),
    "e": exp.column(_END),
    "gap_end": exp.column(_GAP_END),
    "probe": exp.column(_PROBE),
    "frame": exp.to_identifier(_FRAME),
    "upto": exp.to_identifier(_UPTO),
    "before": exp.to_identifier(_BEFORE),
}


def _fill(template: exp.Expr, **values: exp.Expr) -> exp.Expression:
    """One of the plan's shapes with `values` and the plan's own names filled in."""
    return sqlexpr.fill(template, **_OWN, **values)


def decompose(node: exp.Expr) -> Optional[List[Leaf]]:
    """The pane-level leaves of one aggregate call, or None if it does not decompose."""
    arg = node.this
    if isinstance(arg, exp.Distinct):
        return None  # exact distinct counts need every value: the TVF form
    inner = arg if isinstance(arg, exp.Expression) else exp.Star()

    def leaf(aggregate: str, combine: str) -> Leaf:
        return Leaf(sqlexpr.fill(_LEAF[aggregate], x=inner), combine)

    if isinstance(node, exp.Count):
        return [leaf("count", "count")]
    if isinstance(node, (exp.Sum, exp.Avg)):
        # the count tells an all-NULL window (NULL) from a zero sum
        return [leaf("sum", "sum"), leaf("count", "count")]
    if isinstance(node, exp.Min):
        return [leaf("min", "min")]
    if isinstance(node, exp.Max):
        return [leaf("max", "max")]
    if isinstance(node, exp.ApproxDistinct) and not node.args.get("accuracy"):
        # approximate, like approx_count_distinct itself: HLL sketches merge across panes
        return [leaf("hll", "hll")]
    return None


def _over_panes(column: str, leaf: Leaf, sliding: bool) -> exp.Expression:
    """A leaf's pane partials aggregated over the window's panes."""
    partial = _col(column)
    if leaf.combine == "hll":
        return _fill(_SKETCH, c=partial)
    if sliding and leaf.combine in ("count", "sum"):
        # HOP: the difference of two running totals, O(1) per window where a sliding frame
        # re-aggregates all its panes for every window. Exact for counts and integral sums
        # (bigint; dbt-spark keeps ANSI off, so a total that overflows wraps and the difference
        # is still exact), not for doubles or decimals: those keep the frame. Spark folds
        # typeof(), so only one of the two is computed.
        running = _fill(_RUNNING, c=partial)
        if leaf.combine == "count":
            return running
        return _fill(_BIGINT_RUNNING, c=partial, running=running)
    return _fill(_OVER_FRAME["sum" if leaf.combine == "count" else leaf.combine], c=partial)


def _combined(columns: Sequence[str], node: exp.Expr) -> exp.Expression:
    """An aggregate call computed from its leaves' per-window columns."""
    if isinstance(node, exp.Sum):
        return sqlexpr.fill(_SUM, sum=_col(columns[0]), count=_col(columns[1]))
    if isinstance(node, exp.Avg):
        return sqlexpr.fill(_AVG, sum=_col(columns[0]), count=_col(columns[1]))
    return _col(columns[0])


@dataclass(frozen=True)
class _Rows:
    """What every plan reads: the relation's rows with a time, by the group keys."""

    relation: exp.Expression  # a table or CTE name, or dbt's time-filtered subquery of one
    time: exp.Column
    keys: Tuple[exp.Column, ...]

    def key_columns(self) -> List[exp.Expression]:
        return [k.copy() for k in self.keys]

    def present(self) -> exp.Expression:
        return sqlexpr.fill(_PRESENT, ts=self.time)

    def micros(self) -> exp.Expression:
        return sqlexpr.epoch_micros(self.time)


def _named_window(name: str, partition: Sequence[exp.Expression], frame: exp.WindowSpec) -> exp.Window:
    """`name AS (PARTITION BY partition ORDER BY _wv_p frame)`, for a WINDOW clause."""
    return exp.Window(
        this=exp.to_identifier(name),
        partition_by=[p.copy() for p in partition] or None,
        order=exp.Order(expressions=[sqlexpr.ordered(_col(PANE))]),
        spec=frame,
    )


def _lateral(function: exp.Expression, table: str, column: str) -> exp.Lateral:
    """`LATERAL VIEW OUTER function table AS column`."""
    alias = exp.TableAlias(this=exp.to_identifier(table), columns=[exp.to_identifier(column)])
    return exp.Lateral(this=function, view=True, outer=True, alias=alias)


def _tumble(rows: _Rows, window: Tumble, measures: List[Measure]) -> Plan:
    start = window.start_sql(rows.micros())
    aggregates = [exp.alias_(m.tree.copy(), m.alias, quoted=True) for m in measures]
    per_window = (
        exp.select(*rows.key_columns(), exp.alias_(start, _START), *aggregates)
        .from_(rows.relation.copy())
        .where(rows.present())
        .group_by(*rows.key_columns(), start.copy())
    )
    s = _col(_START)
    bounds = sqlexpr.window_bounds(s, exp.Add(this=s.copy(), expression=_n(window.size)))
    query = exp.select(*rows.key_columns(), *bounds, *(sqlexpr.column(m.alias) for m in measures))
    return Plan(query.from_(per_window.subquery(_TUMBLE)))


def plan(relation: exp.Expression, window: Paned, measures: List[Measure], group_by: Sequence[str]) -> Plan:
    """The query of a window aggregate over `relation`, a FROM item (a table, a CTE's name, or a
    relation dbt filters by event time: `(select ...) alias`)."""
    keys = tuple(sqlexpr.column(_name(k, "group_by")) for k in group_by)
    rows = _Rows(relation, sqlexpr.column(window.time_col), keys)
    if isinstance(window, Tumble):
        return _tumble(rows, window, measures)
    decomposed = leaves(measures)
    if isinstance(decomposed, str):
        return Plan(None, decomposed)
    columns, outputs = decomposed
    if isinstance(window, Cumulate):
        query = _cumulate(_panes(rows, window, window.step, columns), window, outputs)
    else:
        query = _hop(_panes(rows, window, window.pane, columns), window, outputs)
    return Plan(query)


def leaves(measures: List[Measure]) -> Union[Tuple[Dict[Leaf, str], List[exp.Expr]], str]:
    """Every aggregate of every measure decomposed into pane leaves, each computed once per pane
    and once per window (avg(x) and sum(x) share sum(x) and count(x)): the leaves' columns and
    the measures computed from them; or why a measure does not decompose. A streaming session's
    partials are these leaves too (streaming/session_slicing.py)."""
    columns: Dict[Leaf, str] = {}
    outputs = []
    for measure in measures:
        tree = measure.tree.copy()
        for node in list(tree.find_all(exp.AggFunc)):
            if node.find_ancestor(exp.AggFunc):
                continue
            parts = decompose(node)
            if parts is None:
                return f"measure '{measure.alias}' = {measure.tree.sql('spark')}: {node.sql('spark')} does not decompose into panes"
            combined = _combined([columns.setdefault(leaf, f"{PARTIAL}{len(columns)}") for leaf in parts], node)
            tree = sqlexpr.replaced(tree, node, combined)
        outputs.append(exp.alias_(tree, measure.alias, quoted=True))
    return columns, outputs


@dataclass(frozen=True)
class _Panes:
    """What HOP and CUMULATE share: the rows' panes (`_wv_panes`) and the leaves over them."""

    rows: _Rows
    pane: int  # micros
    query: exp.Select
    partition: List[exp.Expression]  # the keys, and a CUMULATE's period
    over_panes: List[exp.Expr]
    next_pane: exp.Expr
    columns: Dict[Leaf, str]


def _panes(rows: _Rows, window: Union[Hop, Cumulate], pane: int, columns: Dict[Leaf, str]) -> _Panes:
    pane_start = sqlexpr.window_floor(_col(TIME), window.offset, pane)
    period: List[exp.Expr] = []
    if isinstance(window, Cumulate):
        period = [exp.alias_(window.period_sql(rows.micros()), _START)]
    period_key = [_col(_START)] if period else []
    partition = [*rows.key_columns(), *period_key]
    row_times = exp.select(exp.Star(), exp.alias_(rows.micros(), TIME), *period)
    row_times = row_times.from_(rows.relation.copy()).where(rows.present())
    if rows.keys:
        # shuffle the rows once by key: panes, gaps and windows then all run in that partitioning
        # (measured: ~15% faster than shuffling panes twice, by key + pane and then by key)
        row_times.set("hint", exp.Hint(expressions=[exp.Anonymous(this="REPARTITION", expressions=rows.key_columns())]))
    pane_aggregates = [exp.alias_(leaf.pane.copy(), column) for leaf, column in columns.items()]
    query = (
        exp.select(*rows.key_columns(), *period_key, exp.alias_(pane_start, PANE), *pane_aggregates)
        .from_(row_times.subquery(sqlexpr.ROWS))
        .group_by(*rows.key_columns(), *[k.copy() for k in period_key], pane_start.copy())
    )
    over_panes = [exp.alias_(_over_panes(c, leaf, isinstance(window, Hop)), c) for leaf, c in columns.items()]
    next_pane = exp.alias_(sqlexpr.window(_fill(_LEAD), partition, [sqlexpr.ordered(_col(PANE))]), _NEXT)
    return _Panes(rows, pane, query, partition, over_panes, next_pane, columns)


_CURRENT = ("CURRENT ROW", None)
_UNBOUNDED = ("UNBOUNDED", "PRECEDING")


def _cumulate(panes: _Panes, window: Cumulate, outputs: List[exp.Expr]) -> exp.Select:
    """One running aggregate per period. A window whose last pane is empty holds the same panes
    as the window of the pane before it: each pane's row is copied to the window ends up to the
    next pane (or the period's end), after the one sort."""
    keys = panes.rows.key_columns()
    windows = exp.select(*keys, _col(_START), _col(PANE), panes.next_pane, *panes.over_panes)
    windows = windows.from_(PANES)
    frame = sqlexpr.frame("ROWS", _UNBOUNDED, _CURRENT)
    windows.set("windows", [_named_window(_FRAME, panes.partition, frame)])
    last = _fill(_PERIOD_LAST, size=_n(window.size))
    # no array for the common pane with a next pane right after it
    gaps = _lateral(_fill(_CUMULATE_GAPS, last=last, pane=_n(panes.pane)), _GAPS, _GAP_END)
    ends = exp.select(exp.Star(), exp.alias_(_fill(_CUMULATE_END, pane=_n(panes.pane)), _END))
    ends = ends.from_(_WINDOWS)
    ends.set("laterals", [gaps])
    bounds = sqlexpr.window_bounds(_col(_START), _col(_END))
    query = exp.select(*panes.rows.key_columns(), *bounds, *outputs).from_(ends.subquery(_ENDS))
    return query.with_(PANES, as_=panes.query).with_(_WINDOWS, as_=windows)


def _hop(panes: _Panes, window: Hop, outputs: List[exp.Expr]) -> exp.Select:
    """A window ends every slide at offset + size (mod slide). The window ends after a pane, up
    to the next pane or the pane's last window: the first window end after the pane's end (the
    last one at or before it, plus a slide), by slides."""
    keys = panes.rows.key_columns()
    after_pane = _fill(_AFTER_PANE, pane=_n(panes.pane))
    first_probe = exp.Add(
        this=sqlexpr.window_floor(exp.paren(after_pane), window.end_phase, window.slide), expression=_n(window.slide)
    )
    last_probe = _fill(_HOP_LAST_PROBE, size=_n(window.size))
    probes = _fill(_HOP_PROBES, first=first_probe, last=last_probe, pane=_n(panes.pane), slide=_n(window.slide))
    following = exp.select(exp.Star(), panes.next_pane).from_(PANES)
    # every pane, plus a probe row for each window whose last pane is empty (the window is
    # still computed on that row); one pass, so the panes are aggregated once
    real = [exp.alias_(_fill(_REAL, c=_col(c)), c) for c in panes.columns.values()]
    slots = exp.select(*keys, exp.alias_(sqlexpr.coalesce(_col(_PROBE), _col(PANE)), PANE), *real)
    slots = slots.from_(following.subquery(_FOLLOWING))
    slots.set("laterals", [_lateral(probes, _PROBES, _PROBE)])
    windows = exp.select(*panes.rows.key_columns(), exp.alias_(after_pane, _END), *panes.over_panes)
    windows = windows.from_(_SLOTS)
    reach = (_n(window.size - panes.pane), "PRECEDING")
    windows.set(
        "windows",
        [
            _named_window(_FRAME, panes.partition, sqlexpr.frame("RANGE", reach, _CURRENT)),
            _named_window(_UPTO, panes.partition, sqlexpr.frame("RANGE", _UNBOUNDED, _CURRENT)),
            _named_window(_BEFORE, panes.partition, sqlexpr.frame("RANGE", _UNBOUNDED, (_n(window.size), "PRECEDING"))),
        ],
    )
    e = _col(_END)
    bounds = sqlexpr.window_bounds(exp.Sub(this=e, expression=_n(window.size)), e)
    query = exp.select(*panes.rows.key_columns(), *bounds, *outputs).from_(_WINDOWS)
    if panes.pane != window.slide:  # with panes of a slide every pane ends a window
        query = query.where(_fill(_HOP_KEEP, phase=_n(window.end_phase), slide=_n(window.slide)))
    return query.with_(PANES, as_=panes.query).with_(_SLOTS, as_=slots).with_(_WINDOWS, as_=windows)


def plan_from_config(relation: str, window: Any, measures: Any, group_by: Any) -> Dict[str, Any]:
    """Entry point for the macro: `relation` is the FROM item it rendered, `window` the spec it
    validated; checks the measures and group_by, returns {'sql', 'fallback_reason'}."""
    spec = tvf.from_spec(window)
    if not isinstance(spec, (Tumble, Hop, Cumulate)):
        raise _fail("window", f"has kind {spec.kind.value}: its windows follow the rows, not panes")
    parsed = parse_measures(measures)
    if isinstance(group_by, str):
        group_by = [group_by]
    if not isinstance(group_by, (list, tuple)):
        raise _fail("group_by", f"must be a list of column names, got {group_by!r}")
    # a user's names: the plugin's own (tvf_aggregate's measures) may have the reserved prefix
    for argument, name in [*((f"measures.{m.alias}", m.alias) for m in parsed), *(("group_by", k) for k in group_by)]:
        problem = name_problem(name)
        if problem is not None:
            raise _fail(argument, f"{problem}, got {name!r}")
    result = plan(sqlexpr.from_item(relation), spec, parsed, list(group_by))
    return {"sql": result.sql, "fallback_reason": result.fallback_reason}
