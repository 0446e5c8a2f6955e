"""The tests' in-process dbt commands reuse the manifest of the project's last parse while
nothing it was parsed from changed, as dbt's own `dbtRunner(manifest=...)` allows: most test
commands re-run an unchanged project, and a partial parse is a fifth of a second each time."""

from __future__ import annotations

import hashlib
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

# what dbt parses a project from (default paths: the tests' projects use them)
PARSED = ("models", "seeds", "macros", "snapshots", "analyses", "tests")
PROJECT_FILES = ("dbt_project.yml", "profiles.yml", "packages.yml", "dependencies.yml", "selectors.yml")
# commands that run a parsed project as it is; `show`/`compile --inline` add a node to it
REUSING = {"run", "build", "test", "seed", "compile", "ls", "list", "run-operation"}
# arguments that change what a parse gives
PARSE_ARGS = ("--vars", "--target", "-t", "--profile", "--no-partial-parse")

_cache: Dict[Path, Tuple[str, Dict[str, Optional[str]], Any]] = {}
_parsed: List[Any] = []  # the manifest the last parse in this process returned


def _install() -> None:
    """Note each manifest dbt parses (dbt.cli.requires.parse_manifest), once per process."""
    from dbt.cli import requires

    if getattr(requires.parse_manifest, "_noted", False):
        return
    parse = requires.parse_manifest

    def noted(*args: Any, **kwargs: Any) -> Any:
        manifest = parse(*args, **kwargs)
        _parsed.append(manifest)
        return manifest

    noted._noted = True  # type: ignore[attr-defined]
    requires.parse_manifest = noted


def inputs_key(root: Path, args: Sequence[str]) -> str:
    """A digest of the project's parsed files and the arguments that change a parse."""
    digest = hashlib.sha256()
    files = [root / name for name in PROJECT_FILES]
    for folder in PARSED:
        files += sorted(p for p in (root / folder).rglob("*") if p.is_file())
    for path in files:
        if path.is_file():
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    for i, arg in enumerate(args):
        if arg.split("=")[0] in PARSE_ARGS:
            digest.update(f"{arg}\0{args[i + 1] if i + 1 < len(args) else ''}\0".encode())
    return digest.hexdigest()


@contextmanager
def reused(root: Path, args: Sequence[str]) -> Iterator[Optional[Any]]:
    """The manifest to hand dbt for `args` (None: dbt parses), noting what it parses instead."""
    _install()
    if args[0] not in REUSING or "--inline" in args or "--no-partial-parse" in args:
        yield None
        return
    key = inputs_key(root, args)
    cached = _cache.get(root)
    if cached is not None and cached[0] == key and all(os.environ.get(k) == v for k, v in cached[1].items()):
        yield cached[2]
        return
    _cache.pop(root, None)
    del _parsed[:]
    yield None
    if _parsed:
        manifest = _parsed[-1]
        env = {name: os.environ.get(name) for name in getattr(manifest, "env_vars", {})}
        _cache[root] = (key, env, manifest)
