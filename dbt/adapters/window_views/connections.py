"""Profile credentials and connections: dbt-spark's, with `method: session` on our session."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Tuple, Union

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)
from dbt.adapters.spark.session import SessionConnectionWrapper
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.errors import IntervalError
from dbt.adapters.window_views.query.intervals import Interval
from dbt.adapters.window_views.spark import kafka_jars, lakehouse, s3
from dbt.adapters.window_views.spark.session import WindowViewsConnection

DEFAULT_IDLE_TIMEOUT = "30 minutes"


def _check_connect_client() -> None:
    """warm_spark's commands are Spark Connect clients: without the client's packages every command
    would fail after the server started, so the profile says so first."""
    from pyspark.errors import PySparkException
    from pyspark.sql.connect.utils import check_dependencies

    try:
        check_dependencies()
    except (ImportError, PySparkException) as missing:
        raise DbtRuntimeError(
            f"profile setting 'warm_spark' needs Spark Connect's client, which this install lacks ({missing}); "
            "fix: pip install 'dbt-window-views[connect]' (pandas, pyarrow, grpcio), or remove warm_spark"
        ) from None


def project_root(config: Any) -> Path:
    """The project's folder. `dbt debug` builds the adapter from the profile alone, with no
    project: then the folder it runs in, dbt's own default project dir."""
    return Path(getattr(config, "project_root", None) or os.getcwd())


def project_target(config: Any) -> Path:
    """The project's target folder (under the folder `dbt debug` runs in, for it)."""
    return project_root(config) / (getattr(config, "target_path", None) or "target")


class WindowViewsConnectionWrapper(SessionConnectionWrapper):
    """dbt-spark's session wrapper, with its bindings as SQL literals that hold what they bind:
    dbt-spark writes None as the text 'None' and a quote unescaped, so a seed's empty cell was
    loaded as 'None' and a cell with a quote failed its INSERT."""

    @classmethod
    def _fix_binding(cls, value: Any) -> Union[str, float]:
        if value is None:
            return "NULL"
        if isinstance(value, str):
            return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return super()._fix_binding(value)


