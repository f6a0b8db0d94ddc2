"""Where a run keeps what: the names of an output's own files, in one place (no PySpark here,
so the local readers of a finished output, ``mwo query`` and the review app, start without it).

``common/runstate.py`` writes this layout while a run runs, ``common/finished.py`` reads it
back once the run is complete; no other module builds these paths (``tests/test_architecture.py``).
"""

from __future__ import annotations

from pathlib import Path

STATE_DIR = "_quiltdetect"
COMPLETE = "_COMPLETE"  # written last: the configuration, input fingerprint, metrics
STAGES_DIR = f"{STATE_DIR}/stages"  # one marker per finished stage
WORK_DIR = f"{STATE_DIR}/work"  # the state a run keeps for the next (``work_table``)
SCRATCH = f"{STATE_DIR}/tmp"  # tables being written, moved into place when complete


def work_table(name: str) -> str:
    """Where a run keeps the state table (or file) ``name`` for the next run, under its output
    (``common.finished.FinishedRun.table`` reads it back)."""
    return f"{WORK_DIR}/{name}"


def is_published(path: str | Path) -> bool:
    """Whether the local directory ``path`` holds a complete run (its ``_COMPLETE`` is there)."""
    return (Path(path) / COMPLETE).is_file()
