"""Locations as users write them (location_root, checkpoint_location, a schema's location) and as
the streaming runner keeps them: a local directory as its absolute path (what a `file:` URI
names), any other store as the URI Spark speaks (`hdfs://`, `s3a://`, `abfss://`, `gs://`, ...).
Strings, not `pathlib` paths: a location is handed to a filesystem chosen by its scheme."""

from __future__ import annotations

from pathlib import Path
from typing import Optional
from urllib.parse import quote, unquote, urlparse

from dbt.adapters.window_views.errors import StorageError

LOCAL_SCHEMES = ("", "file")
# stores without atomic rename, whose listings may lag: the commit protocol assumes this of all
# non-local stores, and these are the ones known to be such
OBJECT_STORES = ("s3a", "s3", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "oss", "cos", "cosn", "obs")


def problem(location: object) -> Optional[str]:
    """Why `location` is not an absolute path or URI (None when it is one)."""
    if not isinstance(location, str) or not location.strip():
        return "is not a path"
    if urlparse(location).scheme or location.startswith("/"):
        return None
    return "is a relative path, which would depend on the directory dbt runs in"


def scheme(location: str) -> str:
    """'' for a local path or `file:` URI, else the URI's scheme (lower case)."""
    found = urlparse(str(location)).scheme.lower()
    return "" if found == "file" else found


def is_local(location: str) -> bool:
    return scheme(location) == ""


def normalize(location: object) -> str:
    """One spelling per location: a local one as its absolute path (`file:/x`, `file:///x` and
    `/x/` are `/x`), another store's URI as written without a trailing slash."""
    text = str(location)
    parsed = urlparse(text)
    if parsed.scheme.lower() == "file":
        text = parsed.path
    elif parsed.scheme:
        return text.rstrip("/") or text
    return text.rstrip("/") or "/"


def join(location: str, *names: str) -> str:
    out = location.rstrip("/")
    for name in names:
        out = f"{out}/{name.strip('/')}"
    return out


def name(location: str) -> str:
    return location.rstrip("/").rsplit("/", 1)[-1]


def parent(location: str) -> str:
    head = location.rstrip("/").rsplit("/", 1)[0]
    return head if head and not head.endswith(":/") and not head.endswith(":") else location


def sibling(location: str, suffix: str) -> str:
    """The location beside this one named like it with `suffix` (`t` → `t__late`)."""
    return location.rstrip("/") + suffix


def spark_uri(location: str) -> str:
    """The location as a URI, for what needs one (a table's path, the checkpointLocation):
    `file:` URIs for local paths (percent-encoded; reads and writes take the plain path)."""
    return Path(normalize(location)).as_uri() if is_local(location) else location


def listed_uri(location: str) -> str:
    """The location spelled as Hadoop's listing spells it (`FileStatus.getPath().toUri()`):
    `file:///a/b%20c` for a local path. Spark's streaming file source remembers the files it read
    by this string, so a file list read instead of a listing must spell them the same way."""
    if not is_local(location):
        return location
    return "file://" + quote(normalize(location), safe="/_-!.~'()*,;:$&+=@")


def shown(location: str) -> str:
    """A file as Spark names it (a percent-encoded URI), as the user would: a local file by its path."""
    return normalize(unquote(location)) if is_local(location) else location


def within(file: str, location: str) -> bool:
    """Whether `file` (as Spark names it) lies under `location` (however it is spelled)."""
    return shown(file).startswith(shown(location).rstrip("/") + "/")


def local_path(location: str) -> Path:
    """The local directory of a `file:` URI or absolute path; StorageError for other stores."""
    if is_local(location):
        return Path(normalize(location))
    raise StorageError(f"{location!r} is on '{scheme(location)}', not a local directory")
