"""The profile's `s3` (spark/s3.py, connections.py): its settings as `spark.hadoop.fs.s3a.*`, its
credentials kept out of what dbt shows, hadoop-aws's jars only when asked for, its fetch without
the SDK's bundle, and S3's failures named with their fix."""

from __future__ import annotations

import json
import socket
import subprocess
import time

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.spark import lakehouse, s3

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PROFILE = {
    "endpoint": "http://127.0.0.1:9000",
    "region": "eu-west-1",
    "path_style": True,
    "access_key_id": "AKIAEXAMPLE",
    "secret_access_key": SECRET,
}


def credentials(**fields):
    from dbt.adapters.window_views.connections import WindowViewsCredentials

    data = {"schema": "s", "database": "s", **fields}
    return WindowViewsCredentials.from_dict(WindowViewsCredentials.__pre_deserialize__(data))


def test_the_profile_s_settings_become_s3a_settings():
    settings = s3.S3Settings.from_profile(PROFILE)
    assert settings is not None
    assert settings.hadoop() == {
        "spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9000",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.endpoint.region": "eu-west-1",
        "spark.hadoop.fs.s3a.path.style.access": "true",
    }
    assert settings.secrets() == {
        "spark.hadoop.fs.s3a.access.key": "AKIAEXAMPLE",
        "spark.hadoop.fs.s3a.secret.key": SECRET,
        "spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
    }
    assert SECRET not in repr(settings)
    temporary = s3.S3Settings.from_profile({**PROFILE, "session_token": "tok"})
    assert temporary is not None and temporary.secrets()["spark.hadoop.fs.s3a.session.token"] == "tok"
    assert "TemporaryAWSCredentialsProvider" in temporary.secrets()["spark.hadoop.fs.s3a.aws.credentials.provider"]
    # s3: true, or no keys: Hadoop's own credential chain (the environment's AWS_* variables, the instance's role)
    assert s3.S3Settings.from_profile(True) == s3.S3Settings()
    assert s3.S3Settings().hadoop() == {} and s3.S3Settings().secrets() == {}
    assert s3.S3Settings.from_profile(None) is None and s3.S3Settings.from_profile(False) is None


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("yes", "profile setting 's3' = 'yes' is not valid; expected true, or a mapping of: endpoint, region"),
        ({"bucket": "b"}, "profile setting 's3' has unknown key(s) bucket; expected: endpoint"),
        ({"endpoint": "127.0.0.1:9000"}, "profile setting 's3.endpoint' = '127.0.0.1:9000' is not valid"),
        ({"path_style": "yes"}, "profile setting 's3.path_style' = 'yes' is not valid; expected true or false"),
        ({"access_key_id": "a"}, "has one of access_key_id and secret_access_key; fix: set both, or neither"),
        ({"session_token": "t"}, "'s3.session_token' needs access_key_id and secret_access_key"),
    ],
)
def test_a_wrong_s3_is_named_with_its_fix(value, says):
    with pytest.raises(DbtRuntimeError) as raised:
        credentials(s3=value)
    assert says in str(raised.value)


@pytest.mark.parametrize("fields", [{"method": "thrift", "host": "h"}, {"warm_spark": True}])
def test_s3_configures_only_the_spark_the_plugin_starts(fields):
    with pytest.raises(DbtRuntimeError) as raised:
        credentials(s3=True, **fields)
    assert "(method: session, without warm_spark)" in str(raised.value)


def test_the_secret_reaches_the_session_only():
    """server_side_parameters are what `dbt debug` shows: the endpoint is there, the keys are not;
    the connection adds them when it opens the session."""
    creds = credentials(s3=PROFILE)
    shown = dict(creds.connection_info())
    assert SECRET not in json.dumps(shown, default=str) and "AKIAEXAMPLE" not in json.dumps(shown, default=str)
    assert creds.server_side_parameters["spark.hadoop.fs.s3a.endpoint"] == "http://127.0.0.1:9000"
    assert creds.server_side_parameters[s3.S3_KEY] == "true"
    assert creds.s3_secrets()["spark.hadoop.fs.s3a.secret.key"] == SECRET
    assert s3.S3_KEY not in credentials().server_side_parameters and credentials().s3_secrets() == {}


