"""Where the embedded session keeps its files: under the project's target/ (the tests' session
under its own home), none in the current directory or /tmp."""

from pathlib import Path


def test_hives_resources_folder_is_made_under_the_sessions_home(spark, spark_home):
    # Hive's session makes it when the metastore client starts, and removes it only on a close a
    # dbt command never reaches: in /tmp, one more empty /tmp/<uuid>_resources each Spark start
    spark.sql("show databases").collect()
    made = spark.sparkContext._jsc.hadoopConfiguration().get("hive.downloaded.resources.dir")
    assert Path(made) == spark_home.resolve() / "hive_resources"
    assert Path(made).is_dir()
