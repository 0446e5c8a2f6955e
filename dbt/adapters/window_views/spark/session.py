"""The Spark session behind `method: session`: embedded local Spark by default, a cluster
through `spark.master`, or Spark Connect through `spark.remote` / SPARK_REMOTE."""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import subprocess
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Mapping, Optional, Set, Tuple

from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.session import Connection, Cursor
from dbt_common.exceptions import DbtRuntimeError
from py4j.protocol import Py4JError, Py4JJavaError
from pyspark.errors import AnalysisException, PySparkException
from pyspark.sql import Row, SparkSession

from dbt.adapters.window_views.query import ddl
from dbt.adapters.window_views.spark import class_archive, kafka_jars, lakehouse, s3, warm_up
from dbt.adapters.window_views.spark.connect import is_connect
from dbt.adapters.window_views.spark.spark_messages import without_plan

if TYPE_CHECKING:  # imported where used: `python -m ...warm_server` runs it before anything imported it
    from dbt.adapters.window_views.spark import warm_server

logger = AdapterLogger("WindowViews")

MORE_MEMORY = (
    "spark.driver.memory in the profile's server_side_parameters for the embedded session, the executors' "
    "memory on a cluster"
)
JVM_GONE = (
    "Spark's JVM in this dbt process is gone: it exited during this run (a model ran it out of memory, "
    "or it was killed; Spark's log above says which); fix: run dbt again, a new dbt process starts Spark "
    f"anew (if a model ran it out of memory, give Spark more memory first: {MORE_MEMORY})"
)
DATAFRAME_DEBUGGING = "spark.python.sql.dataFrameDebugging.enabled"
TIME_ZONE = "spark.sql.session.timeZone"  # UTC here: the plugin cuts windows and buckets in UTC
SPARK_OOM_EXIT = 52  # Spark's exit code for a JVM that ran out of memory (SparkExitCode.OOM)
JVM_EXIT_WAIT = 10  # seconds a stopped context's JVM gets to exit and tell why
JAVA_HINT = (
    "Spark needs Java 17 (or 21). Install a JDK, e.g. `apt-get install openjdk-17-jre-headless` "
    "on Debian/Ubuntu or `brew install openjdk@17` on macOS, and put `java` on PATH or set JAVA_HOME."
)


# PySpark logs every SQL error's query context as JSON with a stack trace on stderr, beside the
# message dbt prints anyway; py4j logs a micro-batch's failure with the Python traceback of the
# foreachBatch call the plugin reports as one message. WINDOW_VIEWS_SPARK_LOGS=1 shows them
QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")
PROXY_LOGGER = "py4j.clientserver"
SPARK_LOGS_ENV = "WINDOW_VIEWS_SPARK_LOGS"
# a failed task or micro-batch: Spark logs the error with its Java stack where it happens (the
# task, the scheduler, the writer, the streaming query) and then raises it to the driver, where
# the plugin or dbt names it in one message. Off unless WINDOW_VIEWS_SPARK_LOGS=1
FAILURE_LOGGERS = (
    "org.apache.spark.executor.Executor",
    "org.apache.spark.scheduler.TaskSetManager",
    "org.apache.spark.sql.execution.datasources.FileFormatWriter",
    "org.apache.spark.sql.execution.streaming",
    "org.apache.spark.util.Utils",  # a write's task failing: "Aborting task" with its stack
    # Delta's CREATE OR REPLACE of a table in the Hive metastore: Hive logs "Failed to alter table"
    # for the replaced table's schema, which Delta keeps in its log, and the statement goes on
    "org.apache.hadoop.hive.metastore.HiveAlterHandler",
)


def quiet_query_context_logs() -> None:
    if not os.environ.get(SPARK_LOGS_ENV):
        for name in QUERY_CONTEXT_LOGGERS:
            logging.getLogger(name).disabled = True
        logging.getLogger(PROXY_LOGGER).setLevel(logging.CRITICAL)


def quiet_failure_logs(session: SparkSession) -> None:
    if os.environ.get(SPARK_LOGS_ENV):
        return
    jvm: Any = session.sparkContext._jvm
    # a class by its full name: one py4j lookup, where jvm.org.apache... is one a package step
    off = getattr(jvm, "org.apache.logging.log4j.Level").OFF
    configurator = getattr(jvm, "org.apache.logging.log4j.core.config.Configurator")
    for name in FAILURE_LOGGERS:
        configurator.setLevel(name, off)


