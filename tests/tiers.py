"""The test tiers, in one place.

* fast (the README's ``pytest``): every layer once — kernel, parity of each Spark path with a
  small derandomized Hypothesis budget, the quilt job's determinism over another partitioning,
  one end-to-end run of the console command and of ``spark-submit``, the review tool,
  reliability (kill points, resume, retry, hostile input).
* ``extended`` (``pytest -m extended``, run by ``.ci/run`` after the fast tier): the same
  properties with larger budgets, the quilt job's determinism at 1 and 29 partitions and every
  other job's at 5 with the inputs reversed; and, to keep the fast tier within its 6 minutes,
  six edge cases of quilt updates (the kept old page, ties by doc_id, an empty segment, a
  killed update, which old pages are recomputed, the gram layers and an older table rewritten
  once: the fast tier keeps the chain-of-updates parity), near-duplicate updates but the lsh
  chain and the refusals, a kill while ``_COMPLETE`` is written (the fast tier keeps the kill while the last
  table is written), the reuse console round
  trip (the fast tier keeps reuse's parity with its reference), the second setting of the
  phrases parity (ip servers, no collapse, per-count cover samples), the quilt parity's
  second and third examples per setting (each example is 8-20 corpora in one run), the phrase
  job's run on a crawl with planted sites and the README's "The other analyses" commands (each
  of those jobs keeps its parity with its reference in the fast tier).
* ``deploy`` (``pytest -m deploy``, needs the ``cluster`` and ``airflow`` extras): every job on a
  standalone cluster, and the Airflow DAG.

Every tier runs in a worker process per core (pytest-xdist, ``-n auto``; ``conftest.py`` says how
tests are shared out), so a tier's time is about its longest worker's.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings

extended = pytest.mark.extended

# The JVM options of every test-sized Spark JVM (the tests' session, and the spark-submit runs of
# the end-to-end, wheel, cluster and Airflow tests): the client JIT only and the serial GC cost
# less than they save on runs of seconds (about 30 % per job; the optimising compiler's threads
# would take a core of this 2-core machine). Results do not depend on them.
SHORT_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

# Shuffle settings under which every job must write the same bytes as under the session's
# (4 partitions, adaptive execution on); ``reverse`` also reverses the order of the inputs.
# 1 partition puts everything in one task; 7, 11 and 29 without AQE give other bucket counts,
# empty partitions and (11, 29) far more tasks than cores.
ONE = pytest.param({"spark.sql.shuffle.partitions": "1"}, False, id="1-partition", marks=extended)
SEVEN = pytest.param({"spark.sql.shuffle.partitions": "7", "spark.sql.adaptive.enabled": "false"}, True,
                     id="7-partitions-no-aqe-reversed")
MANY = {"spark.sql.shuffle.partitions": "29", "spark.sql.adaptive.enabled": "false"}
# The quilt job (the centre): 7 partitions in the fast tier, 1 and 29 in the extended tier.
PARTITIONINGS = [ONE, SEVEN, pytest.param(MANY, False, id="29-partitions-no-aqe", marks=extended)]
# Every other job: 5 partitions with the inputs reversed, in the extended tier (the fast tier
# checks each against its in-memory reference at 4 partitions instead; the single-task edge case
# and 29 partitions are the quilt job's, whose dataflow the sweep shares). 5: another bucket
# count than the session's 4 (and prime), more tasks than cores; 11 took each of the five jobs
# 32-53 s, every extra task a Python round trip.
SEVERAL = {"spark.sql.shuffle.partitions": "5", "spark.sql.adaptive.enabled": "false"}
JOB_PARTITIONINGS = [pytest.param(SEVERAL, True, id="5-partitions-no-aqe-reversed", marks=extended)]


def budgets(fast: int, more: int) -> list:
    """Hypothesis budgets for a Spark-level property: ``fast`` examples in the default run,
    ``more`` in the extended tier (parametrize a test with it and pass the value to ``examples``)."""
    return [pytest.param(fast, id=f"{fast}-examples"),
            pytest.param(more, id=f"{more}-examples", marks=extended)]


def parameter_cases(parameters: list[dict], extended_only: tuple[int, ...], fast: int, more: int) -> list:
    """(params, budget) cases of a Spark property over settings: each setting with ``fast``
    examples in the fast tier (unless its index is in ``extended_only``) and ``more`` in the
    extended tier; ids name the setting and the budget. With ``more == fast`` a setting of the
    fast tier is not run again in the extended tier (derandomized, it would draw the same
    examples)."""
    cases = []
    for i, params in enumerate(parameters):
        name = "-".join(f"{k}{v}" for k, v in params.items())
        chosen = budgets(fast, more)[1:] if i in extended_only else budgets(fast, more)[:1 if more == fast else 2]
        for budget in chosen:
            cases.append(pytest.param(params, *budget.values, id=f"{name}-{budget.id}", marks=budget.marks))
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
