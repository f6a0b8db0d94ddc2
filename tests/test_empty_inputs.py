"""An empty segment is an input of no documents (issue 73): a scheduled crawl's empty day, as an
empty directory or as JSON Lines files of 0 bytes or of blank lines, completes a fresh run and
an update of the quilt and near-duplicate jobs (as the weekly DAG runs them: ingest, then each
analysis over ``<run>/ingest/docs``), says "0 new documents", and leaves a complete run that
the next update extends. The listing rules are checked without Spark in test_inputs_listing.py.

Extended tier: seven small runs in this process (about 45 s in all on 2 cores)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_hostile_tables import prose

from quiltdetect.cli import main

pytestmark = pytest.mark.spark


def metrics(out: Path) -> dict:
    assert (out / "_COMPLETE").is_file(), out
    return json.loads((out / "metrics.json").read_text())


def run(capsys, *argv: str) -> str:
    """One console command in this process; it must exit 0. Its summary."""
    capsys.readouterr()
    status = main(["-q", *argv, "--set", "spark.sql.shuffle.partitions=4"])  # the tests' 4, not the console's 32
    printed = capsys.readouterr()
    assert status == 0, f"{argv}\n{printed.out[-2000:]}\n{printed.err[-2000:]}"
    return printed.out


def test_an_empty_segment_completes_fresh_runs_and_updates_with_no_new_document(spark, tmp_path, capsys):
    week1 = tmp_path / "week1.jsonl"
    week1.write_text("".join(json.dumps({"id": f"p{i}", "url": f"http://h{i % 3}.example/{i}", "text": prose(i % 4),
                                         "crawled": f"2026-01-0{i + 1}T00:00:00Z"}) + "\n" for i in range(6)))
    empty_day = tmp_path / "2026-01-12"  # the scheduled day's directory: nothing was crawled
    empty_day.mkdir()
    zero, blank = tmp_path / "zero.jsonl", tmp_path / "blank.jsonl"
    zero.write_bytes(b"")
    blank.write_text("\n\n   \n")
    q1, n1 = tmp_path / "q1", tmp_path / "n1"
    run(capsys, "quilts", "--input", str(week1), "--output", str(q1), "--date-col", "crawled")
    run(capsys, "neardup", "--input", str(week1), "--output", str(n1), "--date-col", "crawled")
    dates = {r["doc_id"]: r["warc_date"] for r in pq.read_table(q1 / "docs").to_pylist()}
    assert dates["p0"] == "2026-01-01T00:00:00Z" and len(dates) == 6  # --date-col: the crawl date column

    # The DAG's week: ingest of the empty day, then each analysis over its docs/, an update.
    ingest = tmp_path / "20260112" / "ingest"
    printed = run(capsys, "ingest", "--input", str(empty_day), "--output", str(ingest))
    assert f"input {empty_day}: a path, 0 files read" in printed, printed
    assert "0 documents: the inputs hold none (empty files or directories); every table is empty" in printed
    assert metrics(ingest)["stages"]["ingest"]["documents"] == 0 and pq.read_table(ingest / "docs").num_rows == 0
    docs = ["--input", str(ingest / "docs"), "--input-format", "parquet"]
    for job, previous, before in (("quilts", q1, 6), ("neardup", n1, 6)):
        out = tmp_path / "20260112" / job
        printed = run(capsys, job, *docs, "--output", str(out), "--previous", str(previous))
        stage = metrics(out)["stages"]["ingest"]
        assert (stage["previous_documents"], stage["new_documents"], stage["documents"]) == (before, 0, before)
        assert ("0 new documents: the inputs hold none (empty files or directories); the results are those of "
                "the previous run's documents") in printed, printed

    # 0-byte and blank-lines JSON Lines files as the inputs of an update (a JSON reader gives
    # them no column at all; the quilt job reads them alike), into the chain: the next update
    # extends it.
    n2 = tmp_path / "n2"
    printed = run(capsys, "neardup", "--input", str(zero), "--input", str(blank), "--output", str(n2),
                  "--previous", str(n1))
    assert "0 new documents" in printed
    stage = metrics(n2)["stages"]
    kept = metrics(n1)["stages"]["kept"]["documents_kept"]
    assert (stage["ingest"]["files"], stage["ingest"]["new_documents"], stage["kept"]["documents_kept"]) == (2, 0, kept)
    assert sorted(pq.read_table(n2 / "kept").column("doc_id").to_pylist()) == sorted(
        pq.read_table(n1 / "kept").column("doc_id").to_pylist())
    later = tmp_path / "week3.jsonl"
    later.write_text(json.dumps({"id": "p9", "url": "http://h9.example/", "text": prose(1)}) + "\n")
    printed = run(capsys, "neardup", "--input", str(later), "--output", str(tmp_path / "n3"), "--previous", str(n2))
    stage = metrics(tmp_path / "n3")["stages"]
    assert (stage["ingest"]["previous_documents"], stage["ingest"]["new_documents"]) == (6, 1)
    assert "new documents" not in printed
