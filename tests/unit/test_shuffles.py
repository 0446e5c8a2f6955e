"""shuffles.plan_for: a small micro-batch gets few partitions and no adaptive re-planning (one
of very few rows: no code generation either), a large one the stream's session's own settings
back (unset ones unset)."""

from dbt.adapters.window_views.streaming import shuffles

INTERPRETED = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}


class Conf:
    def __init__(self, values):
        self.values = dict(values)

    def get(self, key, default=None):
        return self.values.get(key, default)

    def set(self, key, value):
        self.values[key] = value

    def unset(self, key):
        self.values.pop(key, None)


class Session:
    def __init__(self, values):
        self.conf = Conf(values)


def test_small_batches_are_planned_once_over_partitions_sized_to_their_rows():
    spark = Session({"spark.sql.shuffle.partitions": "200"})
    own = shuffles.session_settings(spark)
    assert own == {
        "spark.sql.adaptive.enabled": None,
        "spark.sql.shuffle.partitions": "200",
        "spark.sql.codegen.wholeStage": None,
        "spark.sql.codegen.factoryMode": None,
    }
    assert shuffles.plan_for(spark, 10, own)
    assert spark.conf.values == {
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.shuffle.partitions": "1",
        **INTERPRETED,
    }
    shuffles.plan_for(spark, 600_000, own)
    assert spark.conf.values == {"spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": "3"}
    assert not shuffles.plan_for(spark, 5_000_000, own)  # an initial load: the session's own settings
    assert spark.conf.values == {"spark.sql.shuffle.partitions": "200"}


def test_a_session_with_few_partitions_keeps_at_most_those():
    spark = Session({"spark.sql.shuffle.partitions": "2", "spark.sql.adaptive.enabled": "true"})
    own = shuffles.session_settings(spark)
    shuffles.plan_for(spark, 900_000, own)
    assert spark.conf.values == {"spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": "2"}
    shuffles.plan_for(spark, 2_000_000, own)
    assert spark.conf.values == {k: v for k, v in own.items() if v is not None}


def test_a_batch_of_few_rows_is_interpreted_and_a_larger_one_gets_the_session_s_code_generation():
    """Each batch's plans hold its own literals: compiled, they are new classes every batch."""
    spark = Session({"spark.sql.codegen.wholeStage": "true"})
    own = shuffles.session_settings(spark)
    shuffles.plan_for(spark, shuffles.INTERPRETED_ROWS, own)
    assert {k: spark.conf.values.get(k) for k in INTERPRETED} == INTERPRETED
    shuffles.plan_for(spark, shuffles.INTERPRETED_ROWS + 1, own)
    assert {k: spark.conf.values.get(k) for k in INTERPRETED} == {
        "spark.sql.codegen.wholeStage": "true",
        "spark.sql.codegen.factoryMode": None,
    }
