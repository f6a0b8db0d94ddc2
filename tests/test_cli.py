"""The command line: configuration layering, fail-fast errors, and the real entry points."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from quiltdetect.cli import build_parser, main, quilt_config
from quiltdetect.common.config import ConfigError
from quiltdetect.quilts.config import QuiltConfig

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"


def test_conf_file_equals_the_dataclass_defaults():
    shipped = yaml.safe_load((REPO / "conf" / "quilts.yaml").read_text())
    assert shipped == dataclasses.asdict(QuiltConfig())


def test_layering_defaults_file_options_and_set(tmp_path):
    conf = tmp_path / "c.yaml"
    conf.write_text("k: 7\nm: 80\ntheta: 0.4\nspark:\n  spark.sql.shuffle.partitions: 8\n")
    args = build_parser().parse_args(
        ["quilts", "--input", str(SAMPLE), "--output", str(tmp_path / "o"), "--config", str(conf),
         "-m", "60", "--set", "c=3", "--set", "spark.executor.memory=2g", "--foreign", "domain"]
    )
    cfg = quilt_config(args)
    assert (cfg.k, cfg.m, cfg.c, cfg.theta, cfg.foreign) == (7, 60, 3, 0.4, "domain")
    assert cfg.spark["spark.sql.shuffle.partitions"] == 8 and cfg.spark["spark.executor.memory"] == "2g"
    assert cfg.spark["spark.master"] == "local[*]"


def test_config_files_layer_in_order(tmp_path):
    shared, task = tmp_path / "cluster.yaml", tmp_path / "task.yaml"
    shared.write_text("k: 7\nwrite_rejects: true\nspark:\n  spark.sql.shuffle.partitions: 400\n  spark.log.level: INFO\n")
    task.write_text("k: 6\nspark:\n  spark.sql.shuffle.partitions: 8\n")
    args = build_parser().parse_args(
        ["quilts", "--input", str(SAMPLE), "--output", str(tmp_path / "o"), "--config", str(shared),
         "--config", str(task)])
    cfg = quilt_config(args)
    assert (cfg.k, cfg.write_rejects) == (6, True)
    assert cfg.spark["spark.sql.shuffle.partitions"] == 8 and cfg.spark["spark.log.level"] == "INFO"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--theta", "1.5"], "--theta must be a number in [0, 1]"),
        (["-m", "1"], "-m must be an integer >= 2"),
        (["-k", "0"], "-k must be an integer >= 1"),
        (["--set", "bogus=1"], "unknown option 'bogus'"),
        (["--set", "nokey"], "--set expects key=value"),
        (["--config", "/nonexistent.yaml"], "--config /nonexistent.yaml: no such file"),
    ],
)
def test_bad_options_name_what_to_fix(tmp_path, argv, message):
    args = build_parser().parse_args(["quilts", "--input", str(SAMPLE), "--output", str(tmp_path / "o"), *argv])
    with pytest.raises(ConfigError) as err:
        quilt_config(args)
    assert message in str(err.value)


def test_missing_input_and_existing_output_fail_before_spark(tmp_path, capsys):
    assert main(["quilts", "--input", str(tmp_path / "nothing-here*.warc.gz"), "--output", str(tmp_path / "o")]) == 2
    assert "no such file, or no files match" in capsys.readouterr().err
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "x").write_text("old")
    assert main(["quilts", "--input", str(SAMPLE), "--output", str(tmp_path / "o")]) == 2
    assert "exists and is not empty" in capsys.readouterr().err
    assert main(["quilts", "--output", str(tmp_path / "p")]) == 2
    assert "no input" in capsys.readouterr().err


def _rows(path: Path) -> list[dict]:
    table = pq.read_table(path).to_pylist()
    return sorted(table, key=lambda r: r["doc_id"])


@pytest.mark.slow
def test_console_command_and_spark_submit_give_the_same_quilts(tmp_path):
    """The real entry points: `quiltdetect quilts` (local, streamed reads) and `spark-submit
    jobs/find_quilts.py` (binaryFile reads of file:// URIs, as for s3a://) on the same input."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    bin_dir = Path(sys.executable).parent
    inputs = ["--input", str(SAMPLE / "synthetic-quilts.warc.gz"), "--input", str(SAMPLE / "clueweb-quirk.warc.gz")]
    local = subprocess.run(
        [str(bin_dir / "quiltdetect"), "quilts", *inputs, "--output", str(tmp_path / "local"),
         "--master", "local[2]", "--set", "spark.sql.shuffle.partitions=4", "--top", "3"],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert local.returncode == 0, local.stderr[-3000:]
    assert "top 3 quilts" in local.stdout and "<- http" in local.stdout
    submitted = subprocess.run(
        [str(bin_dir / "spark-submit"), "--master", "local[2]", "--conf", "spark.ui.showConsoleProgress=false",
         str(REPO / "jobs" / "find_quilts.py"),
         "--input", "file://" + str(SAMPLE / "synthetic-quilts.warc.gz"),
         "--input", "file://" + str(SAMPLE / "clueweb-quirk.warc.gz"),
         "--output", "file://" + str(tmp_path / "submitted"),
         "--set", "hadoop_reader=true", "--set", "spark.sql.shuffle.partitions=7"],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    a, b = _rows(tmp_path / "local" / "quilts"), _rows(tmp_path / "submitted" / "quilts")
    assert a and a == b
    metrics = json.loads((tmp_path / "submitted" / "metrics.json").read_text())
    assert metrics["stages"]["quilts"]["quilts"] == len(a)
    assert yaml.safe_load((tmp_path / "submitted" / "config.yaml").read_text())["hadoop_reader"] is True
