"""What an ``--input`` names, file by file: every file under it is either listed to be read or
skipped with a reason, the same for a directory and a glob (docs/reliability.md, "What every
input file becomes").

* A path that exists is read as that path, whatever characters its name holds (``b[1].warc.gz``,
  ``crawl [2024]/``, ``t:12:00.jsonl``); only a pattern that names no existing path is a glob.
* Directories are walked recursively, symlinked directories followed once each (a loop is not
  walked twice), entries in name order.
* Skipped, with the reason: names starting with ``_`` or ``.`` (``hidden name``: a run's
  ``_quiltdetect/``, editors' ``.swp``; ``table metadata``: Spark's ``_SUCCESS`` and ``.crc``
  files beside a table's parts), entries that are not regular files
  (``not a regular file``: named pipes, sockets, devices), symlinks to nothing (``broken
  symlink``), files and directories this user cannot read (``unreadable``), and a file reached a
  second time through a symlink (``same file as another input``).

Which files have a known format is the ingestion layer's decision (``documents/read.py``). No
Spark here: local listings happen before a JVM starts.
"""

from __future__ import annotations

import glob
import os
import stat
from dataclasses import dataclass, field

HIDDEN_PREFIXES = ("_", ".")
HIDDEN = "hidden name"
NOT_REGULAR = "not a regular file"
BROKEN_LINK = "broken symlink"
UNREADABLE = "unreadable"
SAME_FILE = "same file as another input"
TABLE_METADATA = "table metadata"


@dataclass
class Listing:
    """The files an input names (absolute paths, sorted), the entries left out with their
    reason, how the input was taken: ``path`` (it exists) or ``glob``, and whether it named
    anything at all (``found``: an existing path, or a glob that matched; an empty directory is
    found and holds no file)."""

    files: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    taken_as: str = "path"
    found: bool = False


def is_hidden(name: str) -> bool:
    return name.startswith(HIDDEN_PREFIXES)


def is_table_metadata(path: str) -> bool:
    """A file Spark or Hadoop writes beside a table's data files (``_SUCCESS``, ``.x.crc``,
    ``_committed_*``, ``_started_*``, ``_metadata``): part of a table, never an input."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return (name in ("_SUCCESS", "_metadata", "_common_metadata") or name.startswith(("_committed_", "_started_"))
            or (name.startswith(".") and name.endswith(".crc")))


def hidden_reason(path: str) -> str:
    return TABLE_METADATA if is_table_metadata(path) else HIDDEN


def list_local(pattern: str) -> Listing:
    """Every file ``pattern`` names (see the module docstring); an empty listing when it names
    nothing at all."""
    listing = Listing()
    if os.path.lexists(pattern):
        matches = [pattern]
    elif glob.has_magic(pattern):
        listing.taken_as = "glob"
        matches = sorted(glob.glob(_escaped_prefix(pattern), recursive=True))
    else:
        return listing
    listing.found = bool(matches)
    seen_files: dict[tuple[int, int], str] = {}
    seen_dirs: set[tuple[int, int]] = set()
    for match in matches:  # a path named as it is is read even if its name is hidden; a glob's matches are not
        _visit(os.path.abspath(match), listing, seen_files, seen_dirs, named=listing.taken_as == "path")
    listing.files.sort()
    return listing


def _escaped_prefix(pattern: str) -> str:
    """The pattern with its longest existing leading directories taken literally
    (``crawl [2024]/*.warc.gz``: the directory ``crawl [2024]``, then a glob in it)."""
    parts = pattern.split("/")
    for i in range(len(parts) - 1, 0, -1):
        prefix = "/".join(parts[:i])
        if prefix and os.path.isdir(prefix):
            return glob.escape(prefix) + "/" + "/".join(parts[i:])
    return pattern


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _visit(top: str, listing: Listing, seen_files: dict, seen_dirs: set, *, named: bool) -> None:
    """List one entry: a file, or a directory walked in name order, depth first. Iterative (a
    stack of entries still to visit), so a tree of any depth is listed: one Python frame per
    level would end at the interpreter's recursion limit (about 1,000 levels)."""
    pending: list[tuple[str, bool]] = [(top, named)]
    while pending:
        path, named = pending.pop()
        children = _entry(path, listing, seen_files, seen_dirs, named=named)
        pending.extend((child, False) for child in reversed(children))


def _entry(path: str, listing: Listing, seen_files: dict, seen_dirs: set, *, named: bool) -> list[str]:
    """List one entry: a file is listed or left out with its reason; a directory (walked once)
    gives its children's paths, in name order."""
    name = os.path.basename(path.rstrip("/"))
    if not named and is_hidden(name):
        listing.skipped.append((path, hidden_reason(path)))
        return []
    try:
        st = os.stat(path)
    except FileNotFoundError:
        listing.skipped.append((path, BROKEN_LINK if os.path.islink(path) else UNREADABLE))
        return []
    except OSError:
        listing.skipped.append((path, UNREADABLE))
        return []
    if stat.S_ISDIR(st.st_mode):
        if _identity(st) in seen_dirs:
            return []  # a symlink loop, or a directory already walked through another name
        seen_dirs.add(_identity(st))
        try:
            names = sorted(os.listdir(path))
        except OSError:
            listing.skipped.append((path, UNREADABLE))
            return []
        return [os.path.join(path, child) for child in names]
    if not stat.S_ISREG(st.st_mode):
        listing.skipped.append((path, NOT_REGULAR))
        return []
    if not os.access(path, os.R_OK):
        listing.skipped.append((path, UNREADABLE))
        return []
    first = seen_files.get(_identity(st))
    if first is not None:
        listing.skipped.append((path, SAME_FILE))
        return []
    seen_files[_identity(st)] = path
    listing.files.append(path)
    return []
