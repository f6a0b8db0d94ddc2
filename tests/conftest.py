"""Shared fixtures: one local[2] Spark session for the whole run, and the shared data path."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_data() -> Path | None:
    """../shared/data beside the checkout (as CI lays it out), or $QUILTDETECT_SHARED_DATA."""
    env = os.environ.get("QUILTDETECT_SHARED_DATA")
    for candidate in ([Path(env)] if env else []) + [REPO.parent / "shared" / "data"]:
        if candidate.is_dir():
            return candidate
    return None


@pytest.fixture(scope="session")
def shared() -> Path:
    path = shared_data()
    if path is None:
        pytest.skip("shared data not found (set QUILTDETECT_SHARED_DATA)")
    return path


@pytest.fixture(scope="session")
def spark():
    """A session-scoped local[2] session with few shuffle partitions."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from tiers import SHORT_JVM

    from quiltdetect.common.session import build_session

    session = build_session(
        "quiltdetect-tests",
        {
            "spark.master": "local[2,2]",  # one retry per task: see test_reliability
            "spark.driver.memory": "2g",
            "spark.sql.shuffle.partitions": 4,
            "spark.default.parallelism": 4,
            "spark.sql.files.minPartitionNum": 2,  # test inputs are tiny: no 16-way scans
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.eventLog.enabled": "false",
            "spark.log.level": "ERROR",
            # Tests run hundreds of small jobs: the client JIT and no whole-stage code generation
            # cost less than they save there (about 30% per job). Results are the same; the
            # end-to-end and cluster tests run the shipped settings.
            "spark.driver.extraJavaOptions": SHORT_JVM,
            "spark.sql.codegen.wholeStage": "false",
        },
        local=True,
    )
    yield session
    session.stop()
