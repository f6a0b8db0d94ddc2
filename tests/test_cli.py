"""The command line: configuration layering and fail-fast errors (the real entry points run in
test_reliability.py, killed and resumed)."""

from __future__ import annotations

import argparse
import dataclasses
import re
import types
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
    assert "exists and is not a quiltdetect output" in capsys.readouterr().err
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
    from quiltdetect.ingest.job import IngestConfig
    from quiltdetect.mwo.config import MwoConfig
    from quiltdetect.neardup.cli import neardup_config
    from quiltdetect.options import config_from_args
    from quiltdetect.phrases.cli import phrases_config
    from quiltdetect.reuse.cli import reuse_config
    from quiltdetect.sweep.cli import sweep_config

    builders = {"quilts": quilt_config, "neardup": neardup_config, "phrases": phrases_config,
                "reuse": reuse_config, "sweep": sweep_config,
                "ingest": lambda a: config_from_args(IngestConfig, a),
                "mwo": lambda a: config_from_args(MwoConfig, a)}
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
def test_conf_files_are_generated_from_the_config_classes_and_hold_their_defaults(name):
    """conf/<job>.yaml is what ``python -m quiltdetect.conftemplates`` writes from the config
    class (each option declared once, on its field), and loads back to the class's defaults."""
    from quiltdetect.conftemplates import TEMPLATES, templates

    text = (REPO / "conf" / f"{name}.yaml").read_text(encoding="utf-8")
    assert text == templates()[f"{name}.yaml"], f"conf/{name}.yaml is stale: run python -m quiltdetect.conftemplates"
    cls = TEMPLATES[name][0]
    assert yaml.safe_load(text) == dataclasses.asdict(cls()), name


def test_every_option_is_declared_once_on_its_field_and_older_names_still_work():
    """Each command-line option of a config field comes from the field's declaration (no
    option tuples or add_argument calls beside it), and an older name (phrases' --server,
    ``server:`` in a file, ``server=`` in the API) sets the same field."""
    from quiltdetect.common.config import merge_settings, options_of
    from quiltdetect.conftemplates import TEMPLATES
    from quiltdetect.phrases.config import PhrasesConfig

    made = 0
    for argv, parser in _subcommands(build_parser()):
        if argv[0] not in TEMPLATES or argv == ("mwo", "query"):
            continue
        declared, defaults = options_of(TEMPLATES[argv[0]][0]), TEMPLATES[argv[0]][0]()
        for action in parser._actions:
            if action.dest in declared:  # an option of a config field: made from its declaration
                opt = declared[action.dest]
                assert tuple(action.option_strings) == opt.spellings(action.dest), (argv, action.dest)
                # a list typed as one text (--mutations add,delete): its choices are checked in validate
                one_text = isinstance(getattr(defaults, action.dest), list) and opt.action != "append"
                assert action.help.startswith(opt.help), (argv, action.dest)
                assert action.choices == (None if one_text else opt.choices), (argv, action.dest)
                made += 1
    assert made > 100
    old = build_parser().parse_args(["phrases", "--server", "host", "--input", "x", "--output", "o"])
    new = build_parser().parse_args(["phrases", "--foreign", "host", "--input", "x", "--output", "o"])
    assert old.foreign == new.foreign == "host"
    assert merge_settings(PhrasesConfig, {"server": "domain"}).foreign == "domain"


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


@pytest.mark.parametrize("argv", [
    ["-v", "quilts"], ["quilts", "-v"], ["--verbose", "reuse", "detect"], ["reuse", "detect", "--verbose"],
    ["-q", "demo"], ["demo", "--quiet"], ["mwo", "join", "-q"], ["reuse", "-q", "mutate-eval"],
], ids=" ".join)
def test_verbose_and_quiet_before_or_after_the_command(argv):
    """-v/--verbose and -q/--quiet are the console command's, accepted wherever they are typed."""
    args = build_parser().parse_args(argv)
    verbose = any(a in ("-v", "--verbose") for a in argv)
    assert (args.verbose, args.quiet) == (verbose, not verbose)
    neither = build_parser().parse_args([a for a in argv if not a.startswith("-")])
    assert (neither.verbose, neither.quiet) == (False, False)


def test_verbose_and_quiet_together_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as done:
        main(["-v", "quilts", "--quiet"])
    assert done.value.code == 2
    assert "give one of them" in capsys.readouterr().err


