"""Helpers the tests import (`from tests.support.<module> import ...`); the fixtures built on
them are in tests/conftest.py.

- dbt_projects: the repository, throwaway dbt projects on the shared session, sources.yml, errors
- data: input tables the tests share (FLIP-145's Bid table)
- processes: separate processes (a dbt process, a short-lived JVM) and what they leave behind
- oracles: the window semantics replayed in Python
- nexmark: Nexmark's queries on DuckDB without TVFs, and bench/nexmark/project on the shared session
- cluster: a Spark standalone cluster on loopback (the `standalone_cluster` fixture)
- kafka: an Apache Kafka broker (KRaft) on loopback from its Maven jars, its topics and messages
- faults, objectstore: crash points of the commit protocol and an object store's semantics,
  installed in a process
"""
