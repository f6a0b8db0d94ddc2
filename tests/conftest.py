"""Shared fixtures: one local[2] Spark session per test process, and the shared data path; each
test's tier (tiers.py) and how the tests are shared out over the worker processes.

pytest runs the tests in worker processes (pytest-xdist, ``-n auto`` in pyproject.toml): most
tests are small Spark jobs whose driver and JVM wait on each other, so two processes keep two
cores busier than one. Each worker builds its own session on first use.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Each worker is a Spark JVM (2 GB heap) running local[2]; more workers than cores only queue.
MAX_WORKERS = 4


def pytest_xdist_auto_num_workers(config) -> int:
    """What ``-n auto`` means here: one worker per core, at most MAX_WORKERS
    (``PYTEST_XDIST_AUTO_NUM_WORKERS`` overrides, ``-n 0`` runs in this process)."""
    given = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if given:
        return int(given)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


# Modules whose tests share an expensive module fixture (a packed environment and a standalone
# cluster, about 170 s; a built and installed wheel; the quilt job's reference run, which most
# of test_reliability's tests compare against; the sample's quilt run, the phrases crawl's run,
# the MWO corpora's index, the Docker image): all their tests go to one worker, which builds the fixture once
# (split over two workers, each built it: 6-14 s twice).
WHOLE_MODULES = ("test_deploy_cluster.py", "test_deploy_wheel.py", "test_reliability.py", "test_quilts_job.py",
                 "test_phrases_job.py", "test_mwo_parity.py", "test_deploy_docker_run.py")
# Scopes that take longest, handed out first so that no worker starts one as the other ends
# (the end-to-end runs of the README and of the console; the modules above).
FIRST = ("test_deploy_docker_run.py", "test_readme.py", "test_reliability.py", "test_docs_commands.py",
         "test_phrases_job.py")
# test_reliability_jobs.py: one reference run per job, named first in each test's parameters;
# the tests of one job go to one worker.
PER_JOB_REFERENCE = "test_reliability_jobs.py"


def scope_of(nodeid: str) -> str:
    """The unit the scheduler hands to one worker: a test, or the tests that share a reference."""
    module, _, test = nodeid.partition("::")
    name = module.rsplit("/", 1)[-1]
    params = test.partition("[")[2]
    if name in WHOLE_MODULES:
        return module
    if name == PER_JOB_REFERENCE and params:
        return f"{module}::{params.rstrip(']').split('-')[0]}"
    return nodeid


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items) -> None:
    """Each test marked with its tier (tiers.py's table), before ``-m`` selects a tier; then the
    longest scopes (``FIRST``) first, in their order, the rest as collected."""
    from tiers import tier_of

    for item in items:
        tier = tier_of(item.nodeid)
        if tier != "fast":
            item.add_marker(getattr(pytest.mark, tier))
    rank = {name: i for i, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0].rsplit("/", 1)[-1], len(FIRST)))


def pytest_xdist_make_scheduler(config, log):
    """The default ``--dist load``, except that the tests of one ``scope_of`` go to one worker
    together (xdist's own ``loadgroup`` marks do not group under pytest 9.2: it renames node ids
    through an attribute pytest no longer reads). Any other ``--dist`` is xdist's."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Scheduler(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return Scheduler(config, log)


@pytest.fixture(scope="session")
def shared() -> Path:
    """The shared data directory (testkit.shared); tests that ask for it skip without it."""
    from testkit.shared import shared_data_or_skip

    return shared_data_or_skip()


@pytest.fixture(scope="session")
def spark():
    """A session-scoped local[2] session with few shuffle partitions."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from tiers import SHORT_JVM

    from quiltdetect.common.config import PYTHON_DAEMON
    from quiltdetect.common.session import build_session

    session = build_session(
        "quiltdetect-tests",
        {
            # One task thread per worker process (two workers on two cores): with two threads
            # each, four tasks and their Python workers fought for two cores (the fast tier
            # 364-374 s, 340 s with one); and one retry per task (see test_reliability).
            "spark.master": "local[1,2]",
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
            # as every local session of the console: PySpark's daemon without its per-task costs
            "spark.python.daemon.module": PYTHON_DAEMON,
        },
        local=True,
    )
    _SESSION_CONF.update(session.conf.getAll)
    yield session
    _SESSION_CONF.clear()
    session.stop()


# The tests' session's SQL settings as built. A test that runs a command in this process
# (``cli.main``) builds its session with the console's settings, and getOrCreate() applies them
# to this session: 32 shuffle partitions instead of 4, other Arrow batches. Each test starts
# from the settings above again.
_SESSION_CONF: dict[str, str] = {}


@pytest.fixture(autouse=True)
def _session_settings_restored():
    yield
    if not _SESSION_CONF:
        return
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is None:
        return
    for key, value in session.conf.getAll.items():
        if not key.startswith("spark.sql.") or session.conf.isModifiable(key) is False:
            continue
        if key not in _SESSION_CONF:
            session.conf.unset(key)
        elif value != _SESSION_CONF[key]:
            session.conf.set(key, _SESSION_CONF[key])
