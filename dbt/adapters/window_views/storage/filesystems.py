"""The one interface through which the streaming runner touches files, and its implementations,
chosen by the location's scheme and by where the code runs.

| where the code runs | local paths / `file:` | other URIs (`hdfs://`, `s3a://`, `abfss://`, `gs://`) |
|---|---|---|
| classic session (dbt is the driver; foreachBatch runs in it) | `LocalFileSystem` | `HadoopFileSystem`: Hadoop's FileSystem through the session's JVM, with the cluster's jars and credentials |
| Spark Connect server's Python worker (foreachBatch) | `LocalFileSystem` (the server's disk) | `ArrowFileSystem`: pyarrow.fs (no JVM there) |
| Spark Connect client (the dbt process) | `TaskFileSystem`: every operation runs in a one-row Spark task on the cluster, which uses the row above | same |

What the commit protocol may assume of every implementation (and the object-store test
filesystem in tests/support/objectstore.py holds it to exactly this):
- `write_bytes` and `create_new` make a file appear whole or not at all (a single PUT on an
  object store; a temporary file renamed on local disk and HDFS);
- `create_new` creates only when the name is free; atomic where the store has a conditional
  create (local disk: a hard link; HDFS: rename without overwrite; ABFS and GCS through Hadoop:
  create without overwrite), check-then-put elsewhere (S3 through pyarrow, S3A before Hadoop's
  conditional writes) — the run lock verifies what it wrote for that reason;
- `move` is NOT atomic on object stores (copy, then delete: the source and the target are both
  visible for a while, and a crash can leave both), but its target appears whole;
- a directory is not an object: listing a missing directory gives nothing, deleting one deletes
  what is under it, one file at a time on an object store.
"""

from __future__ import annotations

import errno
import os
import pickle
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.errors import StorageError
from dbt.adapters.window_views.spark import s3
from dbt.adapters.window_views.spark.connect import is_connect
from dbt.adapters.window_views.storage import paths


@dataclass(frozen=True)
class Entry:
    """A directory's child: its name, whether it is a directory, its modification time (s) and
    size (bytes; 0 for a directory)."""

    name: str
    is_dir: bool
    mtime: float
    size: int = 0


class FileSystem:
    """Files by location (an absolute local path or a URI); see the module docstring."""

    def read_bytes(self, location: str) -> bytes:
        """The file's bytes; FileNotFoundError when there is none."""
        raise NotImplementedError

    def write_bytes(self, location: str, data: bytes) -> None:
        """Create or replace the file, all or nothing."""
        raise NotImplementedError

    def create_new(self, location: str, data: bytes) -> bool:
        """Create the file, all or nothing, only if there is none; False when there is one."""
        raise NotImplementedError

    def exists(self, location: str) -> bool:
        raise NotImplementedError

    def is_dir(self, location: str) -> bool:
        raise NotImplementedError

    def list(self, location: str) -> List[Entry]:
        """The direct children, sorted by name; [] when there is no such directory."""
        raise NotImplementedError

    def delete(self, location: str) -> None:
        """The file, or the directory and everything under it; nothing when there is none."""
        raise NotImplementedError

    def mkdirs(self, location: str) -> None:
        raise NotImplementedError

    def move(self, source: str, target: str) -> None:
        """Move a file (replacing the target); the target appears whole, the move may be seen
        half done (copy, then delete) on an object store."""
        raise NotImplementedError

    def run(self, function: Callable[..., Any], *args: Any) -> Any:
        """`function(self, *args)`, where the files are: a Spark Connect client ships it to the
        cluster (one task instead of one per file operation)."""
        return function(self, *args)


