"""The class archive's builder (class_archive.py): a process of its own, started in the
background, that runs a workload on a Spark JVM dumping its classes at exit and renames the dump
into place once that JVM exited cleanly. Apart from class_archive.py because it starts a Spark
session (session.py), which itself starts drivers with the archive: the runtime's modules import
one way, session -> class_archive, and this one sits above both."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import List, Optional, Sequence

from pyspark import SparkContext

from dbt.adapters.window_views.spark.class_archive import BUILD_TIMEOUT, DRIVER_JAVA_OPTIONS, QUIET, Archive, prune
from dbt.adapters.window_views.spark.session import embedded_settings, spark_session

# what the builder's JVM runs, so its archive holds the classes a dbt command loads: the
# metastore, Parquet tables, window SQL, and a streaming query with a Python foreachBatch
WORKLOAD = (
    "create database if not exists cds",
    "create table cds.events using parquet as select timestamp'2020-04-15 08:00:00' + make_interval(0, 0, 0, 0, 0, id) as ts,"
    " id % 3 as k, id as v from range(100)",
    "describe table extended cds.events",
    "show tables in cds",
    "select window.start, window.end, k, sum(v), count(*) from cds.events group by window(ts, '10 minutes'), k",
    "select k, ts, sum(v) over (partition by k order by ts rows between 2 preceding and current row),"
    " lag(v) over (partition by k order by ts), row_number() over (partition by k order by ts desc) from cds.events",
    "alter table cds.events set tblproperties ('window_views.built' = 'x')",
    "insert into cds.events select * from cds.events limit 3",
)


def build(path: Path) -> int:
    """The builder: run WORKLOAD on a JVM that dumps its classes at exit, wait for that JVM to
    exit, and only then rename the dump into place. Returns the exit code."""
    found = Archive(path)
    partial = found.partial(os.getpid())
    for left in path.parent.glob(f"{path.name}.*.tmp"):  # a killed builder's dump: never renamed
        left.unlink(missing_ok=True)
    os.nice(19)  # a background job: the user's own dbt command comes first
    try:
        with tempfile.TemporaryDirectory(prefix="wv-cds-") as scratch:
            params = embedded_settings(Path(scratch), {})
            params[DRIVER_JAVA_OPTIONS] += f" -XX:ArchiveClassesAtExit={partial} {QUIET}"
            spark = spark_session(params)
            for statement in WORKLOAD:
                spark.sql(statement).collect()
            _stream(spark, Path(scratch))
            gateway = SparkContext._gateway
            spark.stop()
            jvm = getattr(gateway, "proc", None)
            if jvm is None or jvm.stdin is None:
                raise RuntimeError("no JVM process to wait for")
            jvm.stdin.close()  # Spark's gateway exits when its parent's pipe closes
            code = jvm.wait(timeout=BUILD_TIMEOUT)
        if code != 0 or not partial.is_file():
            raise RuntimeError(f"the JVM exited {code} without an archive")
        os.replace(partial, found.path)
        found.failed.unlink(missing_ok=True)
        prune(found)
        return 0
    except Exception as exc:  # any failure: recorded, retried after RETRY_AFTER
        found.failed.write_text(f"{type(exc).__name__}: {exc}\n")
        return 1
    finally:
        partial.unlink(missing_ok=True)
        found.building.unlink(missing_ok=True)


def _stream(spark: object, scratch: Path) -> None:
    """One micro-batch of a streaming query over a table, written by a Python foreachBatch."""

    def write(df: object, batch_id: int) -> None:
        df.groupBy("k").count().write.mode("append").parquet(str(scratch / "out"))  # type: ignore[attr-defined]

    stream = spark.readStream.table("cds.events")  # type: ignore[attr-defined]
    query = (
        stream.writeStream.foreachBatch(write)
        .option("checkpointLocation", str(scratch / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()


def main(argv: Optional[Sequence[str]] = None) -> int:
    args: List[str] = list(argv if argv is not None else sys.argv[1:])
    if len(args) == 2 and args[0] == "build":
        return build(Path(args[1]))
    print("usage: archive_builder build ARCHIVE", file=sys.stderr)
    return 2
