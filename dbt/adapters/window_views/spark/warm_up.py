"""The warm Spark's warm-up: a started server's JVM runs the code of a dbt command's statements
interpreted until its JIT compiler has compiled them, and a user's first commands paid for that.
The watchdog (warm_server.watch) runs rounds of what a window view's `dbt run` asks of Spark
(catalog listings, a CTAS with the window's table properties, the swap's renames, a describe, a
window aggregate, an over window, a collect) through a Spark Connect session of its own, only
while no dbt command uses the server, in a database of its own that it drops when done.

WINDOW_VIEWS_WARM_UP_ROUNDS sets the rounds (0: none)."""

from __future__ import annotations

import os
import time
import warnings
from typing import Any, Callable, List, Optional

from sqlglot import exp

from dbt.adapters.window_views import names
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.query.windows import Tumble

ROUNDS_ENV = "WINDOW_VIEWS_WARM_UP_ROUNDS"
DEFAULT_ROUNDS = 12  # bench_warm.py: a one-model run stops getting faster after about ten
DATABASE = names.internal("warm_up")
# the server is on loopback: a refused connection means it is gone, not a network blip, so a few
# quick retries (about a second), not Spark Connect's ten minutes, which kept the watchdog alive
RETRIES, MAX_BACKOFF_MS = 3, 1000


def loopback_retries(spark: Any) -> None:
    """A Spark Connect session of a server on loopback (a warm server) retries a refused
    connection RETRIES times, not for Spark Connect's default ten minutes."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    spark.client.set_retry_policies([DefaultPolicy(max_retries=RETRIES, max_backoff=MAX_BACKOFF_MS)])
    # pyspark warns, with its own file's path, as it gives up; the plugin's error says why instead
    warnings.filterwarnings("ignore", message=r"\[RETRIES_EXCEEDED\]", category=UserWarning)


MINUTE = 60_000_000
# the windows a `dbt run` of a tumble window view renders: the plugin's own window arithmetic
_TUMBLE = Tumble("ts", size=10 * MINUTE)


def _table(name: str) -> exp.Table:
    return exp.table_(name, db=DATABASE)


def _command(verb: str, *parts: exp.Expression | str) -> exp.Command:
    """A statement sqlglot keeps as a Command (SHOW): the verb, then each part as sqlglot renders it."""
    rest = " ".join(part if isinstance(part, str) else sqlexpr.to_sql(part) for part in parts)
    return exp.Command(this=verb, expression=exp.Literal.string(rest))


def _statement(template: str, **tables: exp.Table) -> exp.Expression:
    """`template` with each table or database `:name` replaced by `tables[name]`."""

    def fill(node: exp.Expr) -> exp.Expr:
        placeholder = node.this if isinstance(node, exp.Table) else None
        return tables[placeholder.name].copy() if isinstance(placeholder, exp.Placeholder) else node

    return sqlexpr.node(sqlexpr.parse(template).transform(fill))


def _tumbled(bids: exp.Table) -> exp.Select:
    """The tumbling window aggregate of the bids, its windows as the plugin renders them."""
    t = sqlexpr.epoch_micros(sqlexpr.column("ts"))
    windowed = (
        exp.select("*", *sqlexpr.window_bounds(_TUMBLE.start_sql(t), _TUMBLE.first_end_sql(t)))
        .from_(bids.copy())
        .where(sqlexpr.column("ts").is_(exp.null()).not_())
    )
    keys = ("window_start", "window_end", "item")
    return exp.select(*keys, "sum(price) as price", "count(*) as bids").from_(windowed.subquery()).group_by(*keys)


def _create_as(table: exp.Table, query: exp.Select) -> exp.Expression:
    """CREATE TABLE ... AS `query` with the table properties and comment a window view's table has."""
    create = _statement(
        "create table :t tblproperties ('window_views.windows' = 'tumble') comment 'warm-up' as select 1", t=table
    )
    create.set("expression", query)
    return create