class LocalFileSystem(FileSystem):
    """A local or mounted directory, with os and shutil."""

    def read_bytes(self, location: str) -> bytes:
        return Path(location).read_bytes()

    def _aside(self, location: str, data: bytes) -> Path:
        path = Path(location)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        tmp.write_bytes(data)
        return tmp

    def write_bytes(self, location: str, data: bytes) -> None:
        tmp = self._aside(location, data)
        os.replace(tmp, location)

    def create_new(self, location: str, data: bytes) -> bool:
        tmp = self._aside(location, data)
        try:
            os.link(tmp, location)  # fails when the name exists: an atomic conditional create
        except FileExistsError:
            return False
        finally:
            tmp.unlink()
        return True

    def exists(self, location: str) -> bool:
        return os.path.exists(location)

    def is_dir(self, location: str) -> bool:
        return os.path.isdir(location)

    def list(self, location: str) -> List[Entry]:
        try:
            with os.scandir(location) as entries:
                found = [
                    Entry(e.name, e.is_dir(), e.stat().st_mtime, 0 if e.is_dir() else e.stat().st_size) for e in entries
                ]
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(found, key=lambda e: e.name)

    def delete(self, location: str) -> None:
        if os.path.isdir(location) and not os.path.islink(location):
            shutil.rmtree(location)
        else:
            try:
                os.unlink(location)
            except FileNotFoundError:
                pass

    def mkdirs(self, location: str) -> None:
        os.makedirs(location, exist_ok=True)

    def move(self, source: str, target: str) -> None:
        os.replace(source, target)


def _java_class(exc: BaseException) -> str:
    java = getattr(exc, "java_exception", None)
    return java.getClass().getName() if java is not None else ""


def _os_error(exc: BaseException, location: str) -> OSError:
    """A Java IOException as the OSError Python code expects, with Java's first line."""
    name = _java_class(exc)
    java = getattr(exc, "java_exception", None)
    text = (java.getMessage() if java is not None else None) or str(exc).strip().splitlines()[0]
    said = s3.named(f"{paths.spark_uri(location)}: {name}: {text}")
    if said is not None:  # a missing bucket, refused credentials, no endpoint: named with the fix
        return OSError(errno.EIO, said, location)
    if name.endswith("FileNotFoundException"):
        return FileNotFoundError(errno.ENOENT, text, location)
    if name.endswith(("AccessControlException", "AccessDeniedException")):
        return PermissionError(errno.EACCES, text, location)
    return OSError(errno.EIO, f"{name.rsplit('.', 1)[-1] or 'error'}: {text}", location)


