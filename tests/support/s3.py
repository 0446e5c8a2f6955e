"""A real S3 API for the tests: moto's server (the [test] extra) on 127.0.0.1, with credentials
checked as AWS checks them (an IAM user's key, allowed s3:*) and a bucket made with boto3; and what
the tests read back from it: a Spark session's S3A settings for the server, and the S3 calls its
S3A file system made (copies, puts, deletes), which the bench counts."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

START_TIMEOUT = 30  # seconds: moto answers within about half a second on an idle machine, 4 s under load
REGION = "us-east-1"
# moto checks credentials after this many requests without them: the IAM user, its key and its policy
UNCHECKED_SETUP_REQUESTS = 3
ALLOW_S3 = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
# S3A's statistics (S3AFileSystem.getStorageStatistics) a streaming run's cost is counted in
COUNTED = (
    "object_copy_requests",
    "object_put_request",
    "object_delete_request",
    "object_delete_objects",
    "object_list_request",
    "object_metadata_request",
    "op_rename",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def moto_server() -> Path:
    """moto's server script beside this venv's python."""
    return Path(sys.executable).parent / "moto_server"


def installed() -> bool:
    return moto_server().is_file()


@dataclass
class Server:
    """moto's S3 API on 127.0.0.1: `start` makes the user and the bucket, `stop` ends it by its pid."""

    bucket: str = "wv-lake"
    port: int = field(default_factory=free_port)
    access_key_id: str = ""
    secret_access_key: str = ""
    process: Optional["subprocess.Popen[bytes]"] = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "Server":
        env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": str(UNCHECKED_SETUP_REQUESTS)}
        command = [str(moto_server()), "-H", "127.0.0.1", "-p", str(self.port)]
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._wait()
        iam = self.client("iam", "setup", "setup")
        iam.create_user(UserName="window-views")
        key = iam.create_access_key(UserName="window-views")["AccessKey"]
        iam.put_user_policy(UserName="window-views", PolicyName="s3", PolicyDocument=json.dumps(ALLOW_S3))
        self.access_key_id, self.secret_access_key = key["AccessKeyId"], key["SecretAccessKey"]
        self.s3().create_bucket(Bucket=self.bucket)
        return self

    def _wait(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            assert self.process is not None and self.process.poll() is None, "moto's server exited at its start"
            try:
                urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1).close()
                return
            except urllib.error.HTTPError:
                return  # it answers
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise AssertionError(f"moto's server did not answer on {self.endpoint} within {START_TIMEOUT} s")

    def client(self, service: str, key: str, secret: str) -> Any:
        import boto3

        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=key,
            aws_secret_access_key=secret,
        )

    def s3(self) -> Any:
        return self.client("s3", self.access_key_id, self.secret_access_key)

    def keys(self, prefix: str) -> List[str]:
        """The objects under `prefix` in the bucket."""
        pages = self.s3().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))

    def profile(self) -> Dict[str, Any]:
        """The profile's `s3` key for this server."""
        return {
            "endpoint": self.endpoint,
            "region": REGION,
            "path_style": True,
            "access_key_id": self.access_key_id,
            "secret_access_key": self.secret_access_key,
        }

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def hadoop_settings(server: Server, bucket: Optional[str] = None) -> Dict[str, str]:
    """S3A's settings for `bucket` (the server's by default) on `server`, per bucket
    (`fs.s3a.bucket.<name>.*`): a shared session's other buckets keep theirs."""
    from dbt.adapters.window_views.spark import s3

    settings = s3.S3Settings.from_profile(server.profile())
    assert settings is not None
    prefix = f"fs.s3a.bucket.{bucket or server.bucket}."
    both = {**settings.hadoop(), **settings.secrets()}
    return {prefix + key.removeprefix(s3.HADOOP): value for key, value in both.items()}


def configure(spark: Any, settings: Dict[str, str]) -> None:
    """Set S3A settings on a running session's Hadoop configuration, which every read, write and
    the plugin's file operations start from (a bucket's file system is made at its first use)."""
    conf = spark._jsc.hadoopConfiguration()
    for key, value in settings.items():
        conf.set(key, value)


def statistics(spark: Any, location: str) -> Dict[str, int]:
    """The S3 calls the session's S3A file system for `location`'s bucket made so far (COUNTED)."""
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(location)
    stats = path.getFileSystem(spark._jsc.hadoopConfiguration()).getStorageStatistics()
    return {name: int(stats.getLong(name) or 0) for name in COUNTED}
