"""CSV / TSV cells that a spreadsheet shows as text, never runs as a formula (CSV injection).

Crawled pages are hostile and so are the labels' notes: a doc id, URL, note or chunk text that
begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return would be evaluated by Excel,
LibreOffice or Google Sheets when the file is opened (``=HYPERLINK(...)``, DDE payloads). As
OWASP recommends, such a text cell is written with a single quote in front, which spreadsheets
show as text; the quoting of the ``csv`` module (or pandas) keeps separators and newlines
inside the cell. Numbers are not touched (``-3`` stays a number).

A NUL character becomes U+FFFD. A program reading these files back gets the text by removing
that one quote:
:func:`restore_cell` (a text that itself began with quotes and then one of those characters gets one
more quote, so the rule is reversible).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["FORMULA_START", "safe_cell", "restore_cell", "csv_bytes", "tsv_text"]

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """``value`` with a ``'`` in front when it is text that a spreadsheet would run, and any NUL
    character as U+FFFD (a NUL ends the cell, or the file, for spreadsheets and C programs)."""
    if isinstance(value, str) and "\x00" in value:
        value = value.replace("\x00", "\ufffd")
    # also when quotes precede such a character, so that restore_cell is exact
    if isinstance(value, str) and value.lstrip("'").startswith(FORMULA_START):
        return "'" + value
    return value


def restore_cell(value: Any) -> Any:
    """The text :func:`safe_cell` was given (one added ``'`` removed)."""
    if isinstance(value, str) and value.startswith("'") and value.lstrip("'").startswith(FORMULA_START):
        return value[1:]
    return value


def csv_bytes(rows: Iterable[Mapping[str, Any]], fields: list[str]) -> bytes:
    """Rows as UTF-8 CSV with a header line, every text cell made safe."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields)
    writer.writeheader()
    for row in rows:
        writer.writerow({k: safe_cell(v) for k, v in row.items()})
    return buf.getvalue().encode("utf-8")


def tsv_text(frame: Any) -> str:
    """A pandas DataFrame as tab-separated text (no index), every text cell made safe.

    Lines end in ``\\n``; if a text cell holds a carriage return, in ``\\r\\n``, because the
    writer quotes a cell only for the characters of the line ending, and an unquoted ``\\r``
    would start a new row in a spreadsheet (and a formula with it).
    """
    safe = frame.copy()
    has_cr = False
    for name in safe.columns:
        if safe[name].dtype == object:
            safe[name] = safe[name].map(safe_cell)
            has_cr = has_cr or bool(safe[name].map(lambda v: isinstance(v, str) and "\r" in v).any())
    return safe.to_csv(sep="\t", index=False, lineterminator="\r\n" if has_cr else "\n")