# DataSketches, the library behind Spark's HLL sketches (a window_aggregate's
# approx_count_distinct merges them across panes), prints "Warning: Java versions > Java 11 can
# only operate in restricted mode where no off-heap operations are allowed!" on the JVM's stderr
# when its classes load, about off-heap memory Spark never asks it for, and has no setting for it:
# loaded once at start with the JVM's System.err pointed at nothing, it has said it (a JVM says
# it once). WINDOW_VIEWS_SPARK_LOGS=1 leaves it
SKETCHES = "org.apache.datasketches.memory.internal.ResourceImpl"


def quiet_sketches_notice(session: SparkSession) -> None:
    if os.environ.get(SPARK_LOGS_ENV):
        return
    jvm: Any = session.sparkContext._jvm
    system = getattr(jvm, "java.lang.System")
    err = system.err
    try:
        nothing = getattr(jvm, "java.io.OutputStream").nullOutputStream()
        system.setErr(getattr(jvm, "java.io.PrintStream")(nothing))
        getattr(jvm, "java.lang.Class").forName(SKETCHES)
    except Py4JError:  # not there (another Spark): nothing to keep out
        pass
    finally:
        system.setErr(err)


def java_options(derby_home: Path) -> str:
    """The embedded driver's JVM options: Derby's files under `derby_home`, and Spark's own
    logging at errors only (log4j2.properties beside this module)."""
    log4j = Path(__file__).with_name("log4j2.properties").as_uri()
    return f"-Dderby.system.home={derby_home} -Dlog4j2.configurationFile={log4j}"


HIVE_RESOURCES = "spark.hadoop.hive.downloaded.resources.dir"


def _embedded_defaults(target_dir: Path) -> Dict[str, str]:
    """Spark settings for the in-process default: everything under the project's target/."""
    target_dir = target_dir.resolve()
    return {
        "spark.master": "local[*]",
        "spark.app.name": "dbt-window-views",
        "spark.sql.warehouse.dir": str(target_dir / "spark-warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={target_dir / 'metastore_db'};create=true"
        ),
        # derby.log goes to derby.system.home, the current directory unless told otherwise
        "spark.driver.extraJavaOptions": java_options(target_dir),
        # Hive's session makes a resources folder (unused by Spark) and removes it only on a close
        # a dbt command never reaches: one folder, here, instead of /tmp/<uuid>_resources a start
        HIVE_RESOURCES: str(target_dir / "hive_resources"),
        TIME_ZONE: "UTC",
        # PySpark records each DataFrame call's Python call site for Spark's error context (about
        # six py4j calls a call); the plugin names its errors itself, and each of its micro-batches
        # makes dozens of such calls
        DATAFRAME_DEBUGGING: "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.memory": "2g",
    }


# Spark lists a read of more than 32 files (a catch-up's micro-batch, a restart's replay of the
# last one) with a Spark job of its own, 0.3-0.9 s each; on a local master that job only adds its
# own cost, so the driver lists them. A cluster keeps Spark's default: its executors list in parallel
LISTING_THRESHOLD = "spark.sql.sources.parallelPartitionDiscovery.threshold"
LOCAL_LISTING = "1000000"


def embedded_settings(target_dir: Path, profile: Mapping[str, str]) -> Dict[str, str]:
    """The embedded session's settings: the defaults under the project's target/, the profile's
    `server_side_parameters` over them."""
    settings = {**_embedded_defaults(target_dir), **profile}
    if settings["spark.master"].startswith("local") and LISTING_THRESHOLD not in profile:
        settings[LISTING_THRESHOLD] = LOCAL_LISTING
    return settings


def remote_url(params: Dict[str, str]) -> Optional[str]:
    return params.get("spark.remote") or os.environ.get("SPARK_REMOTE")


@functools.lru_cache(maxsize=None)
def warm_url(spec: warm_server.WarmSpec) -> str:
    """The project's warm Spark (`warm_spark: true`), found or started once per dbt process; Java
    is checked only before a server starts (`java -version` is a JVM start of its own)."""
    from dbt.adapters.window_views.spark import warm_server

    return warm_server.ensure(spec, before_start=check_java)


def _check_no_warm_server(params: Mapping[str, str]) -> None:
    """A warm server still running for this project holds its metastore: name it and its stop
    command instead of the metastore client's thousands of lines."""
    from dbt.adapters.window_views.spark import warm_server

    holder = warm_server.holding_metastore(params)
    if holder is not None:
        raise DbtRuntimeError(warm_server.holds_metastore_message(holder))


