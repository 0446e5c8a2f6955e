"""S3 (`s3a://` locations) on the Spark the plugin starts: hadoop-aws and the few AWS SDK modules it
needs, fetched once into the user's cache (`fetch`, run by scripts/setup.sh), named in `spark.jars`
only when the profile has an `s3` key; the profile's S3 settings as `spark.hadoop.fs.s3a.*`; and
S3's failures named with their fix instead of Hadoop's stack (docs/s3.md). An endpoint that does
not answer as the session starts gets S3A's retries shortened (`fail_fast`), so an `s3a://`
location fails in seconds rather than after S3A's minutes of backoff.

hadoop-aws's POM pulls the AWS SDK's `bundle` (686 MB); `fetch` excludes it and resolves the SDK's
own modules instead (about 14 MB). Credentials in the profile reach Spark's configuration only
(`secrets`, added when the connection opens), never the profile's shown settings.
"""

from __future__ import annotations

import re
import socket
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple
from urllib.parse import urlparse

import pyspark
from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.spark import lakehouse

S3_KEY = "window_views.s3"  # the profile's choice in server_side_parameters; never sent to Spark
FETCH_COMMAND = "python -m dbt.adapters.window_views.spark.s3 fetch"
HADOOP = "spark.hadoop.fs.s3a."
BUNDLE = "software.amazon.awssdk:bundle"
# the SDK modules hadoop-aws calls (the client, copies through the transfer manager, assumed roles,
# the sync and async HTTP clients); the rest of the bundle is other AWS services
SDK_MODULES = ("s3", "s3-transfer-manager", "sts", "apache-client", "netty-nio-client")
# the SDK release each hadoop-aws was built with (its POM's aws-java-sdk-v2.version)
SDK_BY_HADOOP = {"3.5.0": "2.35.4"}
# S3A's retries of a dead endpoint, on its defaults (5 SDK attempts inside 7 backed-off retries of
# each call) take about four minutes to fail one call: with an endpoint that did not answer the
# probe, one attempt each and a short connect, unless the settings already give their own
FAIL_FAST = {
    "attempts.maximum": "0",
    "retry.limit": "0",
    "retry.interval": "10ms",
    "connection.establish.timeout": "5s",
}
PROBE_SECONDS = 3.0  # a connect to a live endpoint takes milliseconds; a dropped one waits this long

logger = AdapterLogger("WindowViews")
_TOLD: Set[str] = set()  # the dead endpoints this process has said it shortened retries for


@dataclass(frozen=True)
class S3Connector:
    """hadoop-aws for PySpark's Hadoop, with the SDK modules it needs instead of the bundle."""

    hadoop: str
    sdk: str

    @property
    def coordinates(self) -> str:
        modules = [f"software.amazon.awssdk:{name}:{self.sdk}" for name in SDK_MODULES]
        return ",".join([f"org.apache.hadoop:hadoop-aws:{self.hadoop}", *modules])

    @property
    def folder(self) -> str:
        return f"hadoop-aws-{self.hadoop}"

    @property
    def excluded(self) -> Tuple[str, ...]:
        return (BUNDLE,)


def hadoop_version(spark_home: Optional[Path] = None) -> str:
    """The Hadoop PySpark ships (`3.5.0` from jars/hadoop-client-api-3.5.0.jar)."""
    jars = (spark_home or Path(pyspark.__file__).parent) / "jars"
    for jar in jars.glob("hadoop-client-api-*.jar"):
        return jar.name.removeprefix("hadoop-client-api-").removesuffix(".jar")
    return "unknown"


def connector(hadoop: Optional[str] = None) -> S3Connector:
    """hadoop-aws for the installed PySpark's Hadoop, or an error naming the ones known."""
    version = hadoop or hadoop_version()
    sdk = SDK_BY_HADOOP.get(version)
    if sdk is None:
        raise DbtRuntimeError(
            f"profile setting 's3' needs hadoop-aws for PySpark {pyspark.__version__}'s Hadoop {version}, which this "
            f"plugin does not know; fix: use a PySpark with Hadoop {', '.join(SDK_BY_HADOOP)} (PySpark 4.3)"
        )
    return S3Connector(version, sdk)


def _hint(runtime: S3Connector) -> str:
    return (
        f"fix: run `{FETCH_COMMAND}` once with this venv's python (it downloads hadoop-aws {runtime.hadoop} and "
        "the AWS SDK's S3 modules from Maven Central)"
    )


def cached_jars(runtime: S3Connector) -> List[Path]:
    """The connector's jars as `fetch` left them, each checked to be there."""
    folder = lakehouse.cache_dir() / runtime.folder
    listed = lakehouse.listed_jars(folder)
    if listed is None:
        raise DbtRuntimeError(
            f"profile setting 's3' needs hadoop-aws {runtime.hadoop} and the AWS SDK, which are not in {folder}; "
            + _hint(runtime)
        )
    jars, missing = listed
    if missing:
        raise DbtRuntimeError(
            f"hadoop-aws in {folder} is incomplete ({', '.join(missing[:3])} missing); " + _hint(runtime)
        )
    return jars


