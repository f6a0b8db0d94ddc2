"""Every option the README and conf/*.yaml show is accepted by the commands they show it for
(issue 73: ``--date-col`` was shown everywhere and accepted nowhere). Read from the files, not
copied here; the console's own parser (``cli.build_parser``), no Spark.

README.md:

* every command line (a ``quiltdetect ...`` or ``spark-submit ... jobs/<file>.py ...`` line of a
  fenced block, and an inline code span ``quiltdetect <command> ... -x``) parses as written;
* an option table (first column ``option``): each option of its first column is accepted by
  every command of the fenced block before it in its section;
* a table of commands (first column ``command``): an option in a row is accepted by that row's
  command;
* any other option in a code span (``--date-col``, ``quilts --phi F``) is accepted by the command
  the span names, else by at least one command.

conf/<command>.yaml: every key is a setting of the command's configuration (``--set key=value``
of every subcommand builds it), and every option its comment shows (``# --date-col: ...``) is
accepted by every job subcommand for the shared input options (``JobConfig``'s) and by at least
one for the others (``mwo index`` offers a few of ``mwo join``'s).
"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest
import yaml

from quiltdetect.cli import JOB_FILES, build_parser
from quiltdetect.common.config import JobConfig, options_of

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
FENCED = re.compile(r"^```[\w-]*\n(.*?)^```", re.M | re.S)


def leaves(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """(argv prefix) -> parser of every leaf command (``quilts``, ``mwo join``, ...)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return {prefix: parser}
    found = {}
    for name, sub in subs[0].choices.items():
        found.update(leaves(sub, (*prefix, name)))
    return found


LEAVES = leaves(build_parser())


def accepts(command: tuple[str, ...], option: str) -> bool:
    """Whether the leaf command (or every leaf under a command with subcommands) takes ``option``."""
    under = [p for argv, p in LEAVES.items() if argv[:len(command)] == command]
    assert under, f"no command {' '.join(command)}"
    return all(option in p._option_string_actions for p in under)


def command_of(words: list[str]) -> tuple[str, ...]:
    """The leaf command an argv (after ``quiltdetect``) runs: its first words that name commands."""
    for argv in sorted(LEAVES, key=len, reverse=True):
        if tuple(words[:len(argv)]) == argv:
            return argv
    if words and any(argv[0] == words[0] for argv in LEAVES):
        return (words[0],)
    return ()


def block_commands(text: str) -> list[list[str]]:
    """The console argv (after ``quiltdetect``) of each command line of the fenced blocks in
    ``text``: ``quiltdetect ...`` lines, and ``spark-submit ... jobs/<file>.py ...`` lines as
    the command JOB_FILES names; continuation lines joined, ``&&`` chains split, comments dropped."""
    found = []
    for block in FENCED.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            for part in line.split("&&"):
                try:
                    words = shlex.split(part, comments=True)
                except ValueError:  # not shell (a Python block)
                    continue
                if words[:1] == ["quiltdetect"]:
                    found.append(words[1:])
                elif words[:1] == ["spark-submit"]:
                    job = next((i for i, w in enumerate(words) if w.startswith("jobs/") and w.endswith(".py")), None)
                    if job is not None:
                        found.append([*JOB_FILES[words[job][len("jobs/"):]], *words[job + 1:]])
    return found


def span_commands(text: str) -> list[list[str]]:
    """The argv of each inline ``quiltdetect <command> ...`` span that gives an option."""
    outside = FENCED.sub("", text)
    return [shlex.split(" ".join(m.split()))[1:] for m in re.findall(r"`(quiltdetect [a-z][^`]*)`", outside)
            if " -" in m]


def sections(text: str) -> list[str]:
    """The text between one heading and the next (of any level)."""
    return re.split(r"^#+ .*$", text, flags=re.M)


def tables(text: str) -> list[tuple[list[list[str]], str]]:
    """Each markdown table of ``text``: its rows (header first, each a list of cells), and the
    text before it."""
    found, rows, before = [], [], []
    lines = text.splitlines()
    for i, line in enumerate([*lines, ""]):
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                rows.append(cells)
            if len(rows) == 1 and not before:
                before = lines[:i]
        elif rows:
            found.append((rows, "\n".join(before)))
            rows, before = [], []
    return found


def spans(cell: str) -> list[str]:
    return re.findall(r"`([^`]*)`", cell)


def options_in(span: str) -> list[str]:
    """The options a code span gives: its words that are an option (``--input PATH``: --input)."""
    return [w for w in span.split() if re.fullmatch(r"--?[a-zA-Z][\w-]*", w)]


