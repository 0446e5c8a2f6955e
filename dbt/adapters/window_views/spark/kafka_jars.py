"""Spark's Kafka connector on the Spark the plugin starts: its jars fetched once into the user's
cache (`fetch`, run by scripts/setup.sh, through lakehouse.fetch's Ivy), and named in
`spark.jars` only when the profile says `kafka: true` (connections.py), so the embedded default
stays without them. A dbt command never resolves Maven coordinates.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import pyspark
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.spark import lakehouse

KAFKA_KEY = "window_views.kafka"  # the profile's choice in server_side_parameters; never sent to Spark
FETCH_COMMAND = "python -m dbt.adapters.window_views.spark.kafka_jars fetch"


@dataclass(frozen=True)
class KafkaConnector:
    """spark-sql-kafka-0-10 for one Spark line (Maven coordinates)."""

    version: str
    artifact: str = "spark-sql-kafka-0-10_2.13"
    excluded: Tuple[str, ...] = ()

    @property
    def coordinates(self) -> str:
        return f"org.apache.spark:{self.artifact}:{self.version}"

    @property
    def folder(self) -> str:
        return f"{self.artifact}-{self.version}"


# Maven Central serves no 4.3.x connector; 4.2.0 runs on PySpark 4.3 (docs/research/lakehouse-runtimes.md).
# Only releases whose spark-token-provider-kafka-0-10 is served too resolve (not 4.1.0, 4.1.2, 4.1.3)
CONNECTOR_BY_SPARK: Dict[str, KafkaConnector] = {
    "4.0": KafkaConnector("4.0.0"),
    "4.1": KafkaConnector("4.1.1"),
    "4.2": KafkaConnector("4.2.0"),
    "4.3": KafkaConnector("4.2.0"),
}


def connector(version: str = pyspark.__version__) -> KafkaConnector:
    """The connector for the installed PySpark, or an error naming the lines it has."""
    found = CONNECTOR_BY_SPARK.get(lakehouse.spark_line(version))
    if found is None:
        raise DbtRuntimeError(
            f"profile setting 'kafka: true' needs Spark's Kafka connector for PySpark {version}, and there is none "
            f"for Spark {lakehouse.spark_line(version)}; fix: use PySpark {', '.join(sorted(CONNECTOR_BY_SPARK))}"
        )
    return found


def _hint(runtime: KafkaConnector) -> str:
    return f"fix: run `{FETCH_COMMAND}` once with this venv's python (it downloads {runtime.coordinates} from Maven Central)"


def cached_jars(runtime: KafkaConnector) -> List[Path]:
    """The connector's jars as `fetch` left them, each checked to be there."""
    folder = lakehouse.cache_dir() / runtime.folder
    listed = lakehouse.listed_jars(folder)
    if listed is None:
        raise DbtRuntimeError(
            f"profile setting 'kafka: true' needs Spark's Kafka connector ({runtime.coordinates}), which is not in "
            f"{folder}; " + _hint(runtime)
        )
    jars, missing = listed
    if missing:
        raise DbtRuntimeError(
            f"Spark's Kafka connector in {folder} is incomplete ({', '.join(missing[:3])} missing); " + _hint(runtime)
        )
    return jars


def jars_if_cached() -> List[Path]:
    """The connector's jars when fetched, else none (the tests' shared session takes them so)."""
    try:
        return cached_jars(connector())
    except DbtRuntimeError:
        return []


def wanted(params: Mapping[str, str]) -> bool:
    return str(params.get(KAFKA_KEY, "false")).lower() == "true"


def with_kafka(params: Mapping[str, str]) -> Dict[str, str]:
    """The embedded session's settings with the connector's jars when the profile asks for
    Kafka; the profile's key removed."""
    settings = {k: v for k, v in params.items() if k != KAFKA_KEY}
    if not wanted(params):
        return settings
    for jar in cached_jars(connector()):
        settings["spark.jars"] = lakehouse.appended(settings.get("spark.jars"), str(jar))
    return settings


def main(argv: Optional[Sequence[str]] = None) -> int:
    """`fetch`: the connector's jars for this PySpark into the cache (scripts/setup.sh runs it)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args != ["fetch"]:
        print(f"usage: {FETCH_COMMAND}", file=sys.stderr)
        return 2
    try:
        folder = lakehouse.fetch(connector(), FETCH_COMMAND)
    except DbtRuntimeError as exc:
        print(exc.msg, file=sys.stderr)
        return 1
    print(f"Spark's Kafka connector for PySpark {pyspark.__version__}: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
