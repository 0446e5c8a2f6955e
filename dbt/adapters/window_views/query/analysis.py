"""Reading compiled window-view SQL with sqlglot (spark dialect): the over-window calls, their
PARTITION BY / ORDER BY / frame, the relations read and the output columns."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Dict, List, Optional, Tuple

from sqlglot import exp
from sqlglot.errors import ParseError

from dbt.adapters.window_views import names
from dbt.adapters.window_views.errors import AnalysisError, IntervalError
from dbt.adapters.window_views.query import intervals, sqlexpr, tvf
from dbt.adapters.window_views.query.intervals import Interval
from dbt.adapters.window_views.query.shown import shown

# functions whose value for a row depends on the size of the whole partition
WHOLE_PARTITION_FUNCTIONS = (exp.Ntile, exp.PercentRank, exp.CumeDist)
# functions that ignore the frame: ranking and LAG read only rows up to the current row's peers
PRECEDING_ONLY_FUNCTIONS = (exp.RowNumber, exp.Rank, exp.DenseRank, exp.Lag)


class FrameKind(str, Enum):
    ROWS = "rows"
    RANGE = "range"


class BoundKind(str, Enum):
    UNBOUNDED = "unbounded"
    CURRENT = "current"
    OFFSET = "offset"


class Side(str, Enum):
    PRECEDING = "preceding"
    FOLLOWING = "following"

    @property
    def mirrored(self) -> "Side":
        """The side over the reversed order."""
        return Side.FOLLOWING if self is Side.PRECEDING else Side.PRECEDING


@dataclass(frozen=True)
class FrameBound:
    """One end of a frame: UNBOUNDED, CURRENT ROW, or an offset PRECEDING/FOLLOWING."""

    kind: BoundKind
    side: Optional[Side] = None
    rows: Optional[int] = None  # ROWS offset
    micros: Optional[int] = None  # RANGE interval offset

    @property
    def is_following(self) -> bool:
        return self.side is Side.FOLLOWING and self.kind is not BoundKind.CURRENT

    def is_unbounded(self, side: Optional[Side] = None) -> bool:
        return self.kind is BoundKind.UNBOUNDED and (side is None or self.side is side)

    def is_offset(self, side: Side) -> bool:
        return self.kind is BoundKind.OFFSET and self.side is side


@dataclass(frozen=True)
class Frame:
    kind: FrameKind
    start: FrameBound
    end: FrameBound


# an ORDER BY key: (expression sql, descending, NULLS FIRST), as Spark orders it
OrderKey = Tuple[str, bool, bool]


@dataclass(frozen=True)
class OverCall:
    """One window function call with its resolved window definition."""

    sql: str
    function: str
    partition_by: Tuple[str, ...]
    order_by: Tuple[OrderKey, ...]
    frame: Frame
    lead_offset: Optional[int]  # rows ahead that LEAD reads
    generated: bool  # rendered by the plugin's macros (TVF sessions, pane plans), not the user
    node: exp.Window
    select: exp.Select
    definition: exp.Window  # where its PARTITION BY and ORDER BY are: itself, or the named window

    @property
    def partition_nodes(self) -> Tuple[exp.Expression, ...]:
        """The PARTITION BY expressions as nodes (`partition_by` renders them)."""
        return tuple(self.definition.args.get("partition_by") or ())

    @property
    def order_nodes(self) -> Tuple[exp.Expression, ...]:
        """The ORDER BY expressions as nodes, without direction (`order_by` has it)."""
        order = self.definition.args.get("order")
        return tuple(o.this for o in (order.expressions if order else []))

    @property
    def func(self) -> exp.Expression:
        """The function called (`function` is its name), under any IGNORE/RESPECT NULLS."""
        return function(self.node)

    @property
    def shown(self) -> str:
        """The call as the model's SQL reads it, for a message (shown.py)."""
        return shown(self.node)

    @property
    def ignore_nulls(self) -> bool:
        return isinstance(self.node.this, exp.IgnoreNulls)


def parse(compiled: str) -> exp.Expression:
    """The one entry where dbt's compiled text becomes a tree; everything downstream takes the tree."""
    try:
        return sqlexpr.parse(compiled)
    except ParseError as exc:
        raise AnalysisError(f"cannot parse the compiled SQL: {exc}") from exc