class HadoopFileSystem(FileSystem):
    """Hadoop's FileSystem through a classic session's JVM: every scheme the cluster has jars
    and credentials for (`hdfs`, `s3a` with hadoop-aws, `abfss` with hadoop-azure, `gs` with the
    gcs-connector), configured as Spark's own reads and writes are (`spark.hadoop.*`)."""

    def __init__(self, spark: Any) -> None:
        jvm = spark._jvm
        self._conf = spark._jsc.hadoopConfiguration()
        self._gateway = spark.sparkContext._gateway
        # each class looked up once, by its full name (a jvm.org.apache... chain is a lookup a step)
        self._path = getattr(jvm, "org.apache.hadoop.fs.Path")
        self._bytes_of = getattr(jvm, "org.apache.commons.io.IOUtils").toByteArray
        self._rename_options = getattr(jvm, "org.apache.hadoop.fs.Options").Rename
        self._context = getattr(jvm, "org.apache.hadoop.fs.FileContext").getFileContext

    def _fs(self, location: str) -> Tuple[Any, Any]:
        path = self._path(paths.spark_uri(location))
        try:
            return path.getFileSystem(self._conf), path
        except Exception as exc:  # no jars for the scheme: UnsupportedFileSystemException, ClassNotFound
            raise OSError(
                errno.EPROTONOSUPPORT,
                f"no Hadoop filesystem for scheme '{paths.scheme(location)}' in this Spark session "
                f"({_os_error(exc, location).strerror})",
                location,
            ) from None

    def _renames_atomically(self, location: str) -> bool:
        return paths.scheme(location) not in paths.OBJECT_STORES

    def read_bytes(self, location: str) -> bytes:
        fs, path = self._fs(location)
        try:
            stream = fs.open(path)
            try:
                return bytes(self._bytes_of(stream))
            finally:
                stream.close()
        except Exception as exc:  # py4j's Java errors
            raise _os_error(exc, location) from None

    def _write(self, fs: Any, path: Any, data: bytes, overwrite: bool) -> None:
        out = fs.create(path, overwrite)
        try:
            out.write(bytearray(data))
        finally:
            out.close()

    def _rename(self, tmp: Any, path: Any, overwrite: bool) -> None:
        """FileContext's rename: atomic on HDFS, and with or without replacing the target."""
        options = self._rename_options
        flags = self._gateway.new_array(options, 1)
        flags[0] = options.OVERWRITE if overwrite else options.NONE
        context = self._context(path.toUri(), self._conf)
        context.rename(tmp, path, flags)

    def _put(self, location: str, data: bytes, overwrite: bool) -> bool:
        fs, path = self._fs(location)
        try:
            if not self._renames_atomically(location):
                self._write(fs, path, data, overwrite)  # an object store shows the file at close
                return True
            tmp = self._path(path.getParent(), f".{path.getName()}.{uuid.uuid4().hex}.tmp")
            self._write(fs, tmp, data, True)
            try:
                self._rename(tmp, path, overwrite)
            finally:
                fs.delete(tmp, False)
            return True
        except Exception as exc:
            if _java_class(exc).endswith("FileAlreadyExistsException"):
                return False
            raise _os_error(exc, location) from None

    def write_bytes(self, location: str, data: bytes) -> None:
        self._put(location, data, overwrite=True)

    def create_new(self, location: str, data: bytes) -> bool:
        return self._put(location, data, overwrite=False)

    def exists(self, location: str) -> bool:
        fs, path = self._fs(location)
        return bool(fs.exists(path))

    def is_dir(self, location: str) -> bool:
        fs, path = self._fs(location)
        try:
            return bool(fs.getFileStatus(path).isDirectory())
        except Exception as exc:
            if _java_class(exc).endswith("FileNotFoundException"):
                return False
            raise _os_error(exc, location) from None

    def list(self, location: str) -> List[Entry]:
        fs, path = self._fs(location)
        try:
            statuses = fs.listStatus(path)
        except Exception as exc:
            if _java_class(exc).endswith("FileNotFoundException"):
                return []
            raise _os_error(exc, location) from None
        found = [
            Entry(s.getPath().getName(), bool(s.isDirectory()), s.getModificationTime() / 1000, int(s.getLen()))
            for s in statuses
        ]
        return sorted(found, key=lambda e: e.name)

    def delete(self, location: str) -> None:
        fs, path = self._fs(location)
        try:
            fs.delete(path, True)
        except Exception as exc:
            raise _os_error(exc, location) from None

    def mkdirs(self, location: str) -> None:
        fs, path = self._fs(location)
        try:
            fs.mkdirs(path)
        except Exception as exc:
            raise _os_error(exc, location) from None

    def move(self, source: str, target: str) -> None:
        fs, path = self._fs(source)
        try:
            self._rename(path, self._fs(target)[1], overwrite=True)
        except Exception as exc:
            raise _os_error(exc, source) from None


# pyarrow names S3 `s3`; Hadoop's `s3a` / `s3n` spell the same buckets
_ARROW_SCHEMES = {"s3a": "s3", "s3n": "s3"}


