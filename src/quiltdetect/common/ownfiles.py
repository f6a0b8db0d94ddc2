"""Files under an input that this project itself wrote or ships, which concern no run.

They are left out like any other file that is not an input, and named in ``metrics.json``'s
``skipped_files`` with ``"own": true``, but the summary's ``left out:`` line does not count
them (``RunMetrics.input_lines``): the demo left out "2 files (unknown format 2)", the bundled
sample's own ``README.md`` and ``SHA256SUMS``, and every analysis of a ``docs/`` table "3
files (table metadata 3)", the ``_SUCCESS`` and ``.crc`` files Spark wrote beside its parts.

* a file the project ships: ``README.md`` and ``SHA256SUMS`` of the bundled sample;
* a file a run of this project wrote: an entry left out as table metadata, a hidden name or of
  unknown format (``_SUCCESS``, ``.part-….crc``, ``_quiltdetect/``, ``_COMPLETE``,
  ``metrics.json``, ``config.yaml``, a report) inside a run's output directory (one holding
  ``_quiltdetect/``), local. Anything else left out under it (unreadable, a broken symlink,
  ...) is still counted.
"""

from __future__ import annotations

import os
from pathlib import Path

from quiltdetect.common.layout import STATE_DIR
from quiltdetect.common.listing import HIDDEN, TABLE_METADATA

SAMPLE_FILES = ("README.md", "SHA256SUMS")  # what the bundled sample holds besides its crawls
UNKNOWN_FORMAT = "unknown format"  # documents/read.py's reason (that module imports Spark)
WRITTEN_REASONS = (TABLE_METADATA, HIDDEN, UNKNOWN_FORMAT)
RUN_STATE = STATE_DIR
RUN_DEPTH = 4  # a run's files lie at most this deep under it (sweep: outcomes/k=5/m=50/_SUCCESS)


def sample_dir() -> Path | None:
    """The bundled sample: quiltdetect/data/sample of an installed wheel (setup.py copies it
    in), else data/sample of the source checkout (``pip install -e .`` or PYTHONPATH=src)."""
    here = Path(__file__).resolve()
    for candidate in (here.parents[1] / "data" / "sample", here.parents[3] / "data" / "sample"):
        if candidate.is_dir():
            return candidate
    return None


def _is_run(directory: str) -> bool:
    return os.path.isdir(os.path.join(directory, RUN_STATE))


def is_own(path: str, reason: str) -> bool:
    """Whether an entry left out with ``reason`` is a file this project ships or a run wrote."""
    if "://" in path or path.startswith("file:"):
        return False
    if reason == UNKNOWN_FORMAT and os.path.basename(path) in SAMPLE_FILES:
        sample = sample_dir()
        if sample is not None and os.path.realpath(os.path.dirname(path)) == str(sample):
            return True
    if reason not in WRITTEN_REASONS:
        return False
    directory = os.path.dirname(os.path.abspath(path))
    for _ in range(RUN_DEPTH):
        if _is_run(directory):
            return True
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return False