def test_the_session_gets_hadoop_aws_only_when_asked(tmp_path, monkeypatch):
    monkeypatch.setenv(lakehouse.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(s3, "unreachable", lambda endpoint: None)  # the endpoint answers
    assert s3.with_s3({"spark.master": "local[2]"}) == {"spark.master": "local[2]"}
    runtime = s3.connector("3.5.0")
    assert runtime.coordinates.startswith("org.apache.hadoop:hadoop-aws:3.5.0,software.amazon.awssdk:s3:2.35.4,")
    with pytest.raises(DbtRuntimeError) as raised:
        s3.with_s3({s3.S3_KEY: "true"})
    assert "hadoop-aws 3.5.0" in str(raised.value) and s3.FETCH_COMMAND in str(raised.value)
    folder = tmp_path / runtime.folder
    folder.mkdir()
    (folder / "a.jar").write_bytes(b"")
    (folder / lakehouse.MANIFEST).write_text(json.dumps({"coordinates": runtime.coordinates, "jars": ["a.jar"]}))
    settings = s3.with_s3({s3.S3_KEY: "true", "spark.jars": "/x.jar", "spark.hadoop.fs.s3a.endpoint": "http://e"})
    assert settings == {"spark.jars": f"/x.jar,{folder / 'a.jar'}", "spark.hadoop.fs.s3a.endpoint": "http://e"}
    with pytest.raises(DbtRuntimeError) as raised:
        s3.connector("3.3.6")
    assert "Hadoop 3.3.6, which this plugin does not know" in str(raised.value)


def test_the_fetch_leaves_the_sdk_bundle_out(tmp_path, monkeypatch):
    """hadoop-aws's POM pulls the SDK's 686 MB bundle: the fetch excludes it; a failure names
    the fix."""
    monkeypatch.setenv(lakehouse.CACHE_ENV, str(tmp_path))
    ran = []

    def refuse(command, **kwargs):
        ran.append(command)
        return subprocess.CompletedProcess(command, 1, stdout="", stderr="[unresolved dependency: x: not found]\n")

    monkeypatch.setattr(lakehouse.subprocess, "run", refuse)
    with pytest.raises(DbtRuntimeError) as raised:
        s3.fetch(s3.connector("3.5.0"))
    (command,) = ran
    assert command[command.index("--exclude-packages") + 1] == "software.amazon.awssdk:bundle"
    assert "could not fetch org.apache.hadoop:hadoop-aws:3.5.0 from Maven Central" in str(raised.value)
    assert s3.FETCH_COMMAND in str(raised.value) and s3.main(["fetch"]) == 1


# the first line of what S3A raised against moto's server (tests/functional/test_s3a.py)
NO_BUCKET = (
    "org.apache.hadoop.fs.s3a.UnknownStoreException: `s3a://nosuch/t': listObjects() on s3a://nosuch/t: "
    "software.amazon.awssdk.services.s3.model.NoSuchBucketException: The specified bucket does not exist "
    "(Service: S3, Status Code: 404, Request ID: 3Koa) (SDK Attempt Count: 1):NoSuchBucket"
)
REFUSED = (
    "java.nio.file.AccessDeniedException: s3a://locked/t/m: getFileStatus on s3a://locked/t/m: "
    "software.amazon.awssdk.services.s3.model.S3Exception: The request signature we calculated does not match "
    "(Service: S3, Status Code: 403):SignatureDoesNotMatch"
)
NO_CREDENTIALS = (
    "org.apache.hadoop.fs.s3a.auth.NoAuthWithAWSException: No AWS Credentials provided by "
    "TemporaryAWSCredentialsProvider SimpleAWSCredentialsProvider EnvironmentVariableCredentialsProvider "
    "IAMInstanceCredentialsProvider : s3a://bucket/cp/model.json"
)
NO_ENDPOINT = (
    "java.net.ConnectException: listObjects() on s3a://deadb/t: software.amazon.awssdk.core.exception."
    "SdkClientException: Unable to execute HTTP request: Connect to 127.0.0.1:44375 [/127.0.0.1] failed: "
    "Connection refused"
)
NO_HOST = (
    "java.net.UnknownHostException: getFileStatus on s3a://b/t: software.amazon.awssdk.core.exception."
    "SdkClientException: Unable to execute HTTP request: nosuch.example: Name or service not known"
)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (NO_BUCKET, "S3 bucket 'nosuch' does not exist (at s3a://nosuch/t); fix: create it (aws s3 mb s3://nosuch)"),
        (REFUSED, "S3 refused this dbt's credentials for s3a://locked/t/m; fix: check s3.access_key_id"),
        (NO_CREDENTIALS, "no S3 credentials for s3a://bucket/cp/model.json: neither the profile nor the environment"),
        (
            NO_ENDPOINT,
            "no S3 endpoint answers at 127.0.0.1:44375 for s3a://deadb/t; fix: start the S3 service, or correct "
            "s3.endpoint",
        ),
        (NO_HOST, "no S3 endpoint answers at nosuch.example for s3a://b/t; fix: start the S3 service"),
    ],
)
def test_s3_failures_are_named_by_cause(text, says):
    named = s3.named(text)
    assert named is not None and named.startswith(says), named