class ArrowFileSystem(FileSystem):
    """pyarrow.fs where there is no JVM (Spark Connect's server-side Python workers): S3 (`s3a://`
    read as `s3://`), GCS (`gs://`), ADLS (`abfs://`, `abfss://`) and HDFS (`hdfs://`, with
    libhdfs) from the worker's environment (credentials as the AWS/Azure/Google SDKs find them)."""

    def __init__(self) -> None:
        self._stores: Dict[str, Any] = {}

    def _fs(self, location: str) -> Tuple[Any, str]:
        from pyarrow import fs as pafs

        scheme = paths.scheme(location)
        uri = _ARROW_SCHEMES.get(scheme, scheme) + location[len(scheme) :]
        root = "/".join(uri.split("/", 3)[:3])  # scheme://authority: one store, one client
        if root not in self._stores:
            try:
                store, base = pafs.FileSystem.from_uri(root)
            except (ValueError, NotImplementedError, ImportError) as exc:  # pyarrow's ArrowInvalid is a ValueError
                raise OSError(errno.EPROTONOSUPPORT, f"no pyarrow filesystem for {root}: {exc}", location) from None
            self._stores[root] = (store, base.rstrip("/"))
        store, base = self._stores[root]
        return store, base + uri[len(root) :]

    def _info(self, location: str) -> Any:
        fs, path = self._fs(location)
        return fs.get_file_info(path)

    def read_bytes(self, location: str) -> bytes:
        fs, path = self._fs(location)
        with fs.open_input_stream(path) as stream:
            return stream.read()

    def write_bytes(self, location: str, data: bytes) -> None:
        fs, path = self._fs(location)
        if fs.type_name not in ("local", "hdfs"):
            with fs.open_output_stream(path) as out:  # an object store shows it at close
                out.write(data)
            return
        # a file system shows a file as it grows: write it aside, then rename it into place
        parent = path.rsplit("/", 1)[0]
        fs.create_dir(parent, recursive=True)
        tmp = f"{parent}/.{path.rsplit('/', 1)[1]}.{uuid.uuid4().hex}.tmp"
        with fs.open_output_stream(tmp) as out:
            out.write(data)
        fs.move(tmp, path)

    def create_new(self, location: str, data: bytes) -> bool:
        if self.exists(location):
            return False
        self.write_bytes(location, data)
        return True

    def exists(self, location: str) -> bool:
        from pyarrow import fs as pafs

        return self._info(location).type != pafs.FileType.NotFound

    def is_dir(self, location: str) -> bool:
        from pyarrow import fs as pafs

        return self._info(location).type == pafs.FileType.Directory

    def list(self, location: str) -> List[Entry]:
        from pyarrow import fs as pafs

        fs, path = self._fs(location)
        infos = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
        found = [
            Entry(
                i.base_name,
                i.type == pafs.FileType.Directory,
                i.mtime.timestamp() if i.mtime else 0.0,
                i.size if i.type == pafs.FileType.File else 0,
            )
            for i in infos
        ]
        return sorted(found, key=lambda e: e.name)

    def delete(self, location: str) -> None:
        from pyarrow import fs as pafs

        fs, path = self._fs(location)
        kind = fs.get_file_info(path).type
        if kind == pafs.FileType.Directory:
            fs.delete_dir(path)
        elif kind == pafs.FileType.File:
            fs.delete_file(path)

    def mkdirs(self, location: str) -> None:
        fs, path = self._fs(location)
        if fs.type_name in ("local", "hdfs"):  # an object store has no directories (no marker objects)
            fs.create_dir(path, recursive=True)

    def move(self, source: str, target: str) -> None:
        fs, path = self._fs(source)
        fs.move(path, self._fs(target)[1])


LOCAL: FileSystem = LocalFileSystem()  # the local disk (tests put an object store's semantics here)


class ByScheme(FileSystem):
    """Local locations on the local disk, the others on `remote`."""

    def __init__(self, remote: Callable[[], FileSystem]) -> None:
        self._make_remote = remote
        self._remote: Any = None

    def of(self, location: str) -> FileSystem:
        if paths.is_local(location):
            return LOCAL
        if self._remote is None:
            self._remote = self._make_remote()
        return self._remote

    def read_bytes(self, location: str) -> bytes:
        return self.of(location).read_bytes(location)

    def write_bytes(self, location: str, data: bytes) -> None:
        self.of(location).write_bytes(location, data)

    def create_new(self, location: str, data: bytes) -> bool:
        return self.of(location).create_new(location, data)

    def exists(self, location: str) -> bool:
        return self.of(location).exists(location)

    def is_dir(self, location: str) -> bool:
        return self.of(location).is_dir(location)

    def list(self, location: str) -> List[Entry]:
        return self.of(location).list(location)

    def delete(self, location: str) -> None:
        self.of(location).delete(location)

    def mkdirs(self, location: str) -> None:
        self.of(location).mkdirs(location)

    def move(self, source: str, target: str) -> None:
        self.of(source).move(source, target)


