"""Deterministic, atomic and resumable runs of the quilt job (and retried task failures)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from quiltdetect.common.config import ConfigError, merge_settings
from quiltdetect.quilts import bucketed, job
from quiltdetect.quilts.config import QuiltConfig

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
INPUTS = [str(SAMPLE / "synthetic-quilts.warc.gz"), str(SAMPLE / "clueweb-quirk.warc.gz"), str(SAMPLE / "warcfile.warc.gz")]


def config(out: Path, **extra) -> QuiltConfig:
    return merge_settings(QuiltConfig, {"inputs": INPUTS, "output": str(out), "top": 3, **extra}).validate()


def table_bytes(path: Path, key: str = "doc_id") -> bytes:
    """A table's rows sorted by key, serialised: equal bytes = identical content."""
    rows = sorted(pq.read_table(path).to_pylist(), key=lambda r: r[key])
    return json.dumps(rows, sort_keys=True, ensure_ascii=False, default=str).encode()


@pytest.fixture(scope="module")
def baseline(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("baseline") / "run"
    job.run(spark, config(out))
    return out


def test_same_bytes_for_any_partitioning_and_input_order(spark, tmp_path, baseline):
    reference = {t: table_bytes(baseline / t) for t in ("quilts", "doc_stats", "docs")}
    assert b"sources" in reference["quilts"]
    settings = [
        {"spark.sql.shuffle.partitions": "1"},
        {"spark.sql.shuffle.partitions": "7"},
        {"spark.sql.shuffle.partitions": "64", "spark.sql.adaptive.enabled": "false"},
    ]
    before = {k: spark.conf.get(k) for k in ("spark.sql.shuffle.partitions", "spark.sql.adaptive.enabled")}
    try:
        for i, conf in enumerate(settings):
            for key, value in conf.items():
                spark.conf.set(key, value)
            cfg = config(tmp_path / f"p{i}")
            cfg.inputs = list(reversed(cfg.inputs)) if i % 2 else cfg.inputs
            job.run(spark, cfg)
            for table, expected in reference.items():
                assert table_bytes(tmp_path / f"p{i}" / table) == expected, (conf, table)
    finally:
        for key, value in before.items():
            spark.conf.set(key, value)


def test_complete_marker_and_rerun_does_nothing(spark, baseline):
    done = json.loads((baseline / "_COMPLETE").read_text())
    assert done["job"] == "quilts" and done["config"]["k"] == 5
    assert done["metrics"]["stages"]["quilts"]["quilts"] > 0
    assert not (baseline / "_quiltdetect" / "tmp").exists()
    again = job.run(spark, config(baseline))
    assert again.metrics.stages["resume"]["complete_already"] is True
    assert again.top_quilts


def test_new_parameters_reuse_docs_and_grams_and_equal_a_fresh_run(spark, tmp_path, baseline):
    resumed = tmp_path / "resumed"
    # copy the finished baseline, then change m: docs/ and the k=5 grams are reused
    subprocess.run(["cp", "-r", str(baseline), str(resumed)], check=True)
    result = job.run(spark, config(resumed, m=20))
    assert result.metrics.stages["ingest"]["reused"] is True
    assert result.metrics.stages["grams"]["reused"] is True
    fresh = tmp_path / "fresh"
    job.run(spark, config(fresh, m=20))
    for table in ("quilts", "doc_stats"):
        assert table_bytes(resumed / table) == table_bytes(fresh / table)
    assert json.loads((resumed / "_COMPLETE").read_text())["config"]["m"] == 20


def test_refuses_to_mix_outputs_of_other_inputs(spark, tmp_path, baseline):
    mixed = tmp_path / "mixed"
    subprocess.run(["cp", "-r", str(baseline), str(mixed)], check=True)
    cfg = config(mixed)
    cfg.inputs = INPUTS[:1]
    with pytest.raises(ConfigError, match="other inputs"):
        job.run(spark, cfg)
    cfg.overwrite = True
    job.run(spark, cfg)
    assert json.loads((mixed / "_COMPLETE").read_text())["config"]["inputs"] == INPUTS[:1]


def test_a_failing_task_is_retried_without_changing_results(spark, tmp_path, baseline, monkeypatch):
    """The grouped cover UDF fails once in its first task; Spark retries it (local[2,2])."""
    flag = tmp_path / "failed-once"
    original = bucketed._cover_bucket

    def flaky(table):
        if not flag.exists():
            flag.write_text("x")
            raise RuntimeError("injected executor failure")
        return original(table)

    monkeypatch.setattr(bucketed, "_cover_bucket", flaky)
    job.run(spark, config(tmp_path / "retried"))
    assert flag.exists()
    assert table_bytes(tmp_path / "retried" / "quilts") == table_bytes(baseline / "quilts")


@pytest.mark.slow
def test_killed_driver_leaves_nothing_that_looks_complete_and_rerun_resumes(tmp_path, baseline):
    out = tmp_path / "killed"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    argv = [str(Path(sys.executable).parent / "quiltdetect"), "quilts", *[a for i in INPUTS for a in ("--input", i)],
            "--output", str(out), "--master", "local[2]", "--set", "spark.sql.shuffle.partitions=4"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    marker = out / "_quiltdetect" / "stages" / "ingest.json"
    deadline = time.time() + 400
    while not marker.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert marker.exists(), "the run ended before it could be killed mid-way"
    assert not (out / "_COMPLETE").exists()
    assert not (out / "quilts").exists() or not (out / "_quiltdetect" / "stages" / "quilts.json").exists()
    rerun = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["stages"]["ingest"].get("reused") is True
    assert table_bytes(out / "quilts") == table_bytes(baseline / "quilts")
