"""A window macro's input under a dbt time filter (a microbatch batch, `--event-time-start/end`,
`--sample`): the relation read through its filter widened by the window's reach (reach.py), and
the predicate that keeps the windows the filter's range owns. Both are rendered by the relation's
own event-time machinery, so the times read as dbt writes its own filter."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any, Dict, List, Mapping, Optional

from dbt.adapters.base.relation import BaseRelation, EventTimeFilter
from dbt_common.exceptions import CompilationError

from dbt.adapters.window_views.errors import IntervalError
from dbt.adapters.window_views.kinds.reach import ReachError, TimeRange, as_datetime, micros, reach_of
from dbt.adapters.window_views.query import tvf
from dbt.adapters.window_views.query.intervals import Interval


def _micros(t: Optional[datetime]) -> Optional[int]:
    return None if t is None else micros(t)


def _time(value: Optional[int], like: datetime) -> Optional[datetime]:
    return None if value is None else as_datetime(value, like)


def window_read(
    relation: BaseRelation, spec: Mapping[str, Any], macro_name: str, session_lookback: Optional[str]
) -> Dict[str, Optional[str]]:
    """{'relation': the input as the macro reads it, 'owned': the predicate on the window columns
    that keeps the windows the range owns (None: no range, every window)}."""
    where = f"window_views.{macro_name}: "
    period = relation.event_time_filter
    like = None if period is None else period.start or period.end
    if period is None or like is None:
        return {"relation": str(relation), "owned": None}
    window = tvf.from_spec(spec)
    column = period.field_name.strip(relation.quote_character)
    if column.lower() != window.time_col.lower():
        raise CompilationError(
            f"{where}dbt filters the input {relation.render()} to a time range by its event_time '{column}', but "
            f"the window's time_col is '{window.time_col}': the window cannot tell which rows of the range it "
            f"needs; fix: set the input's event_time to '{window.time_col}', or window by '{column}'"
        )
    try:
        lookback = None if session_lookback is None else Interval.parse(session_lookback, window=True)
        reach = reach_of(window, lookback)
    except (IntervalError, ReachError) as exc:
        problem = str(exc) if isinstance(exc, ReachError) else f"argument 'session_lookback': {exc}"
        raise CompilationError(where + problem) from exc
    owned = TimeRange(_micros(period.start), _micros(period.end))
    read = reach.read(owned)
    # dbt compares with string bounds, which Spark casts to a DATE column's type, dropping the
    # time of day (a session's inclusive end, + 1 µs, would lose the rows at its end): as a timestamp
    # (a no-op cast Spark removes for a TIMESTAMP column, whose reads still skip files by it)
    field = f"cast({period.field_name} as timestamp)"
    widened = EventTimeFilter(field_name=field, start=_time(read.start, like), end=_time(read.end, like))
    filters = [EventTimeFilter(field_name=relation.quoted("window_time"), start=period.start, end=period.end)]
    whole = reach.whole_from(read)
    if whole is not None:
        filters.append(EventTimeFilter(field_name=relation.quoted("window_start"), start=_time(whole, like)))
    predicates: List[str] = [relation._render_event_time_filtered(f) for f in filters]
    return {"relation": str(replace(relation, event_time_filter=widened)), "owned": " and ".join(predicates)}