def _bound(kind: FrameKind, value: object, side: Optional[Side], call: str, generated: bool = False) -> FrameBound:
    if value is None or value == "CURRENT ROW":
        return FrameBound(BoundKind.CURRENT)
    if value == "UNBOUNDED":
        return FrameBound(BoundKind.UNBOUNDED, side)
    if kind is FrameKind.ROWS:
        if isinstance(value, exp.Literal) and not value.is_string:
            return FrameBound(BoundKind.OFFSET, side, rows=int(value.this))
        raise AnalysisError(f"ROWS frame offset {value} in `{call}` must be an integer literal")
    if isinstance(value, exp.Interval) and isinstance(value.unit, exp.IntervalSpan):
        # DAY TO SECOND: how query/frames.py writes the bounds it splits a frame at
        micros = intervals.day_to_second_micros(value.this.name)
        if (
            micros is not None
            and value.unit.this.name.upper() == "DAY"
            and value.unit.expression.name.upper() == "SECOND"
        ):
            return FrameBound(BoundKind.OFFSET, side, micros=micros)
    if isinstance(value, exp.Interval):
        text = f"{value.this.name} {value.unit.name if value.unit else ''}".strip()
        try:
            return FrameBound(BoundKind.OFFSET, side, micros=Interval.parse(text.lower(), allow_zero=True).micros)
        except IntervalError as exc:
            raise AnalysisError(f"RANGE frame offset in `{call}`: {exc}") from exc
    if generated and isinstance(value, exp.Literal) and not value.is_string:
        # the pane plans' RANGE frames (panes.py) order by pane starts in epoch micros
        return FrameBound(BoundKind.OFFSET, side, micros=int(value.this))
    raise AnalysisError(f"RANGE frame offset {value} in `{call}` must be an INTERVAL on the ORDER BY timestamp")


def _frame(spec: Optional[exp.WindowSpec], has_order: bool, call: str, generated: bool = False) -> Frame:
    if spec is None:
        # SQL default: with ORDER BY the frame runs to the current row's last peer, else the partition
        end = FrameBound(BoundKind.CURRENT) if has_order else FrameBound(BoundKind.UNBOUNDED, Side.FOLLOWING)
        return Frame(FrameKind.RANGE, FrameBound(BoundKind.UNBOUNDED, Side.PRECEDING), end)
    kind_name = str(spec.args.get("kind") or "range").lower()
    if kind_name not in {k.value for k in FrameKind}:  # GROUPS: query/frames.py rewrites it for a batch build
        raise AnalysisError(f"`{call}` has a {kind_name.upper()} frame, which Spark SQL lacks")
    kind = FrameKind(kind_name)
    sides = {k: (Side(str(spec.args[k]).lower()) if spec.args.get(k) else None) for k in ("start_side", "end_side")}
    start = _bound(kind, spec.args.get("start"), sides["start_side"], call, generated)
    end = (
        _bound(kind, spec.args.get("end"), sides["end_side"], call, generated)
        if spec.args.get("end")
        else FrameBound(BoundKind.CURRENT)
    )
    return Frame(kind, start, end)


def _named_windows(select: exp.Select) -> Dict[str, exp.Window]:
    return {w.alias_or_name.lower(): w for w in select.args.get("windows") or [] if isinstance(w, exp.Window)}


def function(node: exp.Window) -> exp.Expression:
    """A window call's function, under any IGNORE NULLS / RESPECT NULLS."""
    func = node.this
    while isinstance(func, (exp.IgnoreNulls, exp.RespectNulls)):
        func = func.this
    return func


def row_offset(func: exp.Expression, call: str) -> int:
    """How many rows away LAG/LEAD `func` (in the window call `call`) reads."""
    offset = func.args.get("offset")
    if offset is None:
        return 1
    if not (isinstance(offset, exp.Literal) and not offset.is_string):
        raise AnalysisError(f"{func.key.upper()} offset in `{call}` must be an integer literal")
    return int(offset.this)


