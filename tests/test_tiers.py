"""The tier table (tests/tiers.py) stays true: each entry names tests that exist, no test is in
two tiers, and an entry names a module, a test or a parameter and nothing beside it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tiers import PATTERNS, local_id, tier_of

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def every_test() -> list[str]:
    """The node ids of every test of every tier, collected in a fresh process (no JVM starts)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "", "-n", "0",
                          "-p", "no:cacheprovider", "tests"], cwd=REPO, env=env, capture_output=True, text=True,
                         check=True).stdout
    ids = [line for line in out.splitlines() if "::" in line]
    assert len(ids) > 100, out[-2000:]
    return ids


def test_every_entry_of_the_tier_table_names_a_collected_test(every_test):
    names = [local_id(n) for n in every_test]
    stale = [entry for patterns in PATTERNS.values() for entry, p in patterns if not any(p.match(n) for n in names)]
    assert stale == [], "entries of tests/tiers.py that name no test (renamed? another budget?): " + ", ".join(stale)


def test_no_test_is_named_by_two_tiers(every_test):
    both = [n for n in every_test if sum(any(p.match(local_id(n)) for _, p in patterns)
                                          for patterns in PATTERNS.values()) > 1]
    assert both == []


def test_an_entry_names_its_module_its_tests_or_its_parameters_and_nothing_beside_them():
    assert tier_of("tests/test_api.py::test_the_api_equals_the_command_on_renamed_columns[mwo_pairs]") == "extended"
    assert tier_of("tests/test_reliability.py::test_same_bytes_for_any_partitioning_and_input_order[1-partition]") \
        == "extended"
    assert tier_of("tests/test_reliability.py::test_same_bytes_for_any_partitioning_and_input_order"
                   "[7-partitions-no-aqe-reversed]") == "fast"
    assert tier_of("tests/test_reliability.py::test_killed_while_writing_complete_a_rerun_equals_a_clean_run_twice") \
        == "fast"  # a test whose name starts with an entry's is another test
    assert tier_of("tests/test_quilts_parity.py::test_spark_equals_reference[k1-m2-c1-theta0.0-foreignnone-3-examples]") \
        == "extended"
    assert tier_of("tests/test_quilts_parity.py::test_spark_equals_reference[k1-m2-c1-theta0.0-foreignnone-1-examples]") \
        == "fast"
    assert tier_of("tests/test_deploy_wheel.py::test_documented_requirements_without_pyspark_are_pyprojects") == "fast"
    assert tier_of("tests/test_deploy_airflow.py::test_anything") == "deploy"
