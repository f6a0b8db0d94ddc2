"""Deterministic, atomic and resumable runs of the quilt job (and retried task failures), and the
end-to-end run of its console command and spark-submit entry point."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from test_console import foreign_lines
from tiers import PARTITIONINGS, SHORT_JVM, Partitioning

from quiltdetect.common import fs
from quiltdetect.common.config import ConfigError, merge_settings
from quiltdetect.common.session import QUIET_LOGGERS
from quiltdetect.quilts import cover
from quiltdetect.quilts.config import QuiltConfig
from quiltdetect.quilts.job import QuiltsJob

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
    QuiltsJob.run(spark, config(out))
    return out


@pytest.mark.parametrize(("partitioning", "reverse"), PARTITIONINGS)
def test_same_bytes_for_any_partitioning_and_input_order(spark, tmp_path, baseline, partitioning, reverse):
    out = tmp_path / "run"
    cfg = config(out)
    if reverse:  # and read as spark-submit on a cluster reads s3a:// files: Spark's binaryFile source
        cfg.inputs, cfg.hadoop_reader = ["file://" + i for i in reversed(cfg.inputs)], True
    with Partitioning(spark, partitioning):
        QuiltsJob.run(spark, cfg)
    for table in ("quilts", "doc_stats", "docs"):
        expected = table_bytes(baseline / table)
        assert table != "quilts" or b"sources" in expected
        assert table_bytes(out / table) == expected, (partitioning, table)


def test_complete_marker_and_rerun_does_nothing(spark, baseline):
    done = json.loads((baseline / "_COMPLETE").read_text())
    assert done["job"] == "quilts" and done["config"]["k"] == 5
    assert done["metrics"]["stages"]["quilts"]["quilts"] > 0
    assert not (baseline / "_quiltdetect" / "tmp").exists()
    again = QuiltsJob.run(spark, config(baseline))
    assert again.metrics.stages["resume"]["complete_already"] is True
    assert again.report["top_quilts"]


def test_new_parameters_reuse_docs_and_grams_and_equal_a_fresh_run(spark, tmp_path, baseline):
    resumed = tmp_path / "resumed"
    # copy the finished baseline, then change m: docs/ and the k=5 grams are reused
    subprocess.run(["cp", "-r", str(baseline), str(resumed)], check=True)
    result = QuiltsJob.run(spark, config(resumed, m=20))
    assert result.metrics.stages["ingest"]["reused"] is True
    assert result.metrics.stages["grams"]["reused"] is True
    fresh = tmp_path / "fresh"
    QuiltsJob.run(spark, config(fresh, m=20))
    for table in ("quilts", "doc_stats"):
        assert table_bytes(resumed / table) == table_bytes(fresh / table)
    assert json.loads((resumed / "_COMPLETE").read_text())["config"]["m"] == 20


def test_refuses_to_mix_outputs_of_other_inputs(spark, tmp_path, baseline):
    mixed = tmp_path / "mixed"
    subprocess.run(["cp", "-r", str(baseline), str(mixed)], check=True)
    cfg = config(mixed)
    cfg.inputs = INPUTS[:1]
    with pytest.raises(ConfigError, match="other inputs"):
        QuiltsJob.run(spark, cfg)
    cfg.overwrite = True
    QuiltsJob.run(spark, cfg)
    assert json.loads((mixed / "_COMPLETE").read_text())["config"]["inputs"] == INPUTS[:1]


def test_a_failing_task_is_retried_without_changing_results(spark, tmp_path, baseline, monkeypatch):
    """The grouped cover UDF fails once in its first task; Spark retries it (local[1,2]: one retry)."""
    flag = tmp_path / "failed-once"
    original = cover._cover_bucket

    def flaky(table):
        if not flag.exists():
            flag.write_text("x")
            raise RuntimeError("injected executor failure")
        return original(table)

    monkeypatch.setattr(cover, "_cover_bucket", flaky)
    QuiltsJob.run(spark, config(tmp_path / "retried"))
    assert flag.exists()
    assert table_bytes(tmp_path / "retried" / "quilts") == table_bytes(baseline / "quilts")


class Killed(BaseException):
    """Stands for SIGKILL at an exact point: no ``except Exception`` catches it and nothing of
    the run after it happens (the JVM goes on, as an executor would after its driver died)."""


def _killed_then_rerun(spark, out: Path) -> dict:
    with pytest.raises(Killed):
        QuiltsJob.run(spark, config(out))
    assert not (out / "_COMPLETE").exists()
    return QuiltsJob.run(spark, config(out)).metrics.stages


def _assert_equals_baseline(out: Path, baseline: Path) -> None:
    assert (out / "_COMPLETE").exists()
    for table in ("quilts", "doc_stats", "docs"):
        assert table_bytes(out / table) == table_bytes(baseline / table), table
    done, clean = (json.loads((d / "_COMPLETE").read_text()) for d in (out, baseline))
    assert done["config_key"] == clean["config_key"] and done["inputs_key"] == clean["inputs_key"]
    leftovers = [p.name for p in out.rglob("*") if p.name.endswith(".partial") or p.name == "_temporary"]
    assert not leftovers and not (out / "_quiltdetect" / "tmp").exists(), leftovers


def test_killed_while_writing_the_last_table_a_rerun_equals_a_clean_run(spark, tmp_path, baseline, monkeypatch):
    """Killed while doc_stats/ is being written: its tasks have left part files in Spark's
    ``_temporary`` and no ``_SUCCESS``, nothing is moved into place. The rerun reuses the
    finished stages, throws the half-written table away and publishes the clean run's tables."""
    original = fs.replace

    def dies_in_last_table(spark_, source: str, target: str) -> None:
        if not target.endswith("/doc_stats"):
            return original(spark_, source, target)
        written = Path(fs.local_path(source))
        (written / "_SUCCESS").unlink()
        pending = written / "_temporary" / "0" / "task_0"
        pending.mkdir(parents=True)
        for part in sorted(written.glob("part-*"))[::2]:
            part.rename(pending / part.name)
        raise Killed

    monkeypatch.setattr(fs, "replace", dies_in_last_table)
    out = tmp_path / "run"
    with pytest.raises(Killed):
        QuiltsJob.run(spark, config(out))
    assert (out / "quilts").exists() and not (out / "doc_stats").exists() and not (out / "_COMPLETE").exists()
    monkeypatch.setattr(fs, "replace", original)
    stages = QuiltsJob.run(spark, config(out)).metrics.stages
    assert stages["ingest"]["reused"] is True and stages["grams"]["reused"] is True
    _assert_equals_baseline(out, baseline)