def over_calls(tree: exp.Expression) -> List[OverCall]:
    """Every window function call, with named windows (`OVER w`, `WINDOW w AS ...`) resolved."""
    calls = []
    for node in tree.find_all(exp.Window):
        if node.arg_key == "windows":  # a WINDOW clause definition, not a call
            continue
        select = node.find_ancestor(exp.Select)
        if select is None:  # sqlglot reads a window call only inside a SELECT (its QUALIFY included)
            raise AnalysisError(f"`{shown(node)}` is not inside a query")
        definition = node
        base = node.args.get("alias")
        if base is not None:
            named = _named_windows(select).get(base.name.lower())
            if named is None:
                raise AnalysisError(f"window `{base.name}` used in `{shown(node)}` is not defined")
            definition = named
        call = node.sql(sqlexpr.ModelSql)  # as written: EXCLUDE and FROM LAST kept (frames.py)
        said = shown(node)  # the call in messages
        order = definition.args.get("order")
        order_by = tuple(
            # sqlglot reads Spark's NULL order into nulls_first where the SQL leaves it out
            (o.this.sql("spark"), bool(o.args.get("desc")), bool(o.args.get("nulls_first")))
            for o in (order.expressions if order else [])
        )
        func = function(node)
        lead_offset = row_offset(func, said) if isinstance(func, exp.Lead) else None
        generated = _generated(node, definition)
        calls.append(
            OverCall(
                sql=call,
                function=func.key,
                partition_by=tuple(p.sql("spark") for p in definition.args.get("partition_by") or []),
                order_by=order_by,
                frame=_frame(node.args.get("spec") or definition.args.get("spec"), bool(order_by), said, generated),
                lead_offset=lead_offset,
                generated=generated,
                node=node,
                select=select,
                definition=definition,
            )
        )
    return calls


def written_calls(tree: exp.Expression) -> Tuple[str, ...]:
    """The model's own window function calls as it writes them, where over_calls cannot read
    their frames (GROUPS: frames.py rewrites them): what the table's properties list."""
    found = []
    for node in tree.find_all(exp.Window):
        select = node.find_ancestor(exp.Select)
        if node.arg_key == "windows" or select is None:
            continue
        base = node.args.get("alias")
        definition = _named_windows(select).get(base.name.lower(), node) if base is not None else node
        if not _generated(node, definition):
            found.append(node.sql(sqlexpr.ModelSql))
    return tuple(found)


def _generated(node: exp.Window, definition: exp.Window) -> bool:
    """A call the macros' SQL holds: it uses only `_wv_` columns and fields of `_wv_` structs, or is
    under their marker (a pane plan partitions by the user's group_by keys)."""
    columns = [*node.find_all(exp.Column), *definition.find_all(exp.Column)]
    return _in_macro(node) or bool(columns) and all(names.is_reserved(c.table or c.name) for c in columns)


def _in_macro(node: exp.Expression) -> bool:
    """Whether `node` is in the SQL a window macro rendered: under the SELECT its marker heads."""
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.Select) and any("window_views:tvf:" in c for c in parent.comments or []):
            return True
        parent = parent.parent
    return False


def input_tables(tree: exp.Expression) -> List[Tuple[Optional[str], str]]:
    """The physical relations read, as (schema, name): tables that are not CTE names."""
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    seen: List[Tuple[Optional[str], str]] = []
    for table in tree.find_all(exp.Table):
        name = table.name
        if not name or (not table.db and name.lower() in ctes):
            continue
        key = (table.db or None, name)
        if key not in seen:
            seen.append(key)
    return seen


def empty_reads(tree: exp.Expression) -> List[exp.Table]:
    """The tables dbt renders as an empty read under `--empty`: `(select * from t where false
    limit 0)`."""
    found = []
    for node in tree.find_all(exp.Subquery):
        select, limit = node.this, node.this.args.get("limit")
        if not (isinstance(select, exp.Select) and isinstance(limit, exp.Limit) and select.is_star):
            continue
        source, where = getattr(select.args.get("from_"), "this", None), select.args.get("where")
        zero = isinstance(limit.expression, exp.Literal) and limit.expression.this == "0"
        if isinstance(source, exp.Table) and where is not None and where.this == exp.false() and zero:
            found.append(source)
    return found


def tvf_markers(compiled: str) -> List[str]:
    """The window TVFs a model uses, as their calls read, from dbt's compiled text (tvf.py reads
    the macros' markers, also where sqlglot cannot parse the SQL)."""
    return [window.label() for window in tvf.find(compiled)]


def without_qualifiers(node: exp.Expression) -> exp.Expression:
    """A copy of `node` without table qualifiers, as it reads over the upstream table itself."""
    node = node.copy()
    for column in node.find_all(exp.Column):
        column.set("table", None)
    return node


def unqualified(node: exp.Expression) -> str:
    """`without_qualifiers(node)` as Spark SQL."""
    return without_qualifiers(node).sql("spark")


def _unquote(name: str) -> str:
    return name.strip("`").lower()


def is_column(node: exp.Expression, column: str) -> bool:
    """Whether an ORDER BY / PARTITION BY expression is the bare (maybe qualified) column."""
    return isinstance(node, exp.Column) and _unquote(node.name) == column.lower()
