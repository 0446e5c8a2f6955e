"""Nexmark's queries as hand-written Spark Structured Streaming jobs: the baseline a window view's
increment is held to (bench/nexmark/bench.py). Each reads the landing folders as file streams
with the same watermark, writes parquet in append mode, and runs with `availableNow`: one run
catches up, the next takes the increment. q18 and q19 have no such job: Spark's append mode
keeps no keyed "last row" or Top-N whose rows can change."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Dict

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F


class Streams:
    """The landing folders as watermarked file streams."""

    def __init__(self, spark: SparkSession, landing: Path, delay: str) -> None:
        self._spark, self._landing, self._delay = spark, landing, delay

    def __call__(self, kind: str) -> DataFrame:
        folder = str(self._landing / kind)
        schema = self._spark.read.parquet(folder).schema
        return self._spark.readStream.schema(schema).parquet(folder).withWatermark("dateTime", self._delay)


def q5(read: Streams) -> DataFrame:
    counts = read("bid").groupBy(F.window("dateTime", "10 seconds", "2 seconds").alias("w"), "auction").count()
    top = counts.groupBy("w").agg(F.max("count").alias("maxn"))
    bids = counts.select("auction", F.col("count").alias("num"), F.col("w").alias("aw"))
    return bids.join(top, (bids.aw == top.w) & (bids.num >= top.maxn)).select("auction", "num")


def q7(read: Streams) -> DataFrame:
    bids = read("bid").alias("B")
    tops = (
        read("bid")
        .groupBy(F.window("dateTime", "10 seconds").alias("w"))
        .agg(F.max("price").alias("maxprice"))
        .select("maxprice", F.col("w.end").alias("wend"))
        .alias("B1")
    )
    on = (
        (F.col("B.price") == F.col("B1.maxprice"))
        & (F.col("B.dateTime") >= F.col("B1.wend") - F.expr("INTERVAL 10 SECONDS"))
        & (F.col("B.dateTime") <= F.col("B1.wend"))
    )
    return bids.join(tops, on).select("B.auction", "B.bidder", "B.price", "B.dateTime", "B.extra")


def q8(read: Streams) -> DataFrame:
    people = (
        read("person")
        .groupBy(F.window("dateTime", "10 seconds").alias("w"), "id", "name")
        .count()
        .select("id", "name", F.col("w").alias("pw"))
    )
    sellers = read("auction").groupBy(F.window("dateTime", "10 seconds").alias("w"), "seller").count()
    joined = people.join(sellers, (people.id == sellers.seller) & (people.pw == sellers.w))
    return joined.select("id", "name", F.col("pw.start").alias("starttime"))


def q11(read: Streams) -> DataFrame:
    sessions = read("bid").groupBy(F.session_window("dateTime", "10 seconds").alias("w"), "bidder")
    return sessions.agg(F.count("*").alias("bid_count")).select(
        "bidder", "bid_count", F.col("w.start").alias("starttime"), F.col("w.end").alias("endtime")
    )


JOBS: Dict[str, Callable[[Streams], DataFrame]] = {"q5": q5, "q7": q7, "q8": q8, "q11": q11}


def run(spark: SparkSession, query: str, landing: Path, out: Path, delay: str = "3 seconds") -> float:
    """One availableNow run of the query's job over what has landed since its last run: wall
    seconds from start to stop."""
    start = time.perf_counter()
    writer: Any = (
        JOBS[query](Streams(spark, landing, delay))
        .writeStream.outputMode("append")
        .format("parquet")
        .option("checkpointLocation", str(out / "_checkpoint"))
        .trigger(availableNow=True)
    )
    writer.start(str(out / "table")).awaitTermination()
    return time.perf_counter() - start
