"""Result tables compared across runs that read the same files from different places."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import pyarrow.parquet as pq


def as_path(source: str) -> str:
    """``file:/x`` (a read through Hadoop) as ``/x`` (local mode's streamed read)."""
    return urlsplit(source).path if source.startswith("file:") else source


def canonical_rows(table: Path, source: Callable[[str], str] = as_path) -> list[str]:
    """A table's rows as sorted canonical JSON (order-free, nested arrays kept in order), with
    each string ``source`` (the file a document was read from) passed through ``source``: two
    runs over the same files at other paths (a container's ``/data``, a cluster's ``file:``
    URLs) then compare equal."""
    rows = pq.read_table(table).to_pylist()
    for row in rows:
        if isinstance(row.get("source"), str):
            row["source"] = source(row["source"])
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)
