"""The command line: configuration layering and fail-fast errors (the real entry points run in
test_reliability.py, killed and resumed)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

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
