"""A micro-batch's Spark error as the user sees it (spark_errors.spark_error), and a job stopped
by a processing-time run's end told apart from a failure (no Spark)."""

from pyspark.errors import PySparkException

from dbt.adapters.window_views.streaming.spark_errors import _cancelled, spark_error


class Captured(PySparkException):
    """What pyspark raises for a JVM error: its condition and Spark's message."""

    def __init__(self, condition, message):
        super().__init__(message)
        self.condition, self.message = condition, message

    def getCondition(self):
        return self.condition

    def getMessage(self):
        return self.message

    def __str__(self):
        return self.message


def test_the_message_without_query_context_stack_or_internal_names():
    error = Captured(
        "INCONSISTENT_BEHAVIOR_CROSS_VERSION.PARSE_DATETIME_BY_NEW_PARSER",
        "[INCONSISTENT_BEHAVIOR_CROSS_VERSION.PARSE_DATETIME_BY_NEW_PARSER] You may get a different result:\n"
        "Fail to parse '2020-4-15' in `_wv_v_model`.\nSet \"spark.sql.legacy.timeParserPolicy\". SQLSTATE: 42K0B\n"
        "== SQL (line 1, position 12) ==\nselect to_date(item) from _wv_v_model\n           ^^^^\n"
        "\tat org.apache.spark.sql.errors.ExecutionErrors.failToParse(ExecutionErrors.scala:53)",
    )
    assert spark_error(error) == (
        "[INCONSISTENT_BEHAVIOR_CROSS_VERSION.PARSE_DATETIME_BY_NEW_PARSER] You may get a different result: "
        "Fail to parse '2020-4-15' in (internal). Set \"spark.sql.legacy.timeParserPolicy\". SQLSTATE: 42K0B"
    )
    assert spark_error(Captured("DIVIDE_BY_ZERO", "Division by zero.")) == "[DIVIDE_BY_ZERO] Division by zero."
    assert spark_error(Captured(None, "")) == "Captured"


def test_a_cancelled_job_is_not_a_failure():
    assert _cancelled(Captured("SPARK_JOB_CANCELLED", "Job 3 cancelled part of cancelled job group"))
    assert _cancelled(Captured(None, "java.lang.InterruptedException"))
    assert not _cancelled(Captured("USER_RAISED_EXCEPTION", "price 400 is out of range"))