def test_killed_while_writing_complete_a_rerun_equals_a_clean_run(spark, tmp_path, baseline, monkeypatch):
    """Killed halfway through writing _COMPLETE: the marker is written beside its place and
    renamed over it, so a kill leaves a half ``._COMPLETE.partial`` and no ``_COMPLETE``, never a
    truncated marker that a reader (the review tool, an Airflow sensor) would take as done."""
    original = os.replace

    def dies_in_complete(source, target, *args, **kwargs):
        if not str(target).endswith("/_COMPLETE"):
            return original(source, target, *args, **kwargs)
        with open(source, "r+b") as fh:
            fh.truncate(os.path.getsize(source) // 2)
        raise Killed

    monkeypatch.setattr(os, "replace", dies_in_complete)
    out = tmp_path / "run"
    with pytest.raises(Killed):
        QuiltsJob.run(spark, config(out))
    assert (out / "doc_stats").exists() and not (out / "_COMPLETE").exists() and (out / "._COMPLETE.partial").exists()
    monkeypatch.setattr(os, "replace", original)
    stages = QuiltsJob.run(spark, config(out)).metrics.stages
    assert stages["ingest"]["reused"] is True
    _assert_equals_baseline(out, baseline)
    # a truncated _COMPLETE (from a file system without atomic rename) is not taken as done either
    whole = (out / "_COMPLETE").read_text()
    (out / "_COMPLETE").write_text(whole[: len(whole) // 2])
    assert "complete_already" not in QuiltsJob.run(spark, config(out)).metrics.stages.get("resume", {})
    _assert_equals_baseline(out, baseline)


def test_small_files_are_written_whole_through_hadoop_too(spark, tmp_path, monkeypatch):
    """The Hadoop branch of ``fs.write_text`` (s3a://, hdfs://) also writes beside and renames."""
    monkeypatch.setattr(fs, "is_local", lambda uri: False)
    target = f"file://{tmp_path}/marker.json"
    fs.write_text(spark, target, "first")
    fs.write_text(spark, target, '{"second": true}')
    assert (tmp_path / "marker.json").read_text() == '{"second": true}'
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".crc")) == ["marker.json"]


@pytest.mark.parametrize("hadoop", [False, True], ids=["local", "hadoop"])
def test_a_table_made_of_other_tables_files_holds_their_rows_and_leaves_them_as_they_were(
        spark, tmp_path, monkeypatch, hadoop):
    """``OutputFolder.concat_tables`` (an update's docs/: the previous docs/ files and the
    segment's) links or copies the files, undecoded, renames the table into place whole and
    leaves the sources readable, locally and through Hadoop (s3a://, hdfs://)."""
    from quiltdetect.common.folder import OutputFolder

    if hadoop:
        monkeypatch.setattr(fs, "is_local", lambda uri: False)
    root = f"file://{tmp_path}" if hadoop else str(tmp_path)
    a = spark.createDataFrame([(i, f"a{i}") for i in range(5)], "doc_key long, text string")
    b = spark.createDataFrame([(i, f"b{i}") for i in range(5, 8)], "doc_key long, text string")
    a.repartition(3).write.parquet(str(tmp_path / "a"))
    b.write.parquet(str(tmp_path / "b"))
    out = OutputFolder(spark, root + "/out", tag="t")
    table = out.concat_tables([root + "/a", root + "/b"], "docs")
    expected = sorted((i, f"a{i}") for i in range(5)) + [(i, f"b{i}") for i in range(5, 8)]
    assert sorted(tuple(r) for r in table.collect()) == expected
    assert (tmp_path / "out" / "docs" / "_SUCCESS").exists()
    assert not [p for p in (tmp_path / "out").rglob("*") if "_quiltdetect" in p.parts and p.is_file()]
    assert sorted(tuple(r) for r in spark.read.parquet(str(tmp_path / "a")).collect()) == expected[:5]


@pytest.mark.e2e
def test_console_command_killed_then_spark_submit_resumes_to_the_baseline(tmp_path, baseline):
    """The real entry points, in the only subprocess runs of the fast tier.

    `quiltdetect quilts` (local, streamed reads) is killed with SIGKILL once ingestion finished:
    nothing looks complete. `spark-submit jobs/find_quilts.py` into the same output (other
    shuffle partitions) resumes it: reuses docs/, prints the top quilts, and equals the
    in-process baseline. (Spark's binaryFile reads, as spark-submit on a cluster does for s3a://,
    are checked in process by the reversed-input partitioning test above.)
    """
    # Both runs as a user types them: in their working directory, with relative paths.
    (tmp_path / "crawl").mkdir()
    for path in INPUTS:
        shutil.copy(path, tmp_path / "crawl")
    out = tmp_path / "out" / "console"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    bin_dir = Path(sys.executable).parent
    inputs = [a for i in INPUTS for a in ("--input", f"crawl/{Path(i).name}")]
    argv = [str(bin_dir / "quiltdetect"), "quilts", *inputs,
            "--output", "out/console", "--master", "local[2]", "--set", "spark.sql.shuffle.partitions=4", "--top", "3"]
    console_err = tmp_path / "console.err"
    with console_err.open("w") as err:
        proc = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err,
                                start_new_session=True)
    marker = out / "_quiltdetect" / "stages" / "ingest.json"
    deadline = time.time() + 400
    while not marker.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert marker.exists(), "the run ended before it could be killed mid-way"
    # Only the project's own lines: the JVM's start-up lines are hidden unless -v (issue 73)
    said = console_err.read_text()
    assert not foreign_lines(said) and "quilts: ingest - " in said, said
    assert not (out / "_COMPLETE").exists()
    assert not (out / "quilts").exists() or not (out / "_quiltdetect" / "stages" / "quilts.json").exists()

    submitted = subprocess.run(
        [str(bin_dir / "spark-submit"), "--master", "local[2]", "--conf", "spark.ui.showConsoleProgress=false",
         "--conf", f"spark.driver.extraJavaOptions={SHORT_JVM}",
         str(REPO / "jobs" / "find_quilts.py"), *inputs, "--output", "out/console", "--top", "3",
         "--set", "spark.sql.shuffle.partitions=7"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    assert "top 3 quilts" in submitted.stdout and "<- http" in submitted.stdout
    # At the default log level, none of the warnings every run gave (session.QUIET_LOGGERS): the
    # gram table's bucketed write and the released checkpoints are in this run.
    noise = [line for line in submitted.stderr.splitlines()
             if any(f"WARN {name.rsplit('.', 1)[1]}:" in line for name in QUIET_LOGGERS)]
    assert not noise, noise
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["stages"]["ingest"].get("reused") is True
    assert table_bytes(out / "quilts") == table_bytes(baseline / "quilts")
    assert metrics["stages"]["quilts"]["quilts"] == len(pq.read_table(baseline / "quilts"))
    assert yaml.safe_load((out / "config.yaml").read_text())["spark"]["spark.sql.shuffle.partitions"] in (7, "7")
