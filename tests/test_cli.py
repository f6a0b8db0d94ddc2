"""The command line: configuration layering and fail-fast errors (the real entry points run in
test_reliability.py, killed and resumed)."""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path

import pytest
import yaml

from quiltdetect.cli import build_parser, main
from quiltdetect.common.config import ConfigError, shown_default
from quiltdetect.quilts.cli import quilt_config
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


def _subcommands(parser, prefix=()):
    """(argv prefix, parser) of every leaf subcommand."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix, parser
        return
    for name, sub in subs[0].choices.items():
        yield from _subcommands(sub, (*prefix, name))


def _config_of(argv: tuple[str, ...], args):
    """The configuration each subcommand runs with, built by the function its runner calls."""
    from quiltdetect.doctable.job import IngestConfig
    from quiltdetect.mwo.cli import MWO_OPTIONS
    from quiltdetect.mwo.config import MwoConfig
    from quiltdetect.neardup.cli import neardup_config
    from quiltdetect.options import config_from_args
    from quiltdetect.phrases.cli import phrases_config
    from quiltdetect.reuse.cli import reuse_config
    from quiltdetect.sweep.cli import sweep_config

    builders = {"quilts": quilt_config, "neardup": neardup_config, "phrases": phrases_config,
                "reuse": reuse_config, "sweep": sweep_config,
                "ingest": lambda a: config_from_args(IngestConfig, a, ("write_rejects",)),
                "mwo": lambda a: config_from_args(MwoConfig, a, MWO_OPTIONS)}
    return builders[argv[0]](args)


CONFIGURED = {"quilts", "ingest", "neardup", "phrases", "reuse", "mwo", "sweep"}


@pytest.mark.parametrize("argv", [argv for argv, _ in _subcommands(build_parser())
                                  if argv[0] in CONFIGURED and argv != ("mwo", "query")], ids=" ".join)
def test_defaults_shown_in_help_are_the_defaults_used(argv, tmp_path):
    """Every ``(default: X)`` in ``--help`` is what a run without that option uses, and no
    option of a config field states a default by hand (it would drift; issue 17)."""
    parser = dict(_subcommands(build_parser()))[argv]
    extra = ["--site", "a.example/"] if argv == ("reuse", "mutate-eval") else []
    args = build_parser().parse_args([*argv, "--input", str(SAMPLE), "--output", str(tmp_path / "o"), *extra])
    cfg = _config_of(argv, args)
    shown = 0
    for action in parser._actions:
        stated = re.findall(r"\(default:? ([^)]*)\)", action.help or "")
        field = getattr(action, "config_field", None)
        if field is None:
            assert not any(re.match(r"[-0-9.]", s) for s in stated), (argv, action.dest, action.help)
            continue
        assert stated == [shown_default(getattr(cfg, field))], (argv, action.dest, action.help)
        shown += 1
    assert shown >= 1 or argv == ("ingest",), argv  # ingest has only the shared options


@pytest.mark.parametrize("name", ["quilts", "ingest", "neardup", "phrases", "reuse", "mwo", "sweep"])
def test_conf_files_hold_the_dataclass_defaults(name):
    """conf/<job>.yaml documents the defaults: each value it names equals the config class's."""
    from quiltdetect.common.config import JobConfig
    from quiltdetect.mwo.config import MwoConfig
    from quiltdetect.neardup.config import NearDupConfig
    from quiltdetect.phrases.config import PhrasesConfig
    from quiltdetect.reuse.config import ReuseConfig
    from quiltdetect.sweep.config import SweepConfig

    cls = {"quilts": QuiltConfig, "ingest": JobConfig, "neardup": NearDupConfig, "phrases": PhrasesConfig,
           "reuse": ReuseConfig, "mwo": MwoConfig, "sweep": SweepConfig}[name]
    shipped = yaml.safe_load((REPO / "conf" / f"{name}.yaml").read_text())
    defaults = dataclasses.asdict(cls())
    assert {k: v for k, v in shipped.items()} == {k: defaults[k] for k in shipped}, name


def test_every_command_and_job_file_comes_from_the_registry():
    """The console command's subcommands are COMMANDS; jobs/ holds exactly the files JOB_FILES
    names, each calling ``run_job_file``, and each names a real command of the parser."""
    from quiltdetect.cli import COMMANDS, JOB_FILES

    parser = build_parser()
    subcommands = dict(_subcommands(parser))
    assert {argv[0] for argv in subcommands} == set(COMMANDS)
    files = {p.name for p in (REPO / "jobs").glob("*.py")}
    assert files == set(JOB_FILES)
    for name, command in JOB_FILES.items():
        assert "run_job_file(__file__)" in (REPO / "jobs" / name).read_text(), name
        assert any(argv[: len(command)] == command for argv in subcommands), (name, command)