@pytest.mark.parametrize("quiet", [False, True], ids=["default", "quiet"])
def test_each_stage_names_its_spark_jobs_and_prints_one_line(spark, capsys, quiet):
    """Spark's progress bar cannot say which stage runs: it is off, and each stage prints
    ``<job>: <stage> - <description>`` as it starts (not with --quiet), the description of its
    Spark jobs in the UI; a stage within a stage gives the outer one its description back."""
    from quiltdetect.cli import configure_console
    from quiltdetect.common.metrics import RunMetrics
    from quiltdetect.common.session import BASE_CONF

    assert BASE_CONF["spark.ui.showConsoleProgress"] == "false"
    configure_console(verbose=False, quiet=quiet)
    metrics = RunMetrics(job="quilts")
    described = lambda: spark.sparkContext.getLocalProperty("spark.job.description")  # noqa: E731
    with metrics.stage(spark, "patch_grams", "documents per gram"):
        assert described() == "quilts: patch_grams - documents per gram"
        with metrics.stage(spark, "inner", "a stage within"):
            assert described() == "quilts: inner - a stage within"
        assert described() == "quilts: patch_grams - documents per gram"
    assert described() is None
    err = capsys.readouterr().err
    lines = ["quilts: patch_grams - documents per gram", "quilts: inner - a stage within"]
    assert err.splitlines() == ([] if quiet else lines)
    configure_console(verbose=False, quiet=False)


def _fake_java(tmp_path: Path, says: str, status: int = 0) -> Path:
    """A JAVA_HOME whose bin/java prints ``says`` on stderr for -version (as java does)."""
    (tmp_path / "bin").mkdir(parents=True)
    java = tmp_path / "bin" / "java"
    java.write_text(f"#!/bin/sh\nprintf '%s\\n' '{says}' >&2\nexit {status}\n")  # no PATH needed
    java.chmod(0o755)
    return tmp_path


@pytest.mark.parametrize(("says", "version"), [
    ('openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment (build 17.0.15+6)', 17),
    ('openjdk version "21" 2023-09-19', 21),
    ('openjdk version "11.0.2" 2019-01-15', 11),
    ('java version "1.8.0_392"', 8),
    ('openjdk version "25.0.3" 2026-04-21 LTS', 25),
], ids=["17", "21", "11", "1.8", "25"])
def test_java_version_is_checked_before_spark_starts(tmp_path, monkeypatch, says, version):
    from quiltdetect.common.session import check_java

    monkeypatch.setenv("JAVA_HOME", str(_fake_java(tmp_path, says)))
    if version in (17, 21):
        assert check_java() == version
        return
    with pytest.raises(ConfigError) as err:
        check_java()
    assert f"Java 17 or 21 is needed to run Spark (found Java {version} at {tmp_path}/bin/java)" in str(err.value)
    assert "openjdk-17-jre-headless" in str(err.value)


def test_missing_or_broken_java_names_what_to_install(tmp_path, monkeypatch):
    from quiltdetect.common.session import check_java

    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(ConfigError, match=f"JAVA_HOME={tmp_path} is not a Java installation: no bin/java"):
        check_java()
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError, match="found none: JAVA_HOME is not set and java is not on PATH"):
        check_java()
    monkeypatch.setenv("JAVA_HOME", str(_fake_java(tmp_path / "broken", "Error: could not create the VM", 1)))
    with pytest.raises(ConfigError, match="-version failed: Error: could not create the VM"):
        check_java()


