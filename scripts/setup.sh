#!/usr/bin/env bash
# Everything the example and the tests need, from scratch: Java (if missing), a venv, the plugin.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v java >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Java not found: installing openjdk-17-jre-headless" >&2
    apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless >/dev/null
  else
    echo "Java 17 is required: install a JDK 17 (e.g. apt-get install openjdk-17-jre-headless) and retry" >&2
    exit 1
  fi
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e ".[test]"

# Delta Lake and Iceberg (docs/delta-iceberg.md): neither has a build for PySpark 4.3, so a second
# venv holds PySpark 4.1 with the [delta] and [iceberg] extras (its sdist builds once, a few minutes;
# pip keeps the wheel), and their jars are fetched once from Maven Central into the user's cache:
# no dbt command resolves them. WINDOW_VIEWS_DELTA=0 skips it (tests/lakehouse then does not run)
if [ "${WINDOW_VIEWS_DELTA:-1}" != 0 ]; then
  if [ ! -x .venv-delta/bin/python ]; then
    "$PYTHON" -m venv .venv-delta
  fi
  .venv-delta/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv-delta/bin/python -m pip install -q -e ".[delta,iceberg]" "pytest>=8"
  # -W: the package imports the module before runpy runs it, which runpy warns of
  .venv-delta/bin/python -W ignore::RuntimeWarning -m dbt.adapters.window_views.spark.lakehouse fetch
fi

# Kafka (docs/kafka.md): Spark's Kafka connector for the embedded session (`kafka: true`) and
# Apache Kafka's broker jars for the tests (tests/support/kafka.py), each fetched once from Maven
# Central into the user's cache. WINDOW_VIEWS_KAFKA=0 skips them (tests/functional/test_kafka.py
# then does not run)
if [ "${WINDOW_VIEWS_KAFKA:-1}" != 0 ]; then
  .venv/bin/python -W ignore::RuntimeWarning -m dbt.adapters.window_views.spark.kafka_jars fetch
  .venv/bin/python -m tests.support.kafka fetch
fi

# S3 (docs/s3.md): hadoop-aws and the AWS SDK's S3 modules (not its 686 MB bundle) for `s3` in the
# profile, fetched once from Maven Central into the user's cache. WINDOW_VIEWS_S3=0 skips them
# (tests/functional/test_s3a.py then does not run; moto, its S3 server, comes with the [test] extra)
if [ "${WINDOW_VIEWS_S3:-1}" != 0 ]; then
  .venv/bin/python -W ignore::RuntimeWarning -m dbt.adapters.window_views.spark.s3 fetch
fi
