"""Profile credentials and connections: dbt-spark's, with `method: session` on our session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Tuple

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)
from dbt.adapters.spark.session import SessionConnectionWrapper

from dbt.adapters.window_views.session import WindowViewsConnection


@dataclass
class WindowViewsCredentials(SparkCredentials):
    """dbt-spark's credentials; `method` defaults to the embedded session and `host` is optional."""

    method: SparkConnectionMethod = SparkConnectionMethod.SESSION

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
        return ("method", "host", "schema", "server_side_parameters")


class WindowViewsConnectionManager(SparkConnectionManager):
    TYPE = "window_views"

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            return connection
        creds = connection.credentials
        if creds.method != SparkConnectionMethod.SESSION:
            return super().open(connection)
        connection.handle = SessionConnectionWrapper(
            WindowViewsConnection(server_side_parameters=creds.server_side_parameters)
        )
        connection.state = ConnectionState.OPEN
        return connection