def test_old_java_is_one_error_line_from_the_console_command(tmp_path):
    """Through the real entry point, in a process of its own (no JVM yet, so the check runs):
    exit 2 and one line, not Py4J's traceback of a gateway that never started."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "JAVA_HOME": str(_fake_java(tmp_path / "jdk", 'openjdk version "11.0.2" 2019-01-15'))}
    done = subprocess.run([sys.executable, "-m", "quiltdetect.cli", "demo", "--output", str(tmp_path / "o")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"quiltdetect: error: Java 17 or 21 is needed to run Spark (found Java 11 at {tmp_path}/jdk/bin/java); "
        "install one (e.g. `apt-get install openjdk-17-jre-headless` or `brew install openjdk@17`) "
        "or set JAVA_HOME to one you have"]
    assert not (tmp_path / "o").exists()


class _Builder:
    """A stand-in for SparkSession.builder that records the settings a session would start with."""

    def __init__(self) -> None:
        self.conf: dict[str, str] = {}

    def appName(self, name: str) -> _Builder:  # noqa: N802 (Spark's name)
        return self

    def config(self, key: str, value: str) -> _Builder:
        self.conf[key] = value
        return self

    def getOrCreate(self) -> types.SimpleNamespace:  # noqa: N802
        context = types.SimpleNamespace(defaultParallelism=2, setLogLevel=lambda level: None, uiWebUrl=None)
        settings = types.SimpleNamespace(get=lambda key, default=None: "8", set=lambda key, value: None)
        return types.SimpleNamespace(conf=settings, sparkContext=context)


@pytest.mark.parametrize("local", [True, False], ids=["console", "spark-submit"])
def test_the_console_starts_its_jvm_with_c1_only_and_spark_submit_keeps_its_own(monkeypatch, tmp_path, local):
    """The console's driver JVM compiles with C1 only (short runs end before C2's compile time
    pays back; docs/performance.md, "JIT"), as default Java options that a user's extra options
    add to and an empty --set turns off; under spark-submit the JVM runs already and the
    cluster's settings stand, so the setting is not passed on."""
    from quiltdetect.common import session

    builder = _Builder()
    monkeypatch.setattr(session.SparkSession, "builder", builder)
    monkeypatch.setattr(session, "check_java", lambda: 17)
    monkeypatch.setattr(session, "SparkConf", _nothing_submitted)
    monkeypatch.setenv("QUILTDETECT_JVM_CACHE", "off")  # the class archive: tests/test_jvmclasses.py
    cfg = quilt_config(build_parser().parse_args(
        ["quilts", "--input", str(tmp_path), "--output", str(tmp_path / "out"),
         "--set", "spark.driver.extraJavaOptions=-Dfoo=1"]))
    session.build_session("t", cfg.spark, local=local)
    if local:
        assert builder.conf["spark.driver.defaultJavaOptions"] == "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
        assert builder.conf["spark.driver.extraJavaOptions"] == "-Dfoo=1"
    else:
        assert "spark.driver.defaultJavaOptions" not in builder.conf
    off = quilt_config(build_parser().parse_args(
        ["quilts", "--input", str(tmp_path), "--output", str(tmp_path / "out"), "--set", "spark.driver.defaultJavaOptions="]))
    assert off.spark["spark.driver.defaultJavaOptions"] == ""


@pytest.mark.parametrize("local", [True, False], ids=["console", "spark-submit"])
def test_the_console_starts_its_python_workers_from_quiltdetects_daemon_and_spark_submit_does_not(
        monkeypatch, tmp_path, local):
    """Local sessions run PySpark's daemon through ``common/pydaemon.py`` (every Python task
    re-read three archives and compiled PySpark from source otherwise); under spark-submit the
    executors' Python may not have quiltdetect before a task's files arrive, so it is not set;
    ``--set spark.python.daemon.module=pyspark.daemon`` picks PySpark's own."""
    from quiltdetect.common import session
    from quiltdetect.common.config import PYTHON_DAEMON

    builder = _Builder()
    monkeypatch.setattr(session.SparkSession, "builder", builder)
    monkeypatch.setattr(session, "check_java", lambda: 17)
    monkeypatch.setattr(session, "SparkConf", _nothing_submitted)
    monkeypatch.setenv("QUILTDETECT_JVM_CACHE", "off")
    cfg = quilt_config(build_parser().parse_args(["quilts", "--input", str(tmp_path), "--output", str(tmp_path / "o")]))
    session.build_session("t", cfg.spark, local=local)
    assert builder.conf.get("spark.python.daemon.module") == (PYTHON_DAEMON if local else None)
    assert PYTHON_DAEMON == "quiltdetect.common.pydaemon"
    off = quilt_config(build_parser().parse_args(
        ["quilts", "--input", str(tmp_path), "--output", str(tmp_path / "o"), "--set", "spark.python.daemon.module=pyspark.daemon"]))
    assert off.spark["spark.python.daemon.module"] == "pyspark.daemon"


def _nothing_submitted() -> types.SimpleNamespace:
    """A SparkConf stand-in: spark-submit set nothing."""
    return types.SimpleNamespace(get=lambda key, default=None: default, contains=lambda key: False)