def move_directories(files: FileSystem, moves: Sequence[Tuple[str, str]]) -> None:
    """Each source directory's files moved into its target directory, made new (empty where the
    source is missing); with FileSystem.run, in one task on a Spark Connect client's cluster."""
    for source, target in moves:
        files.mkdirs(target)
        for entry in files.list(source):
            if not entry.is_dir:
                files.move(f"{source}/{entry.name}", f"{target}/{entry.name}")


def beside_spark(spark: Any) -> FileSystem:
    """For code Spark runs (the classic driver, a Connect server's foreachBatch worker): the
    files are reachable from here."""
    if is_connect(spark):
        return ByScheme(ArrowFileSystem)
    return ByScheme(lambda: HadoopFileSystem(spark))


def for_client(spark: Any) -> FileSystem:
    """For the dbt process: itself when it is the driver, else (Spark Connect) tasks on the cluster."""
    return TaskFileSystem(spark) if is_connect(spark) else beside_spark(spark)


def _run_in_task(payload: bytes) -> bytes:
    """The body of a TaskFileSystem task: the operation, with the cluster's own filesystem;
    its result or its exception, pickled."""
    method, args = pickle.loads(payload)
    files = ByScheme(ArrowFileSystem)
    try:
        if method == "run":
            result: Any = ("ok", args[0](files, *args[1:]))
        else:
            result = ("ok", getattr(files, method)(*args))
    except Exception as exc:  # handed back to the client, which raises it
        if not isinstance(exc, (OSError, DbtRuntimeError, StorageError)):
            exc = OSError(errno.EIO, f"{type(exc).__name__}: {exc}")
        try:
            result = ("error", pickle.loads(pickle.dumps(exc)))
        except Exception:
            result = ("error", OSError(errno.EIO, f"{type(exc).__name__}: {exc}"))
    return pickle.dumps(result)


class TaskFileSystem(FileSystem):
    """A Spark Connect client's files: each operation runs in a one-row Spark task on the
    cluster (whose Python has this plugin, as foreachBatch needs anyway), so the dbt process
    never opens a table or checkpoint file itself, nor needs to see them."""

    def __init__(self, spark: Any) -> None:
        self._spark = spark

    def _call(self, method: str, *args: Any) -> Any:
        payload = pickle.dumps((method, args))

        def task(batches: Any) -> Any:
            import pyarrow as pa

            from dbt.adapters.window_views.storage import filesystems

            for batch in batches:
                if batch.num_rows:
                    yield pa.RecordBatch.from_pylist([{"r": filesystems._run_in_task(payload)}])

        rows = self._spark.range(0, 1, 1, 1).mapInArrow(task, "r binary").collect()
        status, value = pickle.loads(rows[0][0])
        if status == "error":
            raise value
        return value

    def read_bytes(self, location: str) -> bytes:
        return self._call("read_bytes", location)

    def write_bytes(self, location: str, data: bytes) -> None:
        self._call("write_bytes", location, data)

    def create_new(self, location: str, data: bytes) -> bool:
        return self._call("create_new", location, data)

    def exists(self, location: str) -> bool:
        return self._call("exists", location)

    def is_dir(self, location: str) -> bool:
        return self._call("is_dir", location)

    def list(self, location: str) -> List[Entry]:
        return self._call("list", location)

    def delete(self, location: str) -> None:
        self._call("delete", location)

    def mkdirs(self, location: str) -> None:
        self._call("mkdirs", location)

    def move(self, source: str, target: str) -> None:
        self._call("move", source, target)

    def run(self, function: Callable[..., Any], *args: Any) -> Any:
        return self._call("run", function, *args)