@functools.lru_cache(maxsize=1)
def check_java() -> None:
    """Fail with an install hint instead of Spark's gateway error when Java is missing or old."""
    java_home = os.environ.get("JAVA_HOME")
    java = shutil.which("java") if not java_home else str(Path(java_home) / "bin" / "java")
    if not java or not Path(java).exists():
        raise DbtRuntimeError(f"No Java runtime found. {JAVA_HINT}")
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DbtRuntimeError(f"`{java} -version` failed ({exc}). {JAVA_HINT}") from exc
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if match:
        major = int(match.group(1)) if match.group(1) != "1" else int(match.group(2) or 0)
        if major < 17:
            raise DbtRuntimeError(f"Java {major} found at {java}; Spark 4 needs Java 17 or newer. {JAVA_HINT}")


_STARTING = threading.RLock()
_PREPARED: Set[int] = set()  # the SparkContexts _prepared has seen (by id)
# the warm server each Spark Connect session of this process talks to (by id: one per URL, kept)
_WARM_SESSIONS: Dict[int, "warm_server.WarmSpec"] = {}


def spark_session(params: Dict[str, str]) -> SparkSession:
    """The process-wide session; the first caller's static settings (warehouse, metastore) win.
    With `warm_spark`, a Spark Connect client of the project's warm server (warm_server.py)."""
    from dbt.adapters.window_views.spark.warm_server import WarmSpec

    warm = WarmSpec.from_params(params)
    remote = warm_url(warm) if warm is not None else remote_url(params)
    if remote:
        builder = SparkSession.builder.remote(remote)
        # static settings belong to the server; only runtime SQL settings travel (a warm server
        # started with all of them)
        params = {} if warm is not None else {k: v for k, v in params.items() if k.startswith("spark.sql.")}
    else:
        try:
            active = SparkSession.getActiveSession()
        except (Py4JError, OSError):  # the JVM this process started has exited: py4j cannot reach it
            raise DbtRuntimeError(JVM_GONE) from None
        if active is not None:
            return active
        _check_no_warm_server(params)
        check_java()
        # Delta's jars, extension and catalog when the profile's lakehouse is Delta (lakehouse.py);
        # Kafka's connector when the profile asks for it (kafka_jars.py); hadoop-aws for its s3 (s3.py)
        params = class_archive.with_archive(s3.with_s3(kafka_jars.with_kafka(lakehouse.with_lakehouse(params))))
        builder = SparkSession.builder.enableHiveSupport()
    for key, value in params.items():
        if key != "spark.remote":
            builder = builder.config(key, value)
    quiet_query_context_logs()
    # dbt's threads each get here (the active session is per thread): one at a time, or two
    # quiet_sketches_notice calls interleave and leave the JVM's System.err pointing at nothing
    with _STARTING:
        if not remote and SparkSession.getActiveSession() is None:
            # the pause until the first statement runs is the JVM's start: say so, once per process
            logger.info(f"Starting Spark ({params.get('spark.master', 'embedded, local')}) for this command")
        session = builder.getOrCreate()
        if warm is not None and id(session) not in _WARM_SESSIONS:
            # a warm server gone mid-command fails the command at once (spark_gone tells why);
            # set once per session, not on each statement's call here
            warm_up.loopback_retries(session)
            _WARM_SESSIONS[id(session)] = warm
        if not remote:
            _prepared(session)
            # getOrCreate leaves the session inactive in this thread, so each statement of a dbt
            # thread came back here (~20 py4j calls); made active on the class getActiveSession asks
            classic: Any = getattr(session.sparkContext._jvm, "org.apache.spark.sql.classic.SparkSession")
            classic.setActiveSession(session._jsparkSession)
    return session


def _prepared(session: SparkSession) -> None:
    """The embedded JVM's logs quieted, once per JVM: dbt's threads, each command's own, all
    come to spark_session."""
    if id(session.sparkContext) in _PREPARED:
        return
    session.sparkContext.setLogLevel("ERROR")
    quiet_sketches_notice(session)
    quiet_failure_logs(session)
    _PREPARED.add(id(session.sparkContext))


@dataclass(frozen=True)
class Stopped:
    """Why the session's Spark stopped under what ran, and what to do then."""

    why: str
    fix: str


_MORE_MEMORY_FIX = f"give Spark more memory ({MORE_MEMORY}) and run again, in a new dbt process"


