"""Every ``quiltdetect ...`` command line that docs/*.md shows runs as written.

The commands are read from the docs (not copied here): each line of a fenced block whose first
word is ``quiltdetect`` (after ``/usr/bin/time -v``; continuation lines joined), and each inline
code span that starts with ``quiltdetect <command>`` and gives an option. A fenced block right
after ``<!-- illustration: REASON -->`` is not run (it needs a cluster, credentials, a Docker
engine, or a benchmark corpus the repository does not ship): the reason is shown in the test ids.

Each doc's commands run in order (a query after its index, a detect after its discovery, an
update after its first run) through ``cli.main`` on the tests' Spark session, in a fresh
directory of the doc's own, with relative paths, where:

* ``crawl/`` is a small crawl made of the bundled sample's files (two WARC files and the WET
  file), and ``data/sample/`` is the bundled sample itself, as in a checkout;
* an input the directory does not hold (``week1/``, ``/tmp/c10k``, ``wikipedia-dump/``, ``X``)
  is a directory with one more file of the sample each, in order of appearance; ``...`` given as
  an input is ``crawl/``, given as an output a fresh directory; an absolute output becomes a
  relative one; a bare ``...`` (an elision) is left out;
* ``a|b|c`` given as one value runs once per choice, and ``[--option value]`` once with it;
* ``../shared/data`` is the shared data beside the checkout (skipped where it is absent);
* ``review`` without ``--export`` starts its server and stops it at once;
* ``mwo query`` reads ``--page page.html`` (a page of the sample), and ``< urls.txt`` (urls of
  the index).
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest

from quiltdetect.cli import main
from testkit.shared import shared_data

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[1]
DOCS = sorted((REPO / "docs").glob("*.md"))
SAMPLE = REPO / "data" / "sample"
CRAWL = ("sample-0000.warc.gz", "clueweb-quirk.warc.gz", "whirlwind.warc.wet.gz")
SPARE = ("warcfile.warc.gz", "sample-0000.warc.gz", "clueweb-quirk.warc.gz", "whirlwind.warc.wet.gz")
ILLUSTRATION = "<!-- illustration: "
PREFIXES = (["/usr/bin/time", "-v"],)


def shown_commands(text: str) -> tuple[list[str], list[str]]:
    """(the commands to run, the reasons of the illustrations left out) of one doc, in order."""
    found: list[tuple[int, str]] = []
    reasons = []
    for block in re.finditer(r"^```[\w-]*\n(.*?)^```", text, re.M | re.S):
        before = text[:block.start()].rstrip().rsplit("\n", 1)[-1]
        if before.startswith(ILLUSTRATION):
            reasons.append(before[len(ILLUSTRATION):].removesuffix("-->").strip())
            continue
        for i, line in enumerate(block.group(1).replace("\\\n", " ").splitlines()):
            words = line.split()
            for prefix in PREFIXES:
                if words[:len(prefix)] == prefix:
                    line = line.split(prefix[-1], 1)[1]
            if line.split()[:1] == ["quiltdetect"]:
                found.append((block.start() + i, line.strip()))
    for span in re.finditer(r"`(quiltdetect [a-z][^`]*)`", text):
        command = " ".join(span.group(1).split())
        if " --" in command and not any(span.start(1) > b.start() and span.end(1) < b.end()
                                        for b in re.finditer(r"^```.*?^```", text, re.M | re.S)):
            found.append((span.start(), command))
    return [c for _, c in sorted(found)], reasons


def cases() -> list:
    params = []
    for doc in DOCS:
        commands, reasons = shown_commands(doc.read_text(encoding="utf-8"))
        if commands:
            params.append(pytest.param(doc, commands, id=doc.name))
        for reason in reasons:
            assert re.search(r"cluster|credential|Docker|bench|wheel|\bS3\b|HDFS", reason), (doc.name, reason)
    return params


def variants(words: list[str]) -> list[list[str]]:
    """The runs one shown command stands for: ``[--opt value]`` included, ``a|b|c`` one run each."""
    joined = " ".join(words)
    joined = re.sub(r"\[(-[^\]]*)\]", r"\1", joined)
    words = shlex.split(joined)
    choices = [w.split("|") if "|" in w and not w.startswith("-") and "://" not in w else [w] for w in words]
    return [list(c) for c in itertools.product(*choices)]


class Place:
    """A doc's working directory: the crawl, the sample, and the inputs the doc names."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.spare = iter(SPARE)
        self.made: dict[str, str] = {}
        self.outputs = itertools.count()
        (root / "crawl").mkdir(parents=True)
        for name in CRAWL:
            shutil.copy(SAMPLE / name, root / "crawl" / name)
        (root / "data").mkdir()
        shutil.copytree(SAMPLE, root / "data" / "sample")

    def input(self, value: str) -> str:
        if value in ("...", "…"):
            return "crawl/"
        if value in self.made:
            return self.made[value]
        if re.search(r"[*?[]", value) or os.path.exists(os.path.join(self.root, os.path.expanduser(value))):
            return value
        if value.startswith("..") or value.startswith("-"):
            return value
        name = re.sub(r"[^\w.-]+", "_", value.strip("/")) or "input"
        folder = self.root / "made" / name
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLE / next(self.spare), folder)
        self.made[value] = f"made/{name}"
        return self.made[value]

    def output(self, value: str) -> str:
        if value in ("...", "…"):
            return f"out/{next(self.outputs)}"
        if os.path.isabs(value):
            return "abs/" + value.strip("/")
        return value

    def argv(self, words: list[str]) -> list[str]:
        """The command's arguments with the rules of the module docstring applied."""
        out: list[str] = []
        it = iter(words[1:])
        for word in it:
            if word in ("...", "…"):
                continue
            out.append(word)
            if word in ("--input", "--labeled", "--previous"):
                out.append(self.input(next(it)))
            elif word in ("--output",):
                out.append(self.output(next(it)))
        return out


