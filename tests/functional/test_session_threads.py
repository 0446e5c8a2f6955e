"""dbt runs a command's models in threads, and each thread asks for the session: the process's
one Spark must come out of that as it went in."""

import threading

from pyspark.sql import SparkSession

from dbt.adapters.window_views.spark.session import embedded_settings, spark_session
from tests.support.dbt_projects import spark_params


def test_sessions_asked_for_by_several_threads_at_once_keep_the_jvms_stderr(spark, spark_home):
    # each thread quiets a notice by pointing the JVM's System.err at nothing and back: two at
    # once left it at nothing, and with it what the JVM prints there (an OutOfMemoryError's trace)
    params = embedded_settings(spark_home, spark_params(spark_home))
    system = spark.sparkContext._jvm.java.lang.System
    stderr = system.err.hashCode()
    sessions = []
    for _ in range(3):
        threads = [threading.Thread(target=lambda: sessions.append(spark_session(params))) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(sessions) == 18 and all(s is spark for s in sessions)
    assert system.err.hashCode() == stderr, "the JVM's System.err was left pointing elsewhere"


def test_a_threads_later_statements_take_its_session_as_it_is(spark, spark_home, monkeypatch):
    # the builder applies the profile's settings once per thread; each statement of a dbt thread
    # went through it again (~20 py4j calls), as Spark left the session inactive in the thread
    params = embedded_settings(spark_home, spark_params(spark_home))
    built = []
    builder = type(SparkSession.builder)
    monkeypatch.setattr(builder, "getOrCreate", lambda self, real=builder.getOrCreate: built.append(1) or real(self))
    sessions = []
    thread = threading.Thread(target=lambda: sessions.extend(spark_session(params) for _ in range(5)))
    thread.start()
    thread.join()
    assert len(sessions) == 5 and all(s is spark for s in sessions)
    assert len(built) == 1, built
