"""Configuration errors (issue 16): one line saying what to fix, before any Spark session.

Every analysis' subcommand, through ``quiltdetect.cli.main`` as a user types it: a value of the
wrong kind in ``--set`` (a number for the inputs or the output, ``maybe`` for a boolean, a word
for a number) and a YAML syntax error in a ``--config`` file. Each must exit with 2 and print a
single ``quiltdetect: error: ...`` line. Spark is never started: building a session fails the test.
"""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest

from quiltdetect.cli import main
from quiltdetect.ingest.job import IngestConfig
from quiltdetect.mwo.config import MwoConfig
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.phrases.config import PhrasesConfig
from quiltdetect.quilts.config import QuiltConfig
from quiltdetect.reuse.config import ReuseConfig
from quiltdetect.sweep.config import SweepConfig

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample" / "warcfile.warc.gz"

COMMANDS: dict[str, tuple[list[str], type]] = {
    "quilts": (["quilts"], QuiltConfig),
    "neardup": (["neardup"], NearDupConfig),
    "phrases": (["phrases"], PhrasesConfig),
    "reuse discover": (["reuse", "discover"], ReuseConfig),
    "mwo join": (["mwo", "join"], MwoConfig),
    "sweep": (["sweep"], SweepConfig),
    "ingest": (["ingest"], IngestConfig),
}


@pytest.fixture(autouse=True)
def no_spark(monkeypatch):
    """A configuration error must stop the run before a Spark session is built."""
    from quiltdetect.common import session

    def refuse(*args, **kwargs):
        raise AssertionError("a Spark session was built: the error was not caught before Spark")

    monkeypatch.setattr(session, "build_session", refuse)


def run_cli(command: str, tmp_path: Path, *extra: str) -> int:
    words, _ = COMMANDS[command]
    return main([*words, "--input", str(SAMPLE), "--output", str(tmp_path / "out"), *extra])


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{err}"
    assert lines[0].startswith("quiltdetect: error: "), lines[0]
    assert "Traceback" not in err
    return lines[0]


def fields_of(*wanted: object) -> list[tuple[str, str]]:
    """(command, field) for every field of each command's config whose type is one of ``wanted``
    (``X | None`` counts as X)."""
    out = []
    for command, (_, cls) in COMMANDS.items():
        hints = typing.get_type_hints(cls)
        for field in dataclasses.fields(cls):
            hint = hints[field.name]
            if typing.get_origin(hint) is not list and typing.get_args(hint):  # X | None
                args = [a for a in typing.get_args(hint) if a is not type(None)]
                hint = args[0] if len(args) == 1 else hint
            if hint in wanted:
                out.append((command, field.name))
    assert out, wanted
    return out


def flag(name: str) -> str:
    return f"-{name}" if len(name) == 1 else "--" + name.replace("_", "-")


BOOL_FIELDS = fields_of(bool)
NUMBER_FIELDS = fields_of(int, float)
NUMBER_LIST_FIELDS = fields_of(list[int], list[float])


def test_every_analysis_has_bool_fields_covered():
    commands = {c for c, _ in BOOL_FIELDS}
    assert commands == set(COMMANDS)
    for common in ("overwrite", "write_rejects", "hadoop_reader"):
        assert {c for c, f in BOOL_FIELDS if f == common} == set(COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("value", ["5", "[1, 2]", "{a: 1}", "null"])
def test_inputs_that_are_not_paths(command, value, tmp_path, capsys):
    assert run_cli(command, tmp_path, "--set", f"inputs={value}") == 2
    assert "--input must be a path or a list of paths" in one_error_line(capsys)


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("value", ["5", "[a, b]", "true"])
def test_output_that_is_not_a_path(command, value, tmp_path, capsys):
    assert run_cli(command, tmp_path, "--set", f"output={value}") == 2
    assert "--output must be a path (a string)" in one_error_line(capsys)


@pytest.mark.parametrize("command,name", BOOL_FIELDS)
def test_booleans_must_be_booleans(command, name, tmp_path, capsys):
    assert run_cli(command, tmp_path, "--set", f"{name}=maybe") == 2
    line = one_error_line(capsys)
    assert f"{flag(name)} must be true or false, got 'maybe'" in line


@pytest.mark.parametrize("command,name", NUMBER_FIELDS)
@pytest.mark.parametrize("value", ["abc", "'7'", "[1]"])
def test_numbers_must_be_numbers(command, name, value, tmp_path, capsys):
    assert run_cli(command, tmp_path, "--set", f"{name}={value}") == 2
    line = one_error_line(capsys)
    assert flag(name) in line and ("integer" in line or "number" in line), line


@pytest.mark.parametrize("command,name", NUMBER_LIST_FIELDS)
def test_number_lists_must_hold_numbers(command, name, tmp_path, capsys):
    assert run_cli(command, tmp_path, "--set", f"{name}=[5, 50, x, 0.5]") == 2
    line = one_error_line(capsys)
    assert flag(name) in line, line


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_yaml_syntax_error_is_one_line_with_file_line_and_column(command, tmp_path, capsys):
    conf = tmp_path / "bad.yaml"
    conf.write_text("top: 3\nspark:\n  spark.sql.shuffle.partitions: [4, 8\nfoo: bar\n", encoding="utf-8")
    assert run_cli(command, tmp_path, "--config", str(conf)) == 2
    line = one_error_line(capsys)
    assert str(conf) in line and "not valid YAML at line 4, column 4" in line, line


def test_yaml_error_without_a_position_is_still_one_line(tmp_path, capsys):
    conf = tmp_path / "tab.yaml"
    conf.write_text("k: 5\n\tm: 50\n", encoding="utf-8")  # a tab where indentation is expected
    assert run_cli("quilts", tmp_path, "--config", str(conf)) == 2
    line = one_error_line(capsys)
    assert str(conf) in line and "line 2" in line, line


def test_a_config_file_that_is_not_text_is_one_line(tmp_path, capsys):
    conf = tmp_path / "binary.yaml"
    conf.write_bytes(b"k: 5\n\xff\xfe\x00m: 50\n")
    assert run_cli("quilts", tmp_path, "--config", str(conf)) == 2
    assert str(conf) in one_error_line(capsys)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_output_of_other_inputs_is_refused_before_spark(command, tmp_path, capsys):
    """An output that holds a run made from other inputs is refused before a session starts."""
    state = tmp_path / "out" / "_quiltdetect"
    state.mkdir(parents=True)
    (state / "run.json").write_text('{"job": "quilts", "inputs_key": "made-from-other-inputs"}')
    assert run_cli(command, tmp_path) == 2
    line = one_error_line(capsys)
    assert "other inputs" in line and "--overwrite" in line