def jars_if_cached() -> List[Path]:
    """The connector's jars when fetched, else none (the tests' shared session takes them so)."""
    try:
        return cached_jars(connector())
    except DbtRuntimeError:
        return []


@dataclass(frozen=True)
class S3Settings:
    """The profile's `s3` key: `s3: true` (Hadoop's defaults: AWS, credentials from the
    environment or the instance), or a mapping of these keys."""

    endpoint: Optional[str] = None
    region: Optional[str] = None
    path_style: Optional[bool] = None
    access_key_id: Optional[str] = None
    secret_access_key: Optional[str] = field(default=None, repr=False)
    session_token: Optional[str] = field(default=None, repr=False)

    @classmethod
    def from_profile(cls, value: Any) -> Optional["S3Settings"]:
        """None for no `s3` (or `s3: false`); else the settings, each key checked."""
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        if not isinstance(value, Mapping):
            raise DbtRuntimeError(
                f"profile setting 's3' = {value!r} is not valid; expected true, or a mapping of: {', '.join(KEYS)}"
            )
        unknown = sorted(set(value) - set(KEYS))
        if unknown:
            raise DbtRuntimeError(
                f"profile setting 's3' has unknown key(s) {', '.join(map(str, unknown))}; expected: {', '.join(KEYS)}"
            )
        found = cls(**{k: v for k, v in value.items() if v is not None})
        found._check()
        return found

    def _check(self) -> None:
        if self.path_style is not None and not isinstance(self.path_style, bool):
            raise DbtRuntimeError(
                f"profile setting 's3.path_style' = {self.path_style!r} is not valid; expected true or false"
            )
        if self.endpoint is not None and urlparse(str(self.endpoint)).scheme not in ("http", "https"):
            raise DbtRuntimeError(
                f"profile setting 's3.endpoint' = {self.endpoint!r} is not valid; expected a URL such as "
                "http://127.0.0.1:9000 or https://s3.eu-west-1.amazonaws.com"
            )
        if (self.access_key_id is None) != (self.secret_access_key is None):
            raise DbtRuntimeError(
                "profile setting 's3' has one of access_key_id and secret_access_key; fix: set both, or neither "
                "(then the environment's AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the instance's role, are used)"
            )
        if self.session_token is not None and self.access_key_id is None:
            raise DbtRuntimeError("profile setting 's3.session_token' needs access_key_id and secret_access_key")

    def hadoop(self) -> Dict[str, str]:
        """What the profile may show: the endpoint, region and addressing as `spark.hadoop.fs.s3a.*`."""
        out: Dict[str, str] = {}
        if self.endpoint is not None:
            out[HADOOP + "endpoint"] = str(self.endpoint)
            out[HADOOP + "connection.ssl.enabled"] = str(urlparse(str(self.endpoint)).scheme == "https").lower()
        if self.region is not None:
            out[HADOOP + "endpoint.region"] = str(self.region)
        if self.path_style is not None:
            out[HADOOP + "path.style.access"] = str(self.path_style).lower()
        return out

    def secrets(self) -> Dict[str, str]:
        """The profile's credentials as Spark settings (Spark redacts `secret`, `token` and
        `access.key` in what it logs); none: Hadoop's own chain (environment, instance role)."""
        if self.access_key_id is None or self.secret_access_key is None:
            return {}
        out = {HADOOP + "access.key": str(self.access_key_id), HADOOP + "secret.key": str(self.secret_access_key)}
        provider = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
        if self.session_token is not None:
            out[HADOOP + "session.token"] = str(self.session_token)
            provider = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
        out[HADOOP + "aws.credentials.provider"] = provider
        return out


KEYS = tuple(f.name for f in fields(S3Settings))


def wanted(params: Mapping[str, str]) -> bool:
    return str(params.get(S3_KEY, "false")).lower() == "true"


def with_s3(params: Mapping[str, str]) -> Dict[str, str]:
    """The embedded session's settings with hadoop-aws's jars when the profile has `s3`, and S3A's
    retries shortened when its endpoint does not answer (fail_fast); the profile's key removed."""
    settings = {k: v for k, v in params.items() if k != S3_KEY}
    if not wanted(params):
        return settings
    for jar in cached_jars(connector()):
        settings["spark.jars"] = lakehouse.appended(settings.get("spark.jars"), str(jar))
    return {**settings, **fail_fast(settings)}


@dataclass(frozen=True)
class Endpoint:
    """Where S3A sends its requests, as the session's settings say: the host and port it connects
    to (the region's AWS endpoint without `fs.s3a.endpoint`)."""

    host: str
    port: int

    @classmethod
    def from_settings(cls, settings: Mapping[str, str]) -> "Endpoint":
        secure = str(settings.get(HADOOP + "connection.ssl.enabled", "true")).lower() != "false"
        given = settings.get(HADOOP + "endpoint") or _aws_host(settings.get(HADOOP + "endpoint.region"))
        # S3A takes a bare host as well as a URL
        url = urlparse(given if "://" in given else f"{'https' if secure else 'http'}://{given}")
        port = url.port or (443 if url.scheme == "https" else 80)
        return cls(url.hostname or given, port)

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def _aws_host(region: Optional[str]) -> str:
    return f"s3.{region}.amazonaws.com" if region else "s3.amazonaws.com"


