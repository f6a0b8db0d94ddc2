"""Hostile table inputs (issue 16): invalid UTF-8, columns of the wrong type, NUL characters.

One bad value must not kill a run or reach docs/: every row is a document or a counted skip,
invalid UTF-8 is repaired (U+FFFD) and flagged in ``decode_errors`` as the WARC reader's lenient
decoding is, and a column no text can be taken from (struct, array, map) makes its file's rows
``bad_column_type`` skips that name the column. Every analysis reads its input through the same
ingestion (``lifecycle`` -> ``documents.table.document_table``): the quilt job and ingest stand for
all in the fast tier, and the extended tier runs every other analysis on a directory of them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_reliability_jobs import JOBS, configure

from quiltdetect.common.config import merge_settings
from quiltdetect.ingest.job import IngestConfig, IngestJob
from quiltdetect.quilts.config import QuiltConfig
from quiltdetect.quilts.job import QuiltsJob

pytestmark = pytest.mark.spark

WORDS = "the quick brown fox jumps over the lazy dog while seven wise owls watch from an old oak".split()


def prose(i: int) -> str:
    return " ".join(WORDS[(i + j) % len(WORDS)] + str(j % 5) for j in range(40))


def invalid_strings(values: list[bytes]) -> pa.Array:
    """A Parquet ``string`` column holding bytes that are not UTF-8 (pyarrow would refuse them)."""
    offsets = pa.array([sum(len(v) for v in values[:i]) for i in range(len(values) + 1)], pa.int32())
    return pa.Array.from_buffers(pa.string(), len(values), [None, offsets.buffers()[1], pa.py_buffer(b"".join(values))])


def docs_rows(out: Path) -> dict[str, dict]:
    return {r["doc_id"]: r for r in pq.read_table(out / "docs").to_pylist()}


def test_invalid_utf8_in_binary_and_string_columns_is_repaired_and_the_run_completes(spark, tmp_path):
    texts = [prose(i).encode() for i in range(6)]
    texts[2] = b"caf\xc3 broken \xff\xfe bytes " + texts[2]  # cut sequence and bytes that are never UTF-8
    inputs = tmp_path / "in"
    inputs.mkdir()
    # ids and urls as numbers, text as binary: the probe's table
    pq.write_table(pa.table({"id": pa.array(range(6), pa.int64()), "url": pa.array(range(100, 106), pa.int64()),
                             "text": pa.array(texts, pa.binary())}), inputs / "binary.parquet")
    # a string column that does not hold UTF-8 (Parquet does not validate), ids with a bad byte
    pq.write_table(pa.table({"id": invalid_strings([b"s1", b"s\xff2"]),
                             "url": pa.array(["http://a.example/1", "http://b.example/2"]),
                             "text": invalid_strings([texts[1] + b" \xe2\x82", texts[3]])}), inputs / "strings.parquet")
    out = tmp_path / "out"
    result = QuiltsJob.run(spark, merge_settings(QuiltConfig, {"inputs": [str(inputs)], "output": str(out),
                                                                "top": 0}).validate())
    assert (out / "_COMPLETE").exists()
    docs = docs_rows(out)
    assert set(docs) == {"0", "1", "2", "3", "4", "5", "s1", "s\ufffd2"}  # no document lost
    assert docs["2"]["text"].startswith("caf\ufffd broken \ufffd\ufffd bytes ")
    assert docs["s1"]["text"].endswith(" \ufffd")
    assert docs["2"]["url"] == "102"
    flagged = {d for d, r in docs.items() if r["decode_errors"]}
    assert flagged == {"2", "s1", "s\ufffd2"}
    assert result.metrics.stages["ingest"]["decoded_leniently"] == 3
    for row in docs.values():
        row["text"].encode("utf-8")  # valid: every later stage can decode it


TYPED_TABLES = {
    "numbers": {"id": [1, 2], "url": [3.5, None], "text": [10, 20], "ip": [True, False]},
    "nested_text": {"id": ["n1", "n2"], "text": [{"body": prose(1)}, {"body": prose(2)}]},
    "nested_id": {"id": [["x"], ["y"]], "text": [prose(3), prose(4)]},
    "null_text": {"id": ["z1", "z2"], "url": [None, None], "text": [None, None]},
    "good": {"id": ["g1"], "url": ["http://g.example/"], "text": [prose(5) + "\u0000end"]},
}


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_columns_of_every_type_give_documents_or_counted_skips(spark, tmp_path, fmt):
    """One directory of tables whose columns disagree in type, one run: numbers and booleans
    become text, nested columns and all-null texts are counted skips, NULs become spaces.

    Parquet files are grouped by schema; JSON Lines schemas are merged by Spark, which widens
    conflicting types to strings, so each nested JSON Lines file is read apart."""
    runs: dict[str, Path] = {}
    for name, columns in TYPED_TABLES.items():
        apart = fmt == "jsonl" and name.startswith("nested")
        folder = runs.setdefault(name if apart else "in", tmp_path / (name if apart else "in"))
        folder.mkdir(exist_ok=True)
        path = folder / f"{name}.{fmt}"
        if fmt == "parquet":
            pq.write_table(pa.table(columns), path)
        else:
            rows = [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    counts, docs = {"documents": 0, "skipped": {}}, {}
    for name, folder in runs.items():
        out = tmp_path / f"out-{name}"
        stage = IngestJob.run(spark, merge_settings(IngestConfig, {
            "inputs": [str(folder)], "output": str(out), "write_rejects": True}).validate()).metrics.stages["ingest"]
        counts["documents"] += stage["documents"]
        for reason, n in stage["skipped"].items():
            counts["skipped"][reason] = counts["skipped"].get(reason, 0) + n
        docs |= docs_rows(out)
        for r in pq.read_table(out / "rejects").to_pylist():
            if r["skip_reason"] == "bad_column_type":
                assert r["skip_detail"].startswith("column ") and " is " in r["skip_detail"], r
    assert counts == {"documents": 3, "skipped": {"bad_column_type": 4, "missing_text": 2}}, counts
    if fmt == "parquet":
        assert {d: (r["text"], r["ip"]) for d, r in docs.items() if d != "g1"} == {"1": ("10", "true"),
                                                                                  "2": ("20", "false")}
    assert "\u0000" not in docs["g1"]["text"] and docs["g1"]["text"].endswith(" end")


def test_table_files_that_cannot_be_read_are_file_errors_and_the_rest_is_read(spark, tmp_path):
    """A file named .parquet that is not Parquet, a Parquet file cut before its footer, a
    .jsonl.gz whose gzip stream breaks: one ``file_error`` row each (before: Spark failed the
    whole run reading the footer or decompressing), and every good file's documents."""
    import gzip

    inputs = tmp_path / "in"
    inputs.mkdir()
    rows = [{"id": f"p{i}", "url": f"http://p.example/{i}", "text": prose(i)} for i in range(4)]
    pq.write_table(pa.Table.from_pylist(rows), inputs / "good.parquet")
    whole = (inputs / "good.parquet").read_bytes()
    (inputs / "cut.parquet").write_bytes(whole[: len(whole) // 2])
    (inputs / "page.parquet").write_bytes(b"<html><body>a page saved under the wrong name</body></html>")
    (inputs / "empty.parquet").write_bytes(b"")
    lines = "".join(json.dumps({"id": f"j{i}", "text": prose(i)}) + "\n" for i in range(3)).encode()
    (inputs / "good.jsonl.gz").write_bytes(gzip.compress(lines))
    broken = gzip.compress(lines * 50)
    (inputs / "broken.jsonl.gz").write_bytes(broken[:40] + b"\xff" * 40 + broken[80:])
    out = tmp_path / "out"
    stage = IngestJob.run(spark, merge_settings(IngestConfig, {
        "inputs": [str(inputs)], "output": str(out), "write_rejects": True}).validate()).metrics.stages["ingest"]
    assert (out / "_COMPLETE").exists()
    assert set(docs_rows(out)) == {"p0", "p1", "p2", "p3", "j0", "j1", "j2"}
    assert stage["skipped"] == {"file_error": 4}, stage
    errors = {Path(r["source"]).name: r["skip_detail"] for r in pq.read_table(out / "rejects").to_pylist()}
    assert set(errors) == {"cut.parquet", "page.parquet", "empty.parquet", "broken.jsonl.gz"}
    assert errors["page.parquet"].startswith("not a readable Parquet file")
    assert errors["broken.jsonl.gz"].startswith("broken gzip stream")


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory) -> Path:
    """One directory of every kind of input, good and hostile: 60 real pages as JSON Lines, a
    Parquet table with numeric ids and invalid UTF-8 in binary text, one with a nested text
    column, JSON Lines with a NUL and a missing text, a real WARC cut in the middle, and a page named .parquet."""
    from quiltdetect.documents.records import iter_warc_rows

    root = tmp_path_factory.mktemp("hostile")
    sample = Path(__file__).resolve().parents[1] / "data" / "sample"
    with open(sample / "synthetic-quilts.warc.gz", "rb") as fh:
        pages = [r for r in iter_warc_rows(fh, "x") if r["skip_reason"] is None][:60]
    (root / "good.jsonl").write_text("".join(json.dumps({"id": p["doc_id"], "url": p["url"], "text": p["text"]}) + "\n"
                                             for p in pages), encoding="utf-8")
    texts = [pages[i]["text"].encode() for i in range(3)]
    texts[1] = b"\xff\xfe" + texts[1]
    pq.write_table(pa.table({"id": pa.array([901, 902, 903], pa.int64()), "url": pa.array([1, 2, 3], pa.int64()),
                             "text": pa.array(texts, pa.binary())}), root / "binary.parquet")
    pq.write_table(pa.table({"id": ["n1", "n2"], "text": [{"body": "x"}, {"body": "y"}]}), root / "nested.parquet")
    (root / "nul.jsonl").write_text(json.dumps({"id": "nul", "url": "http://nul.example/", "text": prose(7) + "\u0000x"})
                                    + "\n" + json.dumps({"id": "notext", "url": "http://n.example/"}) + "\n")
    warc = (sample / "warcfile.warc.gz").read_bytes()
    (root / "cut.warc.gz").write_bytes(warc[: len(warc) * 3 // 5])
    (root / "page.parquet").write_bytes(b"<html>not Parquet</html>")
    return root


@pytest.mark.parametrize("name", sorted(JOBS))
def test_every_analysis_runs_through_a_directory_of_hostile_inputs(spark, tmp_path, hostile_dir, name):
    job = JOBS[name]
    out = tmp_path / "out"
    result = job.run(spark, configure(job, [str(hostile_dir)], out, write_rejects=True))
    assert (out / "_COMPLETE").exists()
    ingest = result.metrics.stages["ingest"]
    skipped = ingest["skipped"]
    assert skipped["bad_column_type"] == 2 and skipped["missing_text"] == 1 and skipped["file_error"] >= 2, skipped
    docs = docs_rows(out)
    assert {"901", "902", "903", "nul"} <= set(docs) and "notext" not in docs
    assert docs["902"]["decode_errors"] and docs["902"]["text"].startswith("\ufffd\ufffd")
    assert "\u0000" not in docs["nul"]["text"]
    for table in job.tables:
        assert (out / table).exists(), (name, table)