def redirect_of(words: list[str]) -> tuple[list[str], str | None]:
    """``... < FILE``: the command without the redirect, and FILE."""
    if "<" in words:
        i = words.index("<")
        return words[:i] + words[i + 2:], words[i + 1]
    return words, None


def prepare_mwo_query(place: Place, argv: list[str]) -> None:
    """``mwo query``: page.html, a page of the sample, and urls.txt, urls the index holds."""
    import pyarrow.parquet as pq

    index = place.root / argv[argv.index("--index") + 1]
    docs = pq.read_table(index / "docs", columns=["url", "text"]).to_pylist()
    (place.root / "urls.txt").write_text("\n".join(d["url"] for d in docs[:3]) + "\n")
    (place.root / "page.html").write_text(f"<html><body><p>{docs[0]['text']}</p></body></html>")


@pytest.mark.parametrize(("doc", "commands"), cases())
def test_every_command_a_doc_shows_runs_as_written(doc, commands, tmp_path, spark, monkeypatch, capsys):
    import io

    from quiltdetect.review import server

    place = Place(tmp_path / "qd")
    shared = shared_data()
    if shared is not None:
        os.symlink(shared.parent, tmp_path / "shared")
    monkeypatch.chdir(place.root)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.setattr(server.ThreadingHTTPServer, "serve_forever", lambda self, *a, **k: None, raising=False)
    ran = 0
    for command in commands:
        for words in variants(shlex.split(command, comments=True)):
            words, redirect = redirect_of(words)
            if "../shared/data" in " ".join(words) and shared is None:
                continue
            argv = place.argv(words)
            if argv[:2] == ["mwo", "query"]:
                prepare_mwo_query(place, argv)
            if redirect is not None:
                monkeypatch.setattr("sys.stdin", io.StringIO((place.root / redirect).read_text()))
            started = time.perf_counter()
            status = main(argv)
            printed = capsys.readouterr()
            print(f"{time.perf_counter() - started:6.1f} s  {doc.name}: quiltdetect {shlex.join(argv)}", file=sys.__stderr__)
            assert status == 0, f"{doc.name}: {command}\n  ran: quiltdetect {shlex.join(argv)}\n{printed.err[-3000:]}"
            ran += 1
    assert ran
