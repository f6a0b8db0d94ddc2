"""Tables built from Python's Unicode database, kept on disk between processes.

``kernel.unicode`` builds its tables (categories, combining classes, what NFKC or case folding
may change) by visiting the code points in Python, which every process that cuts words paid at
its first text: each Python worker of a run, at its first task (docs/performance.md, "Figures
behind choices in the code"). A
table depends only on the Unicode database of the Python that builds it and on the code that
builds it, so a process loads the table another process built (``numpy.load`` of a few MB)
instead of building it again.

A table is kept under a key of both: the Unicode version (``unicodedata.unidata_version``) and
a digest of the source of the module that builds it, so another Python or another release of
the code never reads a table it did not build. Written atomically (a file of its own, renamed
into place); a table that cannot be read (cut short, another format) is built again and
replaced; a directory that cannot be written (a read-only home on a cluster's workers) only
means each process builds its tables, as it would without this module. A new key's first table
deletes the other keys' tables not written for 30 days.

``QUILTDETECT_TABLE_CACHE`` names the directory (default ``$XDG_CACHE_HOME/quiltdetect/tables``,
else ``~/.cache/quiltdetect/tables``); ``QUILTDETECT_TABLE_CACHE=off`` builds every table in
every process.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import os
import shutil
import sys
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

import numpy as np

CACHE_ENV = "QUILTDETECT_TABLE_CACHE"
OFF = "off"


def cache_dir() -> Path | None:
    """Where tables are kept, or None when ``QUILTDETECT_TABLE_CACHE=off``."""
    value = os.environ.get(CACHE_ENV)
    if value is not None:
        return None if value.strip().lower() in (OFF, "") else Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "quiltdetect" / "tables"


@functools.cache
def _source_key(module: str) -> str | None:
    """The Unicode version and a digest of ``module``'s source; None when the source cannot be
    read (a module imported from a zip archive): its tables are then not kept."""
    try:
        source = Path(sys.modules[module].__file__ or "").read_bytes()
    except (OSError, KeyError):
        return None
    return f"unicode-{unicodedata.unidata_version}-{hashlib.sha256(source).hexdigest()[:16]}"


def _load(path: Path) -> np.ndarray | None:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None


UNUSED_SECONDS = 30 * 86_400.0  # another key's tables, untouched this long, go when a new key starts


def _prune(directory: Path, keep: str) -> None:
    """Delete the other keys' tables (another Python, an earlier release) written more than
    ``UNUSED_SECONDS`` ago: each key holds about 15 MB."""
    now = time.time()
    for other in directory.iterdir():
        try:
            if other.name != keep and other.is_dir() and now - other.stat().st_mtime > UNUSED_SECONDS:
                shutil.rmtree(other, ignore_errors=True)
        except OSError:
            continue


def _save(path: Path, table: np.ndarray) -> None:
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    try:
        if not path.parent.is_dir():
            path.parent.mkdir(parents=True, exist_ok=True)
            _prune(path.parent.parent, path.parent.name)
        with open(part, "wb") as f:
            np.save(f, table, allow_pickle=False)
        os.replace(part, path)
    except OSError:
        with contextlib.suppress(OSError):
            part.unlink(missing_ok=True)


def stored(build: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """``build`` (a function of ints returning an array) cached in the process, as
    ``functools.cache`` does, and on disk (``cache_dir``) between processes."""
    signature = inspect.signature(build)

    @functools.cache
    def table(*args: int) -> np.ndarray:
        directory, key = cache_dir(), _source_key(build.__module__)
        if directory is None or key is None:
            return build(*args)
        path = directory / key / f"{'-'.join([build.__name__, *map(str, args)])}.npy"
        found = _load(path)
        if found is not None:
            return found
        built = build(*args)
        _save(path, built)
        return built

    defaults = tuple(p.default for p in signature.parameters.values())

    @functools.wraps(build)
    def call(*args: int, **kwargs: int) -> np.ndarray:
        if kwargs:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return table(*bound.args)
        return table(*args, *defaults[len(args):])  # (called per batch: no binding)

    call.cache_clear = table.cache_clear  # type: ignore[attr-defined]
    return call
