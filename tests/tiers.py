"""Which tier each test is in, in one table, and the settings the tiers share.

A test is in the **fast** tier unless an entry of ``EXTENDED`` or ``DEPLOY`` below names it;
``conftest.py`` marks the tests they name (``pytest_collection_modifyitems``), and no test module
marks a tier itself.

* fast (the README's ``pytest``; pyproject.toml's ``-m 'not extended and not deploy'``): every
  layer once. The kernels, the parity of each Spark path with its in-memory reference at a small
  derandomized Hypothesis budget, the quilt job's bytes under another partitioning, one
  end-to-end run of the console command and of ``spark-submit``, the review tool, reliability
  (kill points, resume, retry, hostile input), the documents' and the code's own checks.
* ``extended`` (``pytest -m extended``, which ``.ci/run`` runs after the fast tier): the same
  properties with larger budgets and more settings, every job's bytes under more partitionings,
  and slower edge cases whose property the fast tier already covers another way. Each entry
  says what the fast tier keeps instead.
* ``deploy`` (``pytest -m deploy``, needs the ``cluster`` and ``airflow`` extras and Docker):
  every job on a standalone cluster, the built wheel, the Airflow DAG and the Docker image.

An entry is a node id under ``tests/``: a module (``test_api.py``), a test
(``test_api.py::test_x``, every parameter of it) or one parameter of a test
(``test_api.py::test_x[id]``); ``*`` in it stands for any text. Parameter ids come from the
test's parametrization: ``budgets(fast, more)`` names its cases ``{fast}-examples`` and
``{more}-examples``, ``parameter_cases`` appends that to each setting's name, and the
partitionings below carry their own ids. An entry that names no test fails
``tests/test_tiers.py``, so the table cannot silently go stale.

Every tier runs in a worker process per core (pytest-xdist, ``-n auto``; ``conftest.py`` says how
tests are shared out), so a tier's time is about its longest worker's.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, Phase, settings

# entry -> why it is not in the fast tier, and what the fast tier keeps instead (empty: as the
# entry above)
EXTENDED: dict[str, str] = {
    # larger Hypothesis budgets and more settings of the parity properties
    "test_quilts_parity.py::test_spark_equals_reference[*-3-examples]":
        "every setting with 3 examples; the fast tier runs 5 of the 7 with 1 example "
        "(foreign host and none are covered by other settings)",
    "test_quilts_increment.py::test_chain_of_updates_equals_a_fresh_run[k3-m3-c2-*]": "the chain with foreign none; the fast tier runs host",
    "test_quilts_increment.py::test_chain_of_updates_equals_a_fresh_run[k2-m4-c1-*]": "the chain with foreign ip",
    "test_quilts_increment.py::test_chain_of_updates_equals_a_fresh_run[k3-m5-c1-*]": "the chain with foreign domain",
    "test_neardup_parity.py::test_pairs_and_clusters_equal_reference[algorithmb-*]": "Henzinger's b; the fast tier runs lsh (twice) and combined",
    "test_neardup_parity.py::test_pairs_and_clusters_equal_reference[algorithmc-*]": "Henzinger's c",
    "test_neardup_parity.py::test_pairs_and_clusters_equal_reference[algorithmcombined-sites-*]": "combined with the same-site split",
    "test_neardup_parity.py::test_connected_components_equal_union_find[6-examples-one-task]": "budget 6; the fast tier 3",
    "test_words_unicode.py::test_code_points_the_tables_skip_have_no_properties":
        "every code point Unicode does not list, one at a time in Python (seconds); the fast tier's word "
        "tests read the tables built without them",
    "test_neardup_parity.py::test_connected_components_equal_union_find[6-examples-rounds]": "budget 6; the fast tier 3",
    "test_phrases_parity.py::test_spark_equals_reference[k3-m84-ip-nocollapse]":
        "the second setting (ip servers, no collapse, per-count cover samples); the fast tier runs the first",
    "test_reuse_parity.py::test_blind_discovery_and_detection_equal_reference[3-examples]": "budget 3; the fast tier 1",
    "test_table_fuzz.py::test_random_tables_give_documents_and_counted_skips_or_a_config_error[25-examples]":
        "budget 25; the fast tier 3",
    "test_ingest_keys.py::test_numbered_documents_equal_the_sorted_then_counted_keys[2]": "seeds 2 and 3; the fast tier seed 1",
    "test_ingest_keys.py::test_numbered_documents_equal_the_sorted_then_counted_keys[3]": "",
    "test_ingest_keys.py::test_in_key_ranges_sort_dense_keys_into_range_partitions_without_a_sample[1000]":
        "keys from 1000 (an update's segment); the fast tier runs keys from 0",
    "test_kernel_buckets.py::test_cover_by_rank_breaks_ties_by_rank_and_answers_in_keys":
        "two Spark jobs per example; the fast tier keeps the tie test beside it",
    # the same bytes under other partitionings (PARTITIONINGS, JOB_PARTITIONINGS below)
    "test_reliability.py::test_same_bytes_for_any_partitioning_and_input_order[1-partition]":
        "the quilt job in one task; the fast tier runs 7 partitions, inputs reversed",
    "test_reliability.py::test_same_bytes_for_any_partitioning_and_input_order[29-partitions-no-aqe]":
        "the quilt job in far more tasks than cores",
    "test_reliability_jobs.py::test_same_bytes_for_any_partitioning_and_input_order":
        "every other job at 5 partitions, inputs reversed; the fast tier checks each against its reference",
    # the run's lifecycle for every job
    "test_reliability_jobs.py::test_published_complete_rerun_and_resume_with_new_settings[mwo]":
        "publish, rerun and resume are one shared class: the fast tier runs it for neardup",
    "test_reliability_jobs.py::test_published_complete_rerun_and_resume_with_new_settings[phrases]": "",
    "test_reliability_jobs.py::test_published_complete_rerun_and_resume_with_new_settings[reuse]": "",
    "test_reliability_jobs.py::test_published_complete_rerun_and_resume_with_new_settings[sweep]": "",
    "test_reliability.py::test_new_parameters_reuse_docs_and_grams_and_equal_a_fresh_run":
        "the quilt job's grams reused under a new m; the fast tier keeps neardup's resume with new settings",
    "test_reliability.py::test_killed_while_writing_complete_a_rerun_equals_a_clean_run":
        "a kill while _COMPLETE is written; the fast tier keeps the kill while the last table is written",
    # quilt updates: the fast tier keeps the chain-of-updates parity
    "test_quilts_increment.py::test_update_keeps_the_old_page_of_a_doc_id_and_may_change_c_theta_phi": "an edge case of updates",
    "test_quilts_increment.py::test_update_breaks_ties_on_the_smallest_doc_id_not_on_arrival": "",
    "test_quilts_increment.py::test_an_update_with_no_new_pages_keeps_the_previous_results": "",
    "test_quilts_increment.py::test_an_update_killed_leaves_the_previous_run_alone_and_resumes": "",
    "test_quilts_increment.py::test_an_update_recomputes_old_pages_whose_patch_grams_change_or_that_are_patchy_and_gain_sources": "",
    "test_quilts_increment.py::test_updates_add_layers_of_grams_merged_without_a_shuffle_and_rewrite_an_older_table_once": "",
    "test_quilts_increment.py::test_a_repeated_doc_id_keeps_the_earliest_runs_record_in_an_update_and_a_fresh_run": "",
    # near-duplicate updates: the fast tier keeps the lsh chain and the refusals
    "test_neardup_update.py::test_a_chain_in_crawl_order_equals_a_fresh_run_over_the_union[combined-sites]":
        "both of Henzinger's bucket families and the same-site split in one chain",
    "test_neardup_update.py::test_a_late_older_copy_of_a_kept_page_is_dropped_and_the_kept_page_stays": "an edge case of updates",
    "test_neardup_update.py::test_buckets_taken_past_the_cap_withdraw_the_old_pairs_a_fresh_run_does_not_list": "",
    "test_neardup_update.py::test_a_repeated_doc_id_keeps_the_earliest_runs_record_in_an_update_and_a_fresh_run": "",
    # whole runs: each of these jobs keeps its parity with its reference in the fast tier
    "test_api.py": "the Python API against the command on renamed columns",
    "test_quilts_job.py::test_find_quilts_on_renamed_columns_equals_the_command_line": "",
    "test_reuse_cli.py": "reuse's console round trip; the fast tier checks reuse against its reference",
    "test_phrases_job.py::test_planted_slice_and_dice_sites_head_the_monster_list": "the phrase job on a crawl with planted sites",
    "test_phrases_job.py::test_outputs_tables_figures_and_metrics": "",
    "test_phrases_job.py::test_rerun_of_a_complete_output_does_nothing": "",
    "test_readme.py::test_every_other_analysis_runs_as_written_on_the_ingested_documents": "the README's \"The other analyses\"",
    "test_readme.py::test_finding_quilts_in_your_crawl_runs_as_written":
        "the README's \"Finding quilts in your crawl\"; the fast tier runs its quick start and Python example",
    "test_docs_commands.py": "every command line the docs show, run as written",
    "test_empty_inputs.py": "empty segments through fresh runs and updates",
    "test_hostile_tables.py::test_every_analysis_runs_through_a_directory_of_hostile_inputs":
        "every analysis through it; the fast tier reads each kind of hostile table",
    "test_hostile_inputs.py::test_two_runs_into_one_output_one_completes_the_other_fails_with_one_line[local-lock-after-ingest]":
        "the other offsets of the second run; the fast tier keeps at-once and after-grams with the local lock",
    "test_hostile_inputs.py::test_two_runs_into_one_output_one_completes_the_other_fails_with_one_line[local-lock-after-quilts-table]": "",
    "test_hostile_inputs.py::test_two_runs_into_one_output_one_completes_the_other_fails_with_one_line[object-store-no-lock-*]": "",
    "test_bad_input.py::test_a_100_mb_page_and_a_bomb_inside_a_spark_run_stay_bounded":
        "a 100 MB page and a 1 GB bomb through Spark; the fast tier checks the reader's cap",
    "test_console.py::test_non_ascii_paths_under_a_c_locale_are_read_and_written": "a real console run under LC_ALL=C",
    "test_console.py::test_ctrl_c_and_sigterm_stop_with_one_line_and_the_same_command_resumes":
        "a real SIGINT, SIGTERM and resume; the fast tier checks the interrupt's handling in process",
    "test_jvmclasses.py::test_real_jvms_write_the_archive_once_then_map_it": "three real JVM starts",
}

DEPLOY: dict[str, str] = {
    "test_deploy_cluster.py::test_standalone_cluster_equals_local_mode": "every job of jobs/ on a standalone cluster",
    "test_deploy_wheel.py::test_wheel_and_sdist_carry_the_configs_and_the_sample": "the built and installed wheel",
    "test_deploy_wheel.py::test_bundled_sample_is_the_installed_packages": "",
    "test_deploy_wheel.py::test_demo_runs_from_the_installed_wheel": "",
    "test_deploy_wheel.py::test_spark_submit_job_file_with_the_installed_wheel": "",
    "test_deploy_airflow.py": "the Airflow DAG",
    "test_deploy_docker_run.py": "the Docker image built and run",
}

TIERS = {"extended": EXTENDED, "deploy": DEPLOY}


def pattern(entry: str) -> re.Pattern[str]:
    """The node ids (without their ``tests/`` folder) an entry names: itself, and what it
    contains (a module's tests, a test's parameters); ``*`` matches any text."""
    return re.compile("".join(".*" if part == "*" else re.escape(part) for part in re.split(r"(\*)", entry))
                      + r"(?=$|::|\[)")


PATTERNS = {tier: [(entry, pattern(entry)) for entry in entries] for tier, entries in TIERS.items()}


def local_id(nodeid: str) -> str:
    """``tests/test_x.py::test_y[z]`` -> ``test_x.py::test_y[z]``, as the table names it."""
    module, sep, rest = nodeid.partition("::")
    return module.rsplit("/", 1)[-1] + sep + rest


def tier_of(nodeid: str) -> str:
    """``extended``, ``deploy`` or ``fast``: the tier the table puts a test in."""
    name = local_id(nodeid)
    for tier, patterns in PATTERNS.items():
        if any(p.match(name) for _, p in patterns):
            return tier
    return "fast"


# The JVM options of every test-sized Spark JVM (the tests' session, and the spark-submit runs of
# the end-to-end, wheel, cluster and Airflow tests): the client JIT only and the serial GC cost
# less than they save on runs of seconds, and the optimising compiler's threads would take a core
# of a 2-core machine. Results do not depend on them.
SHORT_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

# Shuffle settings under which every job must write the same bytes as under the session's
# (4 partitions, adaptive execution on); ``reverse`` also reverses the order of the inputs.
# 1 partition puts everything in one task; 7 and 29 without AQE give other bucket counts, empty
# partitions and (29) far more tasks than cores. Their ids name them in EXTENDED.
ONE = pytest.param({"spark.sql.shuffle.partitions": "1"}, False, id="1-partition")
SEVEN = pytest.param({"spark.sql.shuffle.partitions": "7", "spark.sql.adaptive.enabled": "false"}, True,
                     id="7-partitions-no-aqe-reversed")
MANY = {"spark.sql.shuffle.partitions": "29", "spark.sql.adaptive.enabled": "false"}
# The quilt job (the centre): 7 partitions in the fast tier, 1 and 29 in the extended tier.
PARTITIONINGS = [ONE, SEVEN, pytest.param(MANY, False, id="29-partitions-no-aqe")]
# Every other job: 5 partitions with the inputs reversed, in the extended tier (the single-task
# edge case and 29 partitions are the quilt job's, whose dataflow the sweep shares). 5: another
# bucket count than the session's 4 (and prime), more tasks than cores, few enough tasks that
# the Python round trip of each does not dominate.
SEVERAL = {"spark.sql.shuffle.partitions": "5", "spark.sql.adaptive.enabled": "false"}
JOB_PARTITIONINGS = [pytest.param(SEVERAL, True, id="5-partitions-no-aqe-reversed")]


def budgets(fast: int, more: int) -> list:
    """Hypothesis budgets for a Spark-level property, ids ``{fast}-examples`` and
    ``{more}-examples`` (parametrize a test with it and pass the value to ``examples``). The
    larger one belongs in the extended tier: name it in EXTENDED."""
    return [pytest.param(fast, id=f"{fast}-examples"), pytest.param(more, id=f"{more}-examples")]


def parameter_cases(parameters: list[dict], fast: int, more: int, more_only: tuple[int, ...] = ()) -> list:
    """(params, budget) cases of a Spark property over settings: each setting with ``fast``
    examples (unless its index is in ``more_only``) and with ``more``; ids name the setting and
    the budget (``k2-m3-...-3-examples``). With ``more == fast`` each setting runs once
    (derandomized, a second run would draw the same examples). EXTENDED names the cases that
    are not in the fast tier."""
    cases = []
    for i, params in enumerate(parameters):
        name = "-".join(f"{k}{v}" for k, v in params.items())
        chosen = [more] if i in more_only or more == fast else [fast, more]
        for budget in chosen:
            cases.append(pytest.param(params, budget, id=f"{name}-{budget}-examples"))
    return cases


def examples(n: int) -> settings:
    """Derandomized settings with ``n`` examples and no deadline (Spark runs take seconds).

    No shrinking: each shrink step is another Spark run, so a failure would take many minutes to
    report; the failing example is printed as generated (each packs small corpora already).
    """
    return settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                    database=None, phases=(Phase.explicit, Phase.generate))


class Partitioning:
    """Apply a PARTITIONINGS entry to the session for the duration of a ``with`` block."""

    def __init__(self, spark, conf: dict[str, str]):
        self.spark, self.conf = spark, conf
        self.before = {k: spark.conf.get(k) for k in ("spark.sql.shuffle.partitions", "spark.sql.adaptive.enabled")}

    def __enter__(self):
        for key, value in self.conf.items():
            self.spark.conf.set(key, value)
        return self

    def __exit__(self, *exc):
        for key, value in self.before.items():
            self.spark.conf.set(key, value)
        return False