def test_other_failures_are_left_to_their_own_words():
    assert s3.named("java.io.FileNotFoundException: /tmp/x: Connection refused") is None
    assert s3.named("[DIVIDE_BY_ZERO] Division by zero at s3a://b/t") is None


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_dead_endpoint_gets_s3a_s_retries_shortened():
    """An endpoint that refuses the probe: S3A gives up after one attempt (about four minutes of
    backoff otherwise), the settings' own values kept; the probe itself takes no time."""
    dead = {s3.HADOOP + "endpoint": f"http://127.0.0.1:{closed_port()}", s3.HADOOP + "retry.limit": "3"}
    began = time.monotonic()
    shortened = s3.fail_fast(dead)
    assert time.monotonic() - began < 1
    assert shortened == {
        s3.HADOOP + "attempts.maximum": "0",
        s3.HADOOP + "retry.interval": "10ms",
        s3.HADOOP + "connection.establish.timeout": "5s",
    }
    # behind a proxy the probe cannot tell: S3A's own retries stay
    assert s3.fail_fast({**dead, s3.HADOOP + "proxy.host": "proxy"}) == {}


def test_a_live_endpoint_keeps_s3a_s_retries():
    with socket.socket() as live:
        live.bind(("127.0.0.1", 0))
        live.listen()
        port = live.getsockname()[1]
        assert s3.fail_fast({s3.HADOOP + "endpoint": f"http://127.0.0.1:{port}"}) == {}


@pytest.mark.parametrize(
    ("settings", "where"),
    [
        ({"endpoint": "http://127.0.0.1:9000"}, "127.0.0.1:9000"),
        ({"endpoint": "https://s3.eu-west-1.amazonaws.com"}, "s3.eu-west-1.amazonaws.com:443"),
        ({"endpoint": "minio.local", "connection.ssl.enabled": "false"}, "minio.local:80"),
        ({"endpoint.region": "eu-west-1"}, "s3.eu-west-1.amazonaws.com:443"),
        ({}, "s3.amazonaws.com:443"),
    ],
)
def test_the_probed_endpoint_is_where_s3a_connects(settings, where):
    assert str(s3.Endpoint.from_settings({s3.HADOOP + k: v for k, v in settings.items()})) == where
