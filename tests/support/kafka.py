"""A real Kafka broker for the tests: Apache Kafka 4.3.1 in KRaft mode (one process, broker and
controller) from its Maven jars, fetched once into the user's cache through Spark's Ivy
(`python -m tests.support.kafka fetch`, run by scripts/setup.sh), started on 127.0.0.1 with free
ports and stopped by its pid."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Tuple

KAFKA = "org.apache.kafka:kafka_2.13:4.3.1"
HEAP = "-Xmx384m"
START_TIMEOUT = 60  # seconds: under load the broker takes up to half a minute to listen
MANIFEST = "jars.json"


def jar_dir() -> Path:
    from dbt.adapters.window_views.spark import lakehouse

    return lakehouse.cache_dir().parent / "kafka-4.3.1"


def cached() -> bool:
    return (jar_dir() / MANIFEST).is_file()


def fetch() -> Path:
    """Kafka's runtime jars (Ivy leaves Scala's library out: PySpark's, the same 2.13.18, is
    copied in); the manifest written last, so a folder without one is an unfinished fetch."""
    import pyspark

    folder = jar_dir()
    if cached():
        return folder
    spark_home = Path(pyspark.__file__).parent
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as scratch:
        noop, ivy = Path(scratch) / "noop.py", Path(scratch) / "ivy"
        noop.write_text("")
        command = [str(spark_home / "bin" / "spark-submit"), "--packages", KAFKA, "--conf", f"spark.jars.ivy={ivy}"]
        env = {**os.environ, "SPARK_HOME": str(spark_home), "PYSPARK_PYTHON": sys.executable}
        proc = subprocess.run([*command, str(noop)], env=env, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0 or not (ivy / "jars").is_dir():
            raise RuntimeError(f"could not fetch {KAFKA} from Maven Central: {proc.stderr[-1500:]}")
        staged = Path(scratch) / "jars"
        shutil.copytree(ivy / "jars", staged)
        for scala in (spark_home / "jars").glob("scala-library-*.jar"):
            shutil.copy2(scala, staged / scala.name)
        shutil.rmtree(folder, ignore_errors=True)
        staged.rename(folder)
    (folder / MANIFEST).write_text(
        json.dumps({"coordinates": KAFKA, "jars": sorted(p.name for p in folder.glob("*.jar"))})
    )
    return folder


def free_ports(count: int) -> List[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


PROPERTIES = """process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:{controller}
listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}
advertised.listeners=PLAINTEXT://127.0.0.1:{port}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs={data}
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
"""


class Broker:
    """One broker process on 127.0.0.1, its files under `home`."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.port, self.controller = free_ports(2)
        self.proc: Optional[subprocess.Popen] = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _java(self, *args: str) -> List[str]:
        return ["java", HEAP, "-XX:TieredStopAtLevel=1", "-cp", f"{jar_dir()}/*", *args]

    def start(self) -> "Broker":
        properties = self.home / "server.properties"
        data = self.home / "data"
        properties.write_text(PROPERTIES.format(port=self.port, controller=self.controller, data=data))
        subprocess.run(
            self._java("kafka.tools.StorageTool", "format", "-t", uuid.uuid4().hex[:22], "-c", str(properties)),
            check=True,
            capture_output=True,
            timeout=120,
        )
        log = open(self.home / "broker.log", "wb")
        self.proc = subprocess.Popen(self._java("kafka.Kafka", str(properties)), stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + START_TIMEOUT
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the Kafka broker exited {self.proc.returncode}: see {self.home / 'broker.log'}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                self.admin().list_topics(timeout=5)
                return self
            except Exception:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"the Kafka broker did not answer on {self.bootstrap} in {START_TIMEOUT} s")

    def stop(self) -> None:
        """Stop the broker by its pid (SIGTERM, then SIGKILL)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def admin(self):
        from confluent_kafka.admin import AdminClient

        return AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 0})

    def create_topic(self, name: str, partitions: int = 1) -> None:
        from confluent_kafka.admin import NewTopic

        admin = self.admin()  # its futures fail once it is collected
        for future in admin.create_topics([NewTopic(name, partitions, 1)]).values():
            future.result(timeout=30)

    def produce(self, topic: str, messages: Iterable[Tuple[Optional[str], str]]) -> None:
        """Send (key, value) messages and wait until the broker has them all."""
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 0, "log_level": 0})
        for key, value in messages:
            producer.produce(topic, key=key, value=value)
        assert producer.flush(30) == 0, "messages left unsent"


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args != ["fetch"]:
        print("usage: python -m tests.support.kafka fetch", file=sys.stderr)
        return 2
    print(f"Kafka's broker jars: {fetch()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
