"""A reader of a table during a run: what a dashboard polling the table would see."""

from __future__ import annotations

import threading
from typing import List


class Reader(threading.Thread):
    """Reads the table in a loop (on the session dbt runs in, or another one), keeping every
    result and every error."""

    def __init__(self, project, name: str, spark=None) -> None:
        super().__init__(daemon=True)
        self.project, self.name, self.spark = project, name, spark or project.spark
        self.seen: List[List[tuple]] = []
        self.counts: List[int] = []
        self.failures: List[str] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.read()

    def read(self) -> None:
        spark, table = self.spark, f"{self.project.schema}.{self.name}"
        try:
            self.seen.append([tuple(r) for r in spark.sql(f"select * from {table} order by all").collect()])
            self.counts.append(spark.sql(f"select count(*) from {table}").first()[0])
        except Exception as exc:  # noqa: BLE001 - a reader's error is what the test looks for
            self.failures.append(str(exc).splitlines()[0])

    def stop(self) -> None:
        """Stop reading, then read once more: the loop's last read may have begun before the
        run it watched ended, so `seen[-1]` is what a reader sees once the run is done."""
        self.done.set()
        self.join(60)
        self.read()
