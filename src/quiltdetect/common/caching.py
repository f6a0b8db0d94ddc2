"""The intermediate tables a run keeps (``keep``) and lets go of when it ends (``released``).

A job persists what it reads more than once: the texts on disk (``TEXT_CACHE``), the
smaller tables in memory and on disk. Spark keeps a persisted DataFrame until it is unpersisted or
the session stops, so a run of the Python API in a long-lived session (a notebook, a service, a
test suite) that left them persisted kept a copy of every text of every corpus it had read on the
local disks, and its blocks in memory, until the session ended. Every ``Job.run``
(``lifecycle.py``) runs inside ``released``; tables persisted outside one (a caller's own) are
the caller's to release.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TypeVar

from pyspark import RDD, StorageLevel
from pyspark.sql import DataFrame

log = logging.getLogger(__name__)

Kept = TypeVar("Kept", DataFrame, RDD)

_RUN: ContextVar[list | None] = ContextVar("quiltdetect_kept", default=None)

# The storage levels jobs keep their tables at, named here once. SPILL: in memory, spilled to
# disk when it does not fit (the smaller tables). ON_DISK: on local disk only (tables too large
# for the heap). TEXT_CACHE: what a table that holds every text is kept at, on disk: kept in
# memory, the cached batches of a million pages filled the heap of a local-mode JVM until the
# Parquet reader died with `OutOfMemoryError: Java heap space` (docs/performance.md, "Memory
# and defaults at a million pages").
SPILL = StorageLevel.MEMORY_AND_DISK
ON_DISK = StorageLevel.DISK_ONLY
TEXT_CACHE = ON_DISK


def keep(frame: Kept, level: StorageLevel | None = None) -> Kept:
    """``frame.persist(level)`` (Spark's default level if None), released when the run ends."""
    frame = frame.persist() if level is None else frame.persist(level)
    kept = _RUN.get()
    if kept is not None:
        kept.append(frame)
    return frame


def cut(frame: DataFrame, level: StorageLevel | None = None) -> DataFrame:
    """``frame.localCheckpoint(eager=True)``: the lineage cut, the rows kept on the executors
    (at ``level``; Spark's default for checkpoints if None), released when the run ends or by
    ``release`` (``DataFrame.unpersist`` does not reach a checkpoint's blocks).

    Kept on disk, a checkpoint is cheaper than ``keep``: its rows are written as they are,
    where a persisted DataFrame is first built into compressed column batches (which tries a
    dictionary of every text: a third of the JVM's samples in a 100,000-page ingest)."""
    frame = frame.localCheckpoint(eager=True, storageLevel=level)
    kept = _RUN.get()
    if kept is not None:
        kept.append(_Checkpoint(frame))
    return frame


def release(frame: DataFrame) -> None:
    """Let go, before the run ends, of a table that ``keep`` or ``cut`` kept."""
    frame.unpersist()
    _Checkpoint(frame).unpersist()


class _Checkpoint:
    """The blocks of a local checkpoint: the RDD under the checkpointed frame's plan."""

    def __init__(self, frame: DataFrame) -> None:
        self.frame = frame

    def unpersist(self) -> None:
        plan = self.frame._jdf.queryExecution().logical()
        if plan.getClass().getSimpleName() == "LogicalRDD":  # (a persisted frame's plan is not)
            plan.rdd().unpersist(False)


@contextlib.contextmanager
def released() -> Iterator[list]:
    """Release, on the way out (also after an error), everything ``keep`` and ``cut`` kept inside."""
    kept: list = []
    token = _RUN.set(kept)
    try:
        yield kept
    finally:
        _RUN.reset(token)
        for frame in kept:
            try:
                frame.unpersist()
            except Exception as exc:  # noqa: BLE001 - a stopped session has nothing left to release
                log.debug("could not unpersist a kept table: %r", exc)