def spark_gone(spark: Any) -> Optional[Stopped]:
    """Why the session's Spark stopped, when it did (None: it runs, or a Spark Connect server
    other than the project's warm one, whose errors the client sees). In local mode a task's
    OutOfMemoryError ends the JVM (exit code 52, Spark's own) after stopping the context, and what
    runs then fails as a cancelled job, an internal error or a refused connection: a stopped
    context waits a moment for the JVM pyspark started to tell why."""
    if is_connect(spark):
        warm = _WARM_SESSIONS.get(id(spark))
        from dbt.adapters.window_views.spark.warm_server import RUN_AGAIN, why_gone

        reason = None if warm is None else why_gone(warm)
        return None if reason is None else Stopped(f"this project's warm Spark stopped ({reason})", RUN_AGAIN)
    try:
        if not spark.sparkContext._jsc.sc().isStopped():
            return None
    except Exception:  # py4j cannot reach the JVM: it is gone
        pass
    jvm = getattr(getattr(spark.sparkContext, "_gateway", None), "proc", None)
    try:
        code = jvm.wait(timeout=JVM_EXIT_WAIT) if jvm is not None else None
    except subprocess.TimeoutExpired:
        code = None
    if code == SPARK_OOM_EXIT:
        return Stopped("its JVM ran out of memory (java.lang.OutOfMemoryError) and exited", _MORE_MEMORY_FIX)
    if code is not None:
        return Stopped(f"its JVM exited (exit code {code})", _MORE_MEMORY_FIX)
    return Stopped(
        "its context was shut down (Spark's log above says why; most often a java.lang.OutOfMemoryError)",
        _MORE_MEMORY_FIX,
    )


def refresh_inputs(adapter: Any, inputs: Iterable[Tuple[Optional[str], str]]) -> None:
    """REFRESH TABLE each input relation before a model reads it: a long-lived session (a warm
    server, several dbtRunner invocations in one process) keeps a table's file listing from its
    last read, and would miss the files a loader added since. One metadata statement per input."""
    for schema, name in inputs:
        if schema:  # an unqualified name may be a CTE; dbt's refs and sources are qualified
            try:
                adapter.execute(ddl.refresh(ddl.qualified(schema, name)))
            except DbtRuntimeError as exc:
                if "TABLE_OR_VIEW_NOT_FOUND" not in str(exc):
                    raise  # a missing input: Spark names it when the model reads it


class WindowViewsCursor(Cursor):
    """dbt-spark's session cursor, on our session (embedded defaults, Spark Connect)."""

    _spark: Optional[SparkSession] = None  # the session its statement ran in

    def execute(self, statement: str, *parameters: Any) -> None:
        """The Spark boundary: a statement dbt (or the plugin, rendered from its tree) sends."""
        if parameters:
            statement = statement % parameters
        with self._stopped_spark():
            self._spark = spark_session(self.server_side_parameters)
            try:
                self._df = self._spark.sql(statement)
            except AnalysisException as exc:
                raise DbtRuntimeError(s3.named(str(exc)) or without_plan(str(exc))) from exc

    def fetchall(self) -> Optional[List[Row]]:
        with self._stopped_spark():
            return super().fetchall()

    def fetchone(self) -> Optional[Row]:
        with self._stopped_spark():
            return super().fetchone()

    @contextmanager
    def _stopped_spark(self) -> Iterator[None]:
        """Spark stopped under a statement (the embedded JVM out of memory, a warm server killed):
        the error says so and how to go on, not a Java stack or Spark Connect's gRPC error."""
        try:
            yield
        except DbtRuntimeError:
            raise
        except Exception as exc:
            gone = None if self._spark is None else spark_gone(self._spark)
            if gone is not None:
                raise DbtRuntimeError(statement_stopped(gone)) from exc
            if isinstance(exc, PySparkException):  # a job's failure: Spark's message, as dbt names a model's error
                raise DbtRuntimeError(s3.named(str(exc)) or without_plan(str(exc))) from exc
            said = s3.named(str(exc)) if isinstance(exc, Py4JJavaError) else None
            if said is not None:  # Hadoop's S3 error, raised outside Spark's own errors
                raise DbtRuntimeError(said) from exc
            raise


def statement_stopped(gone: Stopped) -> str:
    """The error of a statement whose Spark stopped during the command."""
    return (
        f"Spark stopped during this command: {gone.why}, so the command's statement could not finish; fix: "
        f"{gone.fix} (a model it did not finish is as it was before: docs/failure-modes.md)"
    )


class WindowViewsConnection(Connection):
    def cursor(self) -> WindowViewsCursor:
        return WindowViewsCursor(server_side_parameters=self.server_side_parameters)