def test_every_option_the_readme_shows_is_accepted_by_the_commands_it_is_shown_for():
    shown = block_commands(README) + span_commands(README)
    assert len(shown) >= 10 and any(argv[:1] == ["neardup"] for argv in shown)
    parser = build_parser()
    for argv in shown:
        try:
            parser.parse_args(argv)
        except SystemExit:
            pytest.fail(f"README.md shows `quiltdetect {shlex.join(argv)}`, which the console refuses")
    checked: list[tuple[tuple[str, ...], str]] = []
    for section in sections(README):
        for table, before in tables(section):
            head = table[0][0].lower()
            # an option table is for the commands of the fenced block before it in its section
            last = FENCED.findall(before)[-1:]
            commands = list(dict.fromkeys(command_of(argv) for argv in block_commands("".join(
                f"```\n{b}```\n" for b in last))))
            for row in table[1:]:
                if head == "option":
                    assert commands, f"README.md: an option table with no command before it: {row[0]}"
                    checked += [(c, o) for span in spans(row[0]) for o in options_in(span) for c in commands]
                elif head == "command":  # a table of commands: an option in a row is for the row's command
                    own = command_of(spans(row[0])[0].split()[1:])
                    for span in (s for cell in row[1:] for s in spans(cell)):
                        named = command_of(span.split()) or (own if span.startswith("-") else ())
                        checked += [(named, o) for o in options_in(span) if named]
    # every other option in a code span: for the command the span names, else for at least one
    prose = "\n".join(line for line in FENCED.sub("", README).splitlines() if not line.startswith("|"))
    for span in spans(prose):
        named = command_of(span.split())
        if not (named or span.startswith("-")):
            continue  # a command line (the test above), another program's (`pytest -n 0`), a value
        for option in options_in(span):
            if named:
                checked.append((named, option))
            else:
                assert any(option in p._option_string_actions for p in LEAVES.values()), (
                    f"README.md shows `{span}`, which no command accepts")
    assert ("quilts",) in {c for c, _ in checked} and len(checked) > 20, checked
    refused = sorted({f"quiltdetect {' '.join(c)} {o}" for c, o in checked if not accepts(c, o)})
    assert not refused, f"README.md shows options these commands refuse: {refused}"


CONF = sorted(p.name for p in (REPO / "conf").glob("*.yaml") if p.stem in {argv[0] for argv in LEAVES})
SHARED = {flag for name, opt in options_of(JobConfig).items() if opt.cli for flag in opt.spellings(name)}


@pytest.mark.parametrize("name", CONF)
def test_every_setting_and_option_a_conf_file_shows_is_accepted_by_its_command(name, tmp_path):
    from test_cli import _config_of

    command = name.removesuffix(".yaml")
    text = (REPO / "conf" / name).read_text(encoding="utf-8")
    settings = {k: v for k, v in yaml.safe_load(text).items() if k != "spark"}
    jobs = {argv: p for argv, p in LEAVES.items() if argv[0] == command and argv != ("mwo", "query")}
    assert jobs, name
    shown = re.findall(r"^(\w+): .*# (--?[a-z][\w-]*): ", text, re.M)
    assert shown and set(dict(shown)) <= set(settings), name
    for key, flag in shown:
        takers = [argv for argv, p in jobs.items() if flag in p._option_string_actions]
        if flag in SHARED:
            assert len(takers) == len(jobs), f"conf/{name} shows {flag}; refused by {sorted(set(jobs) - set(takers))}"
        else:
            assert takers, f"conf/{name} shows {flag} ({key}); no `quiltdetect {command}` command accepts it"
    for argv in jobs:
        extra = ["--site", "a.example/"] if argv == ("reuse", "mutate-eval") else []
        for key, value in settings.items():
            needed = {"inputs": [str(tmp_path / "x")], "output": str(tmp_path / "o"), "site": "a.example/"}
            value = needed.get(key, value)
            given = yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()
            args = build_parser().parse_args([*argv, "--input", "x", "--output", str(tmp_path / "o"), *extra,
                                              "--set", f"{key}={given}"])
            assert getattr(_config_of(argv, args), key) == value, (name, argv, key)


def test_an_option_neardup_does_not_take_is_not_reported_as_an_invalid_action(capsys):
    """Issue 73: ``neardup --date-col date`` said ``argument action: invalid choice: 'date'``:
    argparse hands the value of an option it does not know to neardup's optional action word."""
    with pytest.raises(SystemExit):
        build_parser().parse_args(["neardup", "--input", "x", "--crawl-col", "date"])
    err = capsys.readouterr().err
    assert "'date' is neither run nor calibrate" in err and "neardup does not take that option" in err, err
    assert "invalid choice" not in err
    assert [build_parser().parse_args(argv).action for argv in (["neardup"], ["neardup", "calibrate"])] == [
        "run", "calibrate"]
