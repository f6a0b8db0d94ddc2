"""The test suite's own scheduling (tests/conftest.py): a worker process per core, and the tests of
a module that builds a cluster or a wheel kept on one worker, so that its module fixture is built
once (likewise the tests that compare against one reference run). xdist's ``loadgroup`` marks stopped grouping under pytest 9.2 without a word; this test
notices if the conftest's scheduler ever does the same."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).with_name("conftest.py")
TIERS = Path(__file__).with_name("tiers.py")

HEAVY = """
import os, time, pytest

@pytest.fixture(scope="module")
def built():
    with open(os.environ["SETUPS"], "a") as f:
        f.write(os.environ.get("PYTEST_XDIST_WORKER", "main") + "\\n")
    return 1

@pytest.mark.parametrize("i", range(6))
def test_uses_it(i, built):
    time.sleep(0.2)
"""

LIGHT = """
import time, pytest

@pytest.mark.parametrize("i", range(6))
def test_other(i):
    time.sleep(0.2)
"""


def _suite(pytester: pytest.Pytester, modules: dict[str, str]) -> Path:
    pytester.makeconftest(CONFTEST.read_text())
    pytester.makepyfile(tiers=TIERS.read_text(), **modules)
    return pytester.path / "setups.txt"


def test_a_whole_module_goes_to_one_worker_and_builds_its_fixture_once(pytester, monkeypatch):
    setups = _suite(pytester, {"test_deploy_cluster": HEAVY, "test_light": LIGHT})
    monkeypatch.setenv("SETUPS", str(setups))
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=12)
    assert len(setups.read_text().split()) == 1, setups.read_text()
    workers = {line.split()[0] for line in result.outlines if "test_deploy_cluster.py::" in line and "PASSED" in line}
    assert len(workers) == 1, workers


def test_other_modules_are_shared_out_test_by_test(pytester, monkeypatch):
    # Alone, so that the first two tests go to the two workers whatever their timing.
    setups = _suite(pytester, {"test_not_listed": HEAVY})
    monkeypatch.setenv("SETUPS", str(setups))
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=6)
    workers = {line.split()[0] for line in result.outlines if "test_not_listed.py::" in line and "PASSED" in line}
    assert workers == {"[gw0]", "[gw1]"}, workers


def test_auto_means_a_worker_per_core_at_most_four(monkeypatch):
    import conftest

    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    monkeypatch.setattr(conftest.os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert conftest.pytest_xdist_auto_num_workers(None) == conftest.MAX_WORKERS == 4
    monkeypatch.setattr(conftest.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert conftest.pytest_xdist_auto_num_workers(None) == 1
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    assert conftest.pytest_xdist_auto_num_workers(None) == 3


def test_tests_of_one_reference_run_share_a_scope_and_others_stand_alone():
    from conftest import scope_of

    jobs = "tests/test_reliability_jobs.py::"
    assert scope_of(jobs + "test_same_bytes_for_any_partitioning_and_input_order[mwo-5-partitions-no-aqe-reversed]") \
        == scope_of(jobs + "test_published_complete_rerun_and_resume_with_new_settings[mwo]") == jobs + "mwo"
    assert scope_of(jobs + "test_published_complete_rerun_and_resume_with_new_settings[phrases]") == jobs + "phrases"
    quilts = "tests/test_reliability.py"
    assert scope_of(quilts + "::test_same_bytes_for_any_partitioning_and_input_order[1-partition]") \
        == scope_of(quilts + "::test_complete_marker_and_rerun_does_nothing") == quilts
    alone = "tests/test_kernel.py::test_x[a-b]"
    assert scope_of(alone) == alone
    assert scope_of("tests/test_deploy_cluster.py::test_x[ingest.py]") == "tests/test_deploy_cluster.py"
