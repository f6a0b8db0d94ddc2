"""Where the shared data lies (real prose, WARC samples, HTML benchmark pages, near-duplicate
pairs): ``$QUILTDETECT_SHARED_DATA``, else ``../shared/data`` beside the checkout, as CI lays it
out. Tests that need it skip without it."""

from __future__ import annotations

import os
from pathlib import Path

ENV = "QUILTDETECT_SHARED_DATA"
BESIDE_CHECKOUT = Path(__file__).resolve().parents[2] / "shared" / "data"


def shared_data() -> Path | None:
    """The shared data directory, or None when there is none."""
    env = os.environ.get(ENV)
    for candidate in ([Path(env)] if env else []) + [BESIDE_CHECKOUT]:
        if candidate.is_dir():
            return candidate
    return None


def shared_data_or_skip() -> Path:
    """The shared data directory; without one, the calling test is skipped."""
    import pytest

    path = shared_data()
    if path is None:
        pytest.skip(f"shared data not found (set {ENV})")
    return path