_DATABASE = exp.table_(DATABASE)
_BIDS, _TMP, _TUMBLED, _OLD = (_table(name) for name in ("bids", "tumbled__tmp", "tumbled", "tumbled__old"))
DROP_DATABASE = _statement("drop database if exists :db cascade", db=_DATABASE)
SETUP = (
    DROP_DATABASE,  # a warm-up cut off by a stop left it
    _statement("create database :db", db=_DATABASE),
    _statement(
        "create table :bids using parquet as select timestamp'2020-04-15 08:00:00' + "
        "make_interval(0, 0, 0, 0, 0, id) as ts, id % 7 as item, id % 100 as price from range(2000)",
        bids=_BIDS,
    ),
)
ROUND = (
    _command("SHOW", "DATABASES"),
    _command("SHOW", "TABLE EXTENDED IN", _DATABASE, "LIKE", exp.Literal.string("*")),
    exp.Refresh(this=_BIDS.copy(), kind="TABLE"),
    exp.Describe(this=_BIDS.copy(), style="EXTENDED"),
    _create_as(_TMP, _tumbled(_BIDS)),
    _statement("alter table :tmp rename to :tumbled", tmp=_TMP, tumbled=_TUMBLED),
    _statement("alter table :tumbled set tblproperties ('window_views.round' = 'warm')", tumbled=_TUMBLED),
    _statement("alter table :tumbled rename to :old", tumbled=_TUMBLED, old=_OLD),
    exp.Drop(tables=[_OLD.copy()], kind="TABLE"),
)
QUERIES = (
    _statement(
        "select item, ts, sum(price) over (partition by item order by ts rows between 10 preceding and current row) "
        "as s, lag(price) over (partition by item order by ts) as l from :bids order by item, ts limit 500",
        bids=_BIDS,
    ),
    _statement("select item, max(price), count(*) from :bids group by item", bids=_BIDS),
)


def rounds() -> int:
    """The rounds the watchdog runs after a server starts: WINDOW_VIEWS_WARM_UP_ROUNDS, else the
    default (a value that is not a whole number: the default too, the watchdog's log says so)."""
    text = os.environ.get(ROUNDS_ENV, "").strip()
    if not text:
        return DEFAULT_ROUNDS
    try:
        return max(0, int(text))
    except ValueError:
        print(f"{ROUNDS_ENV}={text!r} is not a whole number; {DEFAULT_ROUNDS} warm-up rounds", flush=True)
        return DEFAULT_ROUNDS


class WarmUp:
    """Rounds of the warm-up against the server at `url`, one per `step` while `busy` says no
    dbt command uses the server; its database is dropped after the last."""

    def __init__(self, url: str, total: int, busy: Callable[[], bool]) -> None:
        self.url = url
        self.left = total
        self.busy = busy
        self.spark: Optional[Any] = None
        self.started: Optional[float] = None
        self.done = 0

    @property
    def pending(self) -> bool:
        return self.left > 0

    def step(self) -> None:
        """One round, when the server is idle; an error ends the warm-up (the server may be
        stopping), and the watchdog goes on."""
        if not self.pending or self.busy():
            return
        try:
            if self.spark is None:
                self._connect()
            for statement in ROUND:
                self._sql(statement)
            for query in QUERIES:
                self._sql(query).collect()
            self.done += 1
            self.left -= 1
            if not self.left:
                self._finish()
        except Exception as exc:  # noqa: BLE001 - the server's own business; the next command sees it
            print(f"{time.ctime()}: warm-up stopped after {self.done} round(s): {_first_line(exc)}", flush=True)
            self.left = 0
            self._close(release=False)

    def _finish(self) -> None:
        if self.spark is None:
            return
        try:
            self._sql(DROP_DATABASE)
            took = time.monotonic() - (self.started or time.monotonic())
            print(f"{time.ctime()}: warmed up in {self.done} round(s), {took:.1f} s", flush=True)
        finally:
            self._close()

    def _close(self, release: bool = True) -> None:
        """Stop the session; after an error without releasing it (the server may be gone, and
        it drops a session it no longer hears from)."""
        spark, self.spark = self.spark, None
        if spark is not None:
            try:
                if not release:
                    spark.release_session_on_close = False
                spark.stop()
            except Exception:  # noqa: BLE001 - a session of a server that is gone
                pass

    def _connect(self) -> None:
        from pyspark.sql import SparkSession

        self.started = time.monotonic()
        self.spark = SparkSession.builder.remote(self.url).getOrCreate()
        loopback_retries(self.spark)
        for statement in SETUP:
            self._sql(statement)

    def _sql(self, statement: exp.Expression) -> Any:
        assert self.spark is not None
        return self.spark.sql(sqlexpr.to_sql(statement))


def _first_line(exc: BaseException) -> str:
    lines: List[str] = str(exc).strip().splitlines() or [type(exc).__name__]
    return lines[0][:300]