@dataclass
class WindowViewsCredentials(SparkCredentials):
    """dbt-spark's credentials; `method` defaults to the embedded session and `host` is optional.
    `warm_spark: true` runs the session's Spark as a local Spark Connect server kept between dbt
    commands (warm_server.py) until `warm_spark_idle_timeout` passes without one."""

    method: SparkConnectionMethod = SparkConnectionMethod.SESSION
    warm_spark: Any = False  # typed here, checked in __post_init__ with a message naming the fix
    warm_spark_idle_timeout: Any = DEFAULT_IDLE_TIMEOUT
    # Delta Lake in the embedded session: auto (when the [delta] extra is installed), delta, none
    lakehouse: Any = lakehouse.AUTO
    # Spark's Kafka connector in the embedded session, for Kafka sources (docs/kafka.md)
    kafka: Any = False
    # hadoop-aws and the S3 settings in the embedded session, for s3a:// locations (docs/s3.md)
    s3: Any = None

    def __post_init__(self) -> None:
        self._check_lakehouse()
        self._check_kafka()
        self._check_s3()
        if not isinstance(self.warm_spark, bool):
            raise DbtRuntimeError(
                f"profile setting 'warm_spark' = {self.warm_spark!r} is not valid; expected true or false"
            )
        try:
            Interval.parse(self.warm_spark_idle_timeout)
        except IntervalError as exc:
            raise DbtRuntimeError(
                f"profile setting 'warm_spark_idle_timeout' = {self.warm_spark_idle_timeout!r} is not valid: {exc}; "
                f"fix: an interval such as '{DEFAULT_IDLE_TIMEOUT}' (the default) or '90 seconds'"
            ) from None
        if self.warm_spark and self.method != SparkConnectionMethod.SESSION:
            raise DbtRuntimeError(
                f"profile setting 'warm_spark' needs method: session (a local Spark), not method: {self.method}; "
                "fix: set method: session, or remove warm_spark"
            )
        if self.warm_spark and "spark.remote" in self.server_side_parameters:
            raise DbtRuntimeError(
                "profile setting 'warm_spark' starts a local Spark Connect server, and spark.remote already names "
                "one; fix: remove warm_spark (the remote server stays up by itself), or remove spark.remote"
            )
        if self.warm_spark:
            _check_connect_client()
        super().__post_init__()

    def _check_lakehouse(self) -> None:
        """The profile's lakehouse, handed to the session (lakehouse.py) in server_side_parameters."""
        if self.lakehouse not in lakehouse.CHOICES:
            raise DbtRuntimeError(
                f"profile setting 'lakehouse' = {self.lakehouse!r} is not valid; expected one of: "
                f"{', '.join(lakehouse.CHOICES)} (auto: Delta when the [delta] extra is installed)"
            )
        if self.lakehouse in lakehouse.LAKEHOUSES and self.method != SparkConnectionMethod.SESSION:
            raise DbtRuntimeError(
                f"profile setting 'lakehouse' = '{self.lakehouse}' configures the Spark the plugin starts (method: "
                f"session), not method: {self.method}, whose server has its own jars; fix: remove lakehouse, and give "
                "that server the format's jars and settings (docs/delta-iceberg.md)"
            )
        found = lakehouse.chosen({lakehouse.LAKEHOUSE_KEY: self.lakehouse})
        if self.warm_spark is True and found is not None:
            why = "" if self.lakehouse == found.name else f" (auto: the [{found.name}] extra is installed)"
            raise DbtRuntimeError(
                f"profile setting 'lakehouse' = '{self.lakehouse}'{why} needs Spark in the dbt process: the warm Spark "
                f"server does not start with {found.title}'s jars yet; fix: remove warm_spark, or set lakehouse: none"
            )
        if self.lakehouse != lakehouse.AUTO and self.method == SparkConnectionMethod.SESSION:
            self.server_side_parameters = {**self.server_side_parameters, lakehouse.LAKEHOUSE_KEY: self.lakehouse}

    def _check_kafka(self) -> None:
        """The profile's kafka, handed to the session (kafka_jars.py) in server_side_parameters."""
        if not isinstance(self.kafka, bool):
            raise DbtRuntimeError(f"profile setting 'kafka' = {self.kafka!r} is not valid; expected true or false")
        if self.kafka and (self.method != SparkConnectionMethod.SESSION or self.warm_spark is True):
            raise DbtRuntimeError(
                "profile setting 'kafka: true' adds Spark's Kafka connector to the Spark the plugin starts in the dbt "
                "process (method: session, without warm_spark); fix: remove it, and give the server you connect to "
                "the connector's jars (docs/kafka.md)"
            )
        if self.kafka:
            self.server_side_parameters = {**self.server_side_parameters, kafka_jars.KAFKA_KEY: "true"}

    def _check_s3(self) -> None:
        """The profile's s3: hadoop-aws's jars (s3.py) and the endpoint's settings in
        server_side_parameters; the credentials only where the session starts (s3_secrets)."""
        settings = s3.S3Settings.from_profile(self.s3)
        if settings is None:
            return
        if self.method != SparkConnectionMethod.SESSION or self.warm_spark is True:
            raise DbtRuntimeError(
                "profile setting 's3' adds hadoop-aws and the S3 settings to the Spark the plugin starts in the dbt "
                "process (method: session, without warm_spark); fix: remove it, and give the server you connect to "
                "hadoop-aws's jars and its fs.s3a settings (docs/s3.md)"
            )
        self.server_side_parameters = {**self.server_side_parameters, **settings.hadoop(), s3.S3_KEY: "true"}

    def s3_secrets(self) -> Dict[str, str]:
        """The profile's S3 credentials as Spark settings, kept out of server_side_parameters,
        which `dbt debug` shows."""
        settings = s3.S3Settings.from_profile(self.s3)
        return {} if settings is None else settings.secrets()

    @property
    def idle_timeout_seconds(self) -> float:
        return Interval.parse(self.warm_spark_idle_timeout).micros / 1_000_000

    @classmethod
    def __pre_deserialize__(cls, data: Any) -> Any:
        data = super().__pre_deserialize__(data)
        data.setdefault("method", "session")
        if data["method"] == "session":
            data.setdefault("host", "local")
        return data

    @property
    def type(self) -> str:
        return "window_views"

    def _connection_keys(self) -> Tuple[str, ...]:
        return (
            "method",
            "host",
            "schema",
            "server_side_parameters",
            "warm_spark",
            "warm_spark_idle_timeout",
            "lakehouse",
            "kafka",
        )


class WindowViewsConnectionManager(SparkConnectionManager):
    TYPE = "window_views"

    def __init__(self, profile: Any, mp_context: Any) -> None:
        super().__init__(profile, mp_context)
        creds = profile.credentials
        if getattr(creds, "warm_spark", False):
            # imported here: `python -m ...warm_server` runs it before anything imported it
            from dbt.adapters.window_views.spark import warm_server

            # where the project's warm server is recorded: session.spark_session reads these keys
            # (warm_server.WarmSpec) and never sends them to Spark
            target = project_target(profile).resolve()
            creds.server_side_parameters = {
                **creds.server_side_parameters,
                warm_server.DIR_KEY: str(target / "warm_spark"),
                warm_server.PROJECT_KEY: str(project_root(profile).resolve()),
                warm_server.IDLE_KEY: str(creds.idle_timeout_seconds),
            }

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            return connection
        creds = connection.credentials
        if creds.method != SparkConnectionMethod.SESSION:
            return super().open(connection)
        connection.handle = WindowViewsConnectionWrapper(
            WindowViewsConnection(server_side_parameters={**creds.server_side_parameters, **creds.s3_secrets()})
        )
        connection.state = ConnectionState.OPEN
        return connection