def unreachable(endpoint: Endpoint, seconds: float = PROBE_SECONDS) -> Optional[str]:
    """Why a TCP connection to `endpoint` cannot be opened (refused, no such host, no answer in
    `seconds`), or None when it can."""
    try:
        socket.create_connection((endpoint.host, endpoint.port), timeout=seconds).close()
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None


def fail_fast(settings: Mapping[str, str]) -> Dict[str, str]:
    """S3A's settings that make an endpoint found dead as the session starts fail its first call
    at once (FAIL_FAST), each unless `settings` has its own; none when the endpoint answers (a
    live store keeps S3A's retries for its passing errors) or a proxy stands between (the probe
    would not see what S3A sees)."""
    if HADOOP + "proxy.host" in settings:
        return {}
    endpoint = Endpoint.from_settings(settings)
    why = unreachable(endpoint)
    if why is None:
        return {}
    if str(endpoint) not in _TOLD:  # each of dbt's threads starts its session, and probes: said once
        _TOLD.add(str(endpoint))
        logger.info(
            f"S3 endpoint {endpoint} does not answer ({why}): S3A's retries are shortened for this command, so an "
            "s3a:// location fails at once (docs/s3.md)"
        )
    return {HADOOP + k: v for k, v in FAIL_FAST.items() if HADOOP + k not in settings}


# S3A's exceptions by what went wrong, each with the profile's or the model's key that fixes it
_LOCATION = re.compile(r"s3a://([^/\s'`\"]+)[^\s'`\"]*")
_NO_BUCKET = ("UnknownStoreException", "NoSuchBucket")
_REFUSED = ("InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "ExpiredToken")
_NO_CREDENTIALS = ("NoAuthWithAWSException", "No AWS Credentials provided")
_UNREACHABLE = ("Unable to execute HTTP request", "UnknownHostException", "Connection refused", "connect timed out")
# how each of named's messages begins, for callers that get one back inside an OSError
NAMED = ("S3 bucket '", "S3 refused this dbt's credentials", "no S3 credentials for", "no S3 endpoint answers")
# the address the SDK could not connect to: `Connect to 127.0.0.1:9000 [/127.0.0.1] failed`,
# `Unable to execute HTTP request: nosuch.example: Name or service not known`
_ADDRESS = re.compile(r"Connect to (?P<connect>[^\s\[]+)|Unable to execute HTTP request: (?P<host>[^\s:]+):")


def named(text: str) -> Optional[str]:
    """An S3 failure in Spark's or Hadoop's `text` as what went wrong and its fix, or None
    when `text` is no S3 failure."""
    where = _LOCATION.search(text)
    if where is None:
        return None
    location, bucket = where.group(0).rstrip(":;,."), where.group(1)
    if any(mark in text for mark in _NO_BUCKET):
        return (
            f"S3 bucket '{bucket}' does not exist (at {location}); fix: create it (aws s3 mb s3://{bucket}), or "
            "correct the bucket in the model's location_root (or s3.endpoint in the profile, if it names another store)"
        )
    if any(mark in text for mark in _NO_CREDENTIALS):
        return (
            f"no S3 credentials for {location}: neither the profile nor the environment gives any; fix: set "
            "s3.access_key_id and s3.secret_access_key in the profile, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
            "in the environment (or run where an instance role gives them)"
        )
    if any(mark in text for mark in _REFUSED):
        return (
            f"S3 refused this dbt's credentials for {location}; fix: check s3.access_key_id and s3.secret_access_key "
            "in the profile (without them: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment), and "
            f"that they may read and write bucket '{bucket}'"
        )
    if any(mark in text for mark in _UNREACHABLE):
        address = _ADDRESS.search(text)
        at = f" at {address.group('connect') or address.group('host')}" if address else ""
        return (
            f"no S3 endpoint answers{at} for {location}; fix: start the S3 service, or correct s3.endpoint in the "
            "profile (a URL this machine reaches, such as http://127.0.0.1:9000)"
        )
    return None


def fetch(runtime: S3Connector) -> Path:
    """hadoop-aws and the SDK modules through Spark's own Ivy, once, into the cache, without the
    SDK's bundle (lakehouse.fetch)."""
    return lakehouse.fetch(runtime, FETCH_COMMAND)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """`fetch`: hadoop-aws and its SDK modules for this PySpark into the cache (scripts/setup.sh runs it)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args != ["fetch"]:
        print(f"usage: {FETCH_COMMAND}", file=sys.stderr)
        return 2
    try:
        folder = fetch(connector())
    except DbtRuntimeError as exc:
        print(exc.msg, file=sys.stderr)
        return 1
    size = sum(jar.stat().st_size for jar in folder.glob("*.jar"))
    print(f"hadoop-aws and the AWS SDK's S3 modules for PySpark {pyspark.__version__}: {folder} ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
