"""docs/performance.md stays a map, and figures stay out of the code (no Spark).

The document says where each figure comes from (the log's section, a result file, a commit) and
is kept short; the code's comments say why a choice was made and point to it, so a figure is
measured, dated and corrected in one place. These tests keep the three true: the length, every
heading that another file quotes, and no timing figure in a comment or docstring of the package.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "performance.md"
MAX_LINES = 400

# What reads as a measured time or speed-up: "10 s", "0.25 CPU-s", "25 ms", "3 minutes", "1.5x",
# "1.5 times slower", "ms per", "half a second". Not "84 min-hashes" or "(84 x block)".
TIMING = re.compile(
    r"(?<![\w.])\d+(?:[.,]\d+)*\s?(?:s|ms|µs|ns|seconds?|minutes?|hours?|CPU-s)\b"
    r"|(?<![\w.])\d+(?:\.\d+)?x\b"
    r"|\b\d+(?:\.\d+)? times (?:slower|faster)\b"
    r"|\bms per\b|\bhalf a second\b"
)
# (file under src/quiltdetect, text of the line) a figure may stay in, and why. Empty: none may.
ALLOWED: dict[tuple[str, str], str] = {}


def comment_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of every comment and every docstring line of a module."""
    text = path.read_text(encoding="utf-8")
    lines = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(text).readline)
             if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                lines += [(node.body[0].lineno + i, line) for i, line in enumerate(doc.splitlines())]
    return lines


def timing_figures(root: Path) -> list[str]:
    """``file:line: text`` of each comment or docstring line under ``root`` quoting a timing figure."""
    found = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        for number, line in comment_lines(path):
            if TIMING.search(line) and (name, line.strip()) not in ALLOWED:
                found.append(f"{name}:{number}: {line.strip()}")
    return found


def headings(text: str) -> list[str]:
    """The Markdown headings of ``text`` (not the comments of its code blocks)."""
    found, fenced = [], False
    for line in text.splitlines():
        fenced ^= line.startswith("```")
        if line.startswith("#") and not fenced:
            found.append(line.lstrip("#").strip())
    return found


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def quoted_sections() -> list[tuple[str, str]]:
    """(file, quoted heading or #anchor) of every place outside docs/history that names a section
    of docs/performance.md: ``performance.md, "Heading"``, ``performance.md ("Heading")`` or
    ``performance.md#anchor``, line breaks and comment markers inside the quote allowed."""
    found = []
    files = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    for folder in ("src", "tests", "bench", "conf", "testkit"):
        files += [p for p in sorted((REPO / folder).rglob("*")) if p.suffix in (".py", ".md", ".yaml", ".conf")]
    for path in (p for p in files if p != Path(__file__).resolve()):
        text = re.sub(r"\s*\n\s*(?:#\s*)?", " ", path.read_text(encoding="utf-8"))
        name = path.relative_to(REPO).as_posix()
        found += [(name, m.group(1)) for m in re.finditer(r'performance\.md\)?,? \(?"([^"]+)"', text)]
        found += [(name, "#" + m.group(1)) for m in re.finditer(r"performance\.md#([\w-]+)", text)]
        if path == DOC:
            found += [(name, "#" + m.group(1)) for m in re.finditer(r"\]\(#([\w-]+)\)", text)]
    return found


def test_the_performance_document_is_a_map_of_at_most_400_lines():
    lines = len(DOC.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, (f"docs/performance.md has {lines} lines: keep the current figures and "
                                "where each comes from, and leave their history to docs/history/performance-log.md")


def test_every_section_of_the_performance_document_that_another_file_names_exists():
    names = headings(DOC.read_text(encoding="utf-8"))
    anchors = {slug(h) for h in names}
    quoted = quoted_sections()
    assert len(quoted) > 10  # the pattern still finds the references
    missing = [(f, q) for f, q in quoted
               if not (q[1:] in anchors if q.startswith("#") else any(h.startswith(q) for h in names))]
    assert missing == []


def test_no_comment_or_docstring_of_the_package_quotes_a_timing_figure():
    found = timing_figures(REPO / "src" / "quiltdetect")
    assert found == [], ("figures belong in docs/performance.md (\"Figures behind choices in the code\"), "
                         "the comment points there:\n" + "\n".join(found))


def test_the_timing_pattern_finds_measurements_and_spares_other_numbers():
    for measured in ("~10 s of 31 at 1.1 M pages", "1.5 times slower", "0.25 CPU-s per task", "2.3x slower",
                     "took 66 s and 42 s", "half a second for 3 M characters", "25 ms for half a million words"):
        assert TIMING.search(measured), measured
    for other in ("84 min-hash functions", "the (84 x block) matrix", "0x9E3779B1", "a 95% interval",
                  "1,000,000 pages", "version 1.5", "2 GB heap"):
        assert not TIMING.search(other), other
