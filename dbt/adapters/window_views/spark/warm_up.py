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

from dbt.adapters.window_views.names import RESERVED_PREFIX

ROUNDS_ENV = "WINDOW_VIEWS_WARM_UP_ROUNDS"
DEFAULT_ROUNDS = 12  # bench_warm.py: a one-model run stops getting faster after about ten
DATABASE = f"{RESERVED_PREFIX}warm_up"
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


_TUMBLE = (
    "timestamp_micros(unix_micros(cast(`ts` as timestamp)) - pmod(unix_micros(cast(`ts` as timestamp)), 600000000))"
)
SETUP = (
    f"drop database if exists {DATABASE} cascade",  # a warm-up cut off by a stop left it
    f"create database {DATABASE}",
    f"create table {DATABASE}.bids using parquet as select timestamp'2020-04-15 08:00:00' + "
    "make_interval(0, 0, 0, 0, 0, id) as ts, id % 7 as item, id % 100 as price from range(2000)",
)
ROUND = (
    "show databases",
    f"show table extended in {DATABASE} like '*'",
    f"refresh table {DATABASE}.bids",
    f"describe extended {DATABASE}.bids",
    f"create table {DATABASE}.tumbled__tmp tblproperties ('window_views.windows' = 'tumble') "
    f"comment 'warm-up' as select window_start, window_start + interval 10 minutes as window_end, item, "
    f"sum(price) as price, count(*) as bids from (select *, {_TUMBLE} as window_start from {DATABASE}.bids "
    "where `ts` is not null) group by window_start, item",
    f"alter table {DATABASE}.tumbled__tmp rename to {DATABASE}.tumbled",
    f"alter table {DATABASE}.tumbled set tblproperties ('window_views.round' = 'warm')",
    f"alter table {DATABASE}.tumbled rename to {DATABASE}.tumbled__old",
    f"drop table {DATABASE}.tumbled__old",
)
QUERIES = (
    f"select item, ts, sum(price) over (partition by item order by ts rows between 10 preceding and current row) "
    f"as s, lag(price) over (partition by item order by ts) as l from {DATABASE}.bids order by item, ts limit 500",
    f"select item, max(price), count(*) from {DATABASE}.bids group by item",
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
            self._sql(f"drop database if exists {DATABASE} cascade")
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

    def _sql(self, statement: str) -> Any:
        assert self.spark is not None
        return self.spark.sql(statement)


def _first_line(exc: BaseException) -> str:
    lines: List[str] = str(exc).strip().splitlines() or [type(exc).__name__]
    return lines[0][:300]
