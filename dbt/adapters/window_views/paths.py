"""Locations as users write them (location_root, checkpoint_location, a schema's location):
which are local directories the streaming runner can manage, and which are not paths at all."""

from __future__ import annotations

from pathlib import Path
from typing import Optional
from urllib.parse import urlparse

from dbt.adapters.window_views.errors import StorageError

LOCAL_SCHEMES = ("", "file")


def problem(location: object) -> Optional[str]:
    """Why `location` is not an absolute path or URI (None when it is one)."""
    if not isinstance(location, str) or not location.strip():
        return "is not a path"
    if urlparse(location).scheme or location.startswith("/"):
        return None
    return "is a relative path, which would depend on the directory dbt runs in"


def local_path(location: str) -> Path:
    """The local directory of a `file:` URI or absolute path; StorageError for other stores."""
    parsed = urlparse(location)
    if parsed.scheme in LOCAL_SCHEMES:
        return Path(parsed.path if parsed.scheme else location)
    raise StorageError(
        f"streaming window views keep their files in a local or mounted directory; {location!r} is on "
        f"'{parsed.scheme}'"
    )
