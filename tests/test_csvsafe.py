"""CSV injection (issue 16): every CSV/TSV the tool writes shows hostile text as text.

No Spark: the writers are called with local paths (``fs.write_text`` needs no session there).
"""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest

from quiltdetect.common.csvsafe import FORMULA_START, csv_bytes, restore_cell, safe_cell, tsv_text

HOSTILE = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1",
           "'=1", "''+1", "=cmd|' /C calc'!A0\n=2,\"x\""]
HARMLESS = ["", "plain", "'quoted", "a=b", " =leading space kept", "http://x.example/?a=-1", "42"]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_gets_one_quote_and_reads_back(text):
    cell = safe_cell(text)
    assert cell == "'" + text and not cell.startswith(FORMULA_START)
    assert restore_cell(cell) == text


@pytest.mark.parametrize("value", [*HARMLESS, -3, -0.5, 7, None, True])
def test_harmless_text_and_numbers_are_untouched(value):
    assert safe_cell(value) == value and restore_cell(value) == value


def test_csv_bytes_quotes_separators_and_newlines():
    data = csv_bytes([{"a": t, "n": -1} for t in HOSTILE], ["a", "n"])
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))
    assert [restore_cell(r["a"]) for r in rows] == HOSTILE
    assert all(not r["a"].startswith(FORMULA_START) for r in rows)
    assert {r["n"] for r in rows} == {"-1"}  # a number stays a number


def _frame() -> pd.DataFrame:
    texts = HOSTILE + HARMLESS
    return pd.DataFrame({"rank": range(1, len(texts) + 1), "delta": [-1.5] * len(texts),
                         "example_url": texts, "text": texts})


def _read_tsv(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), sep="\t", keep_default_na=False)


def test_tsv_text_neutralises_text_columns_only():
    frame = _frame()
    back = _read_tsv(tsv_text(frame))
    assert len(back) == len(frame)
    assert list(back["rank"]) == list(frame["rank"]) and list(back["delta"]) == [-1.5] * len(frame)
    for name in ("example_url", "text"):
        cells = [str(c) for c in back[name]]
        assert not any(c.startswith(FORMULA_START) for c in cells)
        assert [restore_cell(c) for c in cells] == [str(t) for t in frame[name]]
    assert frame.loc[0, "text"] == HOSTILE[0]  # the caller's frame is not changed


def test_reuse_tsv_files_are_neutralised(tmp_path):
    from quiltdetect.common.folder import OutputFolder
    from quiltdetect.reuse.job import write_tsv

    write_tsv(OutputFolder(None, str(tmp_path)), "top_chunks.tsv", _frame())
    back = _read_tsv((tmp_path / "top_chunks.tsv").read_bytes().decode("utf-8"))
    assert [restore_cell(str(c)) for c in back["text"]] == HOSTILE + HARMLESS
    assert not any(str(c).startswith(FORMULA_START) for c in back["text"])


def test_sweep_csv_cells_are_neutralised_and_numbers_read_back():
    from quiltdetect.sweep.job import COLUMNS, csv_text, rows_from_csv

    row = {c: i for i, c in enumerate(COLUMNS)}
    assert rows_from_csv(csv_text([row])) == [{c: (float(v) if c in ("theta", "phi", "avg_sources") else v)
                                               for c, v in row.items()}]
    text = csv_text([dict(row, vary="=1+1")], ["vary", *COLUMNS])
    assert text.splitlines()[1].startswith("'=1+1,")


def test_a_nul_character_never_reaches_a_csv_cell():
    data = csv_bytes([{"doc_id": "d\x001", "note": "=cmd\x00|x"}], ["doc_id", "note"])
    assert b"\x00" not in data
    assert data.decode("utf-8").splitlines()[1] == "d\ufffd1,'=cmd\ufffd|x"
