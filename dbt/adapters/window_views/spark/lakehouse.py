"""Table formats on the Spark the plugin starts (Delta Lake, Apache Iceberg): which build of each
runs on the installed PySpark, its jars fetched once into the user's cache (`fetch`, run by
scripts/setup.sh), and the session settings that turn it on (`with_lakehouse`). A dbt command
never resolves Maven coordinates: it names the cached jars in `spark.jars`, or fails with the
command that fetches them. One `Lakehouse` record per format; the format's table part is in
storage/ (storage/delta.py, storage/iceberg.py), looked up by `file_format` in batch/swap.py.

The profile's `lakehouse` (connections.py) chooses: a format's name, `none`, or `auto` (the
default): Delta when the `[delta]` extra (the delta-spark package) is installed beside the plugin.

WINDOW_VIEWS_JAR_CACHE: where the jars live (default: the user's cache directory).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Protocol, Sequence, Tuple

import pyspark
from dbt_common.exceptions import DbtRuntimeError

# the profile's choice, put in server_side_parameters by connections.py; never sent to Spark
LAKEHOUSE_KEY = "window_views.lakehouse"
AUTO, NONE = "auto", "none"
CACHE_ENV = "WINDOW_VIEWS_JAR_CACHE"
MANIFEST = "jars.json"
FETCH_TIMEOUT = 900  # seconds: a first fetch downloads ~90 MB
FETCH_COMMAND = "python -m dbt.adapters.window_views.spark.lakehouse fetch"
EXTENSIONS = "spark.sql.extensions"
CATALOG = "spark.sql.catalog.spark_catalog"


@dataclass(frozen=True)
class MavenJar:
    """A format's Spark jar for one Spark line (Maven coordinates), cached in a folder of its own."""

    group: str
    artifact: str
    version: str
    excluded: Tuple[str, ...] = ()  # what its POM pulls in that it does not need (MavenPackage)

    @property
    def coordinates(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    @property
    def folder(self) -> str:
        return f"{self.artifact}-{self.version}"


@dataclass(frozen=True)
class Lakehouse:
    """A table format's runtime on the embedded Spark: its jar per Spark line, the extension and
    `spark_catalog` class that turn it on (with the catalog's and Hadoop's settings it needs), and
    the pip extra that pins a PySpark it runs on (`package`: the Python distribution that extra
    installs, so `auto` picks the format; None: never picked by `auto`)."""

    name: str  # the profile's `lakehouse` and the models' `file_format`
    title: str
    a_table: str  # "a Delta table": how messages name one of its tables
    jars: Mapping[str, MavenJar]
    extension: str
    catalog: str
    settings: Mapping[str, str] = field(default_factory=dict)
    package: Optional[str] = None

    @property
    def install_extra(self) -> str:
        return (
            f"install the [{self.name}] extra in a venv of its own, `pip install 'dbt-window-views[{self.name}]'` "
            f"(it pins the PySpark {self.title} runs on), as scripts/setup.sh does in .venv-delta"
        )


def _by_spark(group: str, version: str, artifacts: Mapping[str, str]) -> Dict[str, MavenJar]:
    return {line: MavenJar(group, artifact, version) for line, artifact in artifacts.items()}


# Delta 4.4 has builds for Spark 4.0, 4.1 and 4.2 and none for 4.3 (docs/research/lakehouse-runtimes.md:
# its 4.2 build fails on Spark 4.3 as soon as it reads a table)
DELTA_LAKE = Lakehouse(
    "delta",
    "Delta Lake",
    "a Delta table",
    _by_spark("io.delta", "4.4.0", {"4.0": "delta-spark_4.0_2.13", "4.1": "delta-spark_4.1_2.13"}),
    "io.delta.sql.DeltaSparkSessionExtension",
    "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    # a table's log is read back in 50 tasks by default, each a fraction of a small log: on a
    # few local cores that tripled a window view's statements (docs/delta-iceberg.md)
    {"spark.databricks.delta.snapshotPartitions": "4"},
    package="delta-spark",
)
# Iceberg 1.12 has a runtime for Spark 4.1, 1.11 the newest for 4.0; none for 4.2 or 4.3 (as Delta)
ICEBERG = Lakehouse(
    "iceberg",
    "Apache Iceberg",
    "an Iceberg table",
    {
        "4.0": MavenJar("org.apache.iceberg", "iceberg-spark-runtime-4.0_2.13", "1.11.0"),
        "4.1": MavenJar("org.apache.iceberg", "iceberg-spark-runtime-4.1_2.13", "1.12.0"),
    },
    "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    "org.apache.iceberg.spark.SparkSessionCatalog",
    {
        f"{CATALOG}.type": "hive",  # Iceberg tables beside the others, in the metastore dbt lists
        # commit by the metastore's checked alter_table (Hive 2.3.10 has it, HIVE-26882): an
        # embedded Derby metastore never grants Iceberg's table lock, and the commit would wait
        "spark.hadoop.iceberg.engine.hive.lock-enabled": "false",
        # the metastore client Iceberg opens pools with BoneCP by default, which Spark does not ship
        "spark.hadoop.datanucleus.connectionPoolingType": "HikariCP",
        # a stream commits its snapshots from a session of its own (storage/iceberg_stream.py):
        # a table this session cached would show later models of the run the snapshot before
        f"{CATALOG}.cache-enabled": "false",
    },
)
LAKEHOUSES: Dict[str, Lakehouse] = {made.name: made for made in (DELTA_LAKE, ICEBERG)}
DELTA = DELTA_LAKE.name
DELTA_EXTENSION = DELTA_LAKE.extension
CHOICES = (AUTO, NONE, *LAKEHOUSES)


def spark_line(version: str = pyspark.__version__) -> str:
    """'4.1' for PySpark 4.1.4."""
    return ".".join(version.split(".")[:2])


def runtime_jar(lakehouse: Lakehouse, version: str = pyspark.__version__) -> MavenJar:
    """The format's build for the installed PySpark, or an error naming what to install."""
    found = lakehouse.jars.get(spark_line(version))
    if found is None:
        lines = ", ".join(sorted(lakehouse.jars))
        newest = lakehouse.jars[max(lakehouse.jars)]
        raise DbtRuntimeError(
            f"lakehouse '{lakehouse.name}' needs PySpark {lines}, and this install has PySpark {version}: "
            f"{lakehouse.title} ({newest.coordinates}) has no build for Spark {spark_line(version)}; "
            f"fix: {lakehouse.install_extra}, or set lakehouse: none in the profile"
        )
    return found


def cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dbt-window-views" / "jars"


def listed_jars(folder: Path) -> Optional[Tuple[List[Path], List[str]]]:
    """The jars `fetch` listed in `folder`'s manifest, and the names of those not there; None: no
    manifest (never fetched)."""
    manifest = folder / MANIFEST
    if not manifest.is_file():
        return None
    jars = [folder / name for name in json.loads(manifest.read_text())["jars"]]
    return jars, [jar.name for jar in jars if not jar.is_file()]


def cached_jars(lakehouse: Lakehouse, jar: MavenJar) -> List[Path]:
    """The format's jars as `fetch` left them, each checked to be there."""
    folder = cache_dir() / jar.folder
    listed = listed_jars(folder)
    hint = (
        f"fix: run `{FETCH_COMMAND}` once with this venv's python (it downloads {jar.coordinates} from Maven Central)"
    )
    if listed is None:
        raise DbtRuntimeError(
            f"lakehouse '{lakehouse.name}' needs {lakehouse.title}'s jars ({jar.coordinates}), which are not in "
            f"{folder}; {hint}"
        )
    jars, missing = listed
    if missing:
        raise DbtRuntimeError(
            f"lakehouse '{lakehouse.name}': {lakehouse.title}'s jars in {folder} are incomplete "
            f"({', '.join(missing[:3])} missing); {hint}"
        )
    return jars


def extra_installed(lakehouse: Lakehouse) -> bool:
    """The format's pip extra is installed: the Python package it brings (delta-spark) is."""
    if lakehouse.package is None:
        return False
    try:
        importlib.metadata.version(lakehouse.package)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def chosen(params: Mapping[str, str]) -> Optional[Lakehouse]:
    """The profile's lakehouse; `auto`, the first format whose extra is installed; None: none."""
    value = params.get(LAKEHOUSE_KEY, AUTO)
    if value == AUTO:
        return next((made for made in LAKEHOUSES.values() if extra_installed(made)), None)
    return LAKEHOUSES.get(value)


def appended(current: Optional[str], item: str) -> str:
    items = [x for x in (current or "").split(",") if x.strip()]
    return ",".join(items if item in items else [*items, item])


def with_lakehouse(params: Mapping[str, str]) -> Dict[str, str]:
    """The embedded session's settings with the chosen format's jars, extension, catalog and
    settings (the profile's own spark_catalog and settings, if any, kept); the profile's key removed."""
    settings = {k: v for k, v in params.items() if k != LAKEHOUSE_KEY}
    lakehouse = chosen(params)
    if lakehouse is None:
        return settings
    for jar in cached_jars(lakehouse, runtime_jar(lakehouse)):
        settings["spark.jars"] = appended(settings.get("spark.jars"), str(jar))
    settings[EXTENSIONS] = appended(settings.get(EXTENSIONS), lakehouse.extension)
    settings.setdefault(CATALOG, lakehouse.catalog)
    for key, value in lakehouse.settings.items():
        settings.setdefault(key, value)
    return settings


def has_extension(settings: Mapping[str, Optional[str]], lakehouse: Lakehouse) -> bool:
    """A running session's settings turn the format on (its extension is listed)."""
    return lakehouse.extension in (settings.get(EXTENSIONS) or "")


def _artifact(name: str) -> str:
    """`jackson-core` for `jackson-core-2.13.5.jar` (and for Ivy's `com.fasterxml..._jackson-core-2.13.5.jar`)."""
    found = re.match(r"^(.+?)-\d.*\.jar$", name)
    return found.group(1) if found else name


def _bundled(name: str, spark_jars: Sequence[str]) -> bool:
    """An Ivy jar (`<group>_<artifact>-<version>.jar`) PySpark ships a version of already: Spark's
    own stays the one on the classpath (Delta builds against it), not a second, older copy."""
    return _artifact(name.split("_", 1)[-1]) in {_artifact(jar) for jar in spark_jars}


class MavenPackage(Protocol):
    """Jars by Maven coordinates, cached in a folder of their own (a format's `MavenJar`; Kafka's:
    kafka_jars.py)."""

    @property
    def coordinates(self) -> str: ...

    @property
    def folder(self) -> str: ...

    @property
    def excluded(self) -> Tuple[str, ...]:
        """Packages (`group:artifact`) its POMs pull in that are left out of the fetch."""
        ...


def fetch(runtime: MavenPackage, fetch_command: str = FETCH_COMMAND) -> Path:
    """Resolve the runtime's jars through Spark's own Ivy (spark-submit --packages, once) into
    the cache, without the jars PySpark already ships; the manifest is written last, so a
    folder without one is an unfinished fetch."""
    folder = cache_dir() / runtime.folder
    if (folder / MANIFEST).is_file():
        return folder
    spark_home = Path(pyspark.__file__).parent
    bundled = [p.name for p in (spark_home / "jars").glob("*.jar")]
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as scratch:
        noop = Path(scratch) / "noop.py"
        noop.write_text("")
        ivy = Path(scratch) / "ivy"
        env = {**os.environ, "SPARK_HOME": str(spark_home), "PYSPARK_PYTHON": sys.executable}
        command = [str(spark_home / "bin" / "spark-submit"), "--packages", runtime.coordinates]
        if runtime.excluded:
            command += ["--exclude-packages", ",".join(runtime.excluded)]
        command += ["--conf", f"spark.jars.ivy={ivy}", str(noop)]
        named = runtime.coordinates.split(",")[0]  # the package asked for, not each module with it
        try:
            proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=FETCH_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise DbtRuntimeError(f"could not fetch {named} from Maven Central: {exc}") from exc
        retrieved = sorted((ivy / "jars").glob("*.jar")) if (ivy / "jars").is_dir() else []
        if proc.returncode != 0 or not retrieved:
            unresolved = [
                line.strip() for line in proc.stderr.splitlines() if "unresolved" in line or "not found" in line
            ]
            raise DbtRuntimeError(
                f"could not fetch {named} from Maven Central (spark-submit exited {proc.returncode}: "
                f"{'; '.join(unresolved[:3]) or proc.stderr[-800:]}); fix: check that this machine reaches "
                "https://repo1.maven.org (a proxy: Spark's Ivy reads -Dhttps.proxyHost in JAVA_TOOL_OPTIONS), then run "
                f"`{fetch_command}` again"
            )
        staged = Path(scratch) / "jars"
        staged.mkdir()
        kept = [jar for jar in retrieved if not _bundled(jar.name, bundled)]
        for jar in kept:
            shutil.copy2(jar, staged / jar.name)
        shutil.rmtree(folder, ignore_errors=True)
        staged.rename(folder)
    manifest = {"coordinates": runtime.coordinates, "excluded": list(runtime.excluded), "jars": [j.name for j in kept]}
    (folder / MANIFEST).write_text(json.dumps(manifest))
    return folder


def main(argv: Optional[Sequence[str]] = None) -> int:
    """`fetch`: the jars of every format with a build for this PySpark into the cache (setup.sh
    runs it in .venv-delta)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args != ["fetch"]:
        print(f"usage: {FETCH_COMMAND}", file=sys.stderr)
        return 2
    runnable = [made for made in LAKEHOUSES.values() if spark_line() in made.jars]
    try:
        if not runnable:
            runtime_jar(DELTA_LAKE)  # raises: no format runs on this PySpark, names the extra to install
        for made in runnable:
            print(f"{made.title}'s jars for PySpark {pyspark.__version__}: {fetch(runtime_jar(made))}")
    except DbtRuntimeError as exc:
        print(exc.msg, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
