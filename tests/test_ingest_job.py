"""``quiltdetect ingest``: the document table written once, read back by any job as its input,
with the same results as reading the crawl itself."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from pyspark import StorageLevel

from quiltdetect.cli import main
from quiltdetect.ingest.job import IngestConfig

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
CRAWL = [str(SAMPLE / "synthetic-quilts.warc.gz"), str(SAMPLE / "clueweb-quirk.warc.gz")]


def test_conf_file_equals_the_dataclass_defaults():
    assert yaml.safe_load((REPO / "conf" / "ingest.yaml").read_text()) == dataclasses.asdict(IngestConfig())


def rows(path: Path, drop: tuple[str, ...] = ()) -> list[str]:
    table = pq.read_table(path).to_pylist()
    return sorted(json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True, default=str) for r in table)


def test_a_job_on_the_ingested_table_equals_the_job_on_the_crawl(spark, tmp_path, capsys):
    inputs = [a for p in CRAWL for a in ("--input", p)]
    assert main(["ingest", *inputs, "--output", str(tmp_path / "ingest"), "--write-rejects"]) == 0
    printed = capsys.readouterr().out
    assert "largest hosts" in printed
    assert f"outputs in {tmp_path / 'ingest'}: docs/, rejects/, metrics.json, config.yaml" in printed
    assert (tmp_path / "ingest" / "_COMPLETE").exists() and (tmp_path / "ingest" / "rejects").is_dir()
    metrics = json.loads((tmp_path / "ingest" / "metrics.json").read_text())
    assert metrics["stages"]["ingest"]["documents"] == 429

    # The quilts of a job on docs/ equal those of the job on the crawl itself: test_readme.py
    # checks it with the README's own commands. Here, with the options that read more fields.
    quilt_opts = ["-c", "3", "--exclude-attributed"]  # exclude_attributed reads the anchors
    assert main(["quilts", "--input", str(tmp_path / "ingest" / "docs"), "--output", str(tmp_path / "via"),
                 *quilt_opts]) == 0
    assert rows(tmp_path / "via" / "quilts")
    # Every field of the document table survives, including where each page came from: the
    # job's docs/ is ingest's (the job on the crawl writes the same table: test_readme.py).
    assert rows(tmp_path / "via" / "docs") == rows(tmp_path / "ingest" / "docs")
    # ... taken as it is (no second sort and numbering of every text), with the counts the
    # general path gives such a table: every row a document.
    via = json.loads((tmp_path / "via" / "metrics.json").read_text())["stages"]["ingest"]
    parts = [p for p in (tmp_path / "ingest" / "docs").iterdir() if p.suffix == ".parquet"]
    assert via.pop("ingested_table") is True
    assert {k: v for k, v in via.items() if k != "seconds"} == {
        "files": len(parts), "records": 429, "documents": 429, "skipped": {},
        "decoded_leniently": metrics["stages"]["ingest"]["decoded_leniently"]}


def test_only_an_ingest_runs_docs_table_is_taken_as_it_is(spark, tmp_path):
    """``ingested_docs``: the docs/ of a complete ingest run, not a copy without its run's
    ``_COMPLETE`` (whose keys nothing vouches for) nor another job's docs/ (an update's keys are
    not the ranks of its doc_ids)."""
    import shutil

    from quiltdetect.common.config import JobConfig
    from quiltdetect.common.folder import OutputFolder
    from quiltdetect.documents.inputs import resolve_inputs
    from quiltdetect.documents.table import ingested_docs, write_ingested

    assert main(["ingest", "--input", CRAWL[1], "--output", str(tmp_path / "ingest")]) == 0
    shutil.copytree(tmp_path / "ingest" / "docs", tmp_path / "copy" / "docs")
    shutil.copytree(tmp_path / "ingest", tmp_path / "quilts")
    done = json.loads((tmp_path / "quilts" / "_COMPLETE").read_text())
    (tmp_path / "quilts" / "_COMPLETE").write_text(json.dumps({**done, "job": "quilts"}))

    def taken(path: Path, **options) -> bool:
        cfg = JobConfig(inputs=[str(path)], output=str(tmp_path / "out"), **options)
        return ingested_docs(spark, cfg, resolve_inputs(spark, cfg.inputs, cfg.input_format)) is not None

    assert taken(tmp_path / "ingest" / "docs") and taken(tmp_path / "ingest" / "docs", input_format="parquet")
    # Linked (local disks) or written again (other file systems): the same rows, and the counts.
    source = str(tmp_path / "ingest" / "docs")
    cfg = JobConfig(inputs=[source], output=str(tmp_path / "out"), write_rejects=True)
    for link in (True, False):
        counts: dict = {}
        out = OutputFolder(spark, str(tmp_path / f"link-{link}"))
        write_ingested(spark, cfg, out, source, 1, counts, link=link)
        assert rows(tmp_path / f"link-{link}" / "docs") == rows(tmp_path / "ingest" / "docs"), link
        assert pq.read_table(tmp_path / f"link-{link}" / "rejects").num_rows == 0
        assert counts["documents"] == counts["records"] == pq.read_table(source).num_rows > 0
    assert not taken(tmp_path / "copy" / "docs")
    assert not taken(tmp_path / "quilts" / "docs")
    cfg = JobConfig(inputs=[str(tmp_path / "ingest" / "docs"), CRAWL[0]], output=str(tmp_path / "out"))
    assert ingested_docs(spark, cfg, resolve_inputs(spark, cfg.inputs, cfg.input_format)) is None


def test_the_read_inputs_are_let_go_once_docs_is_written(spark, tmp_path):
    """The ingest keeps every input row in a checkpoint until docs/ is written (``cut``), and
    ``release`` frees it then, not only when the run ends: at 1,000,000 pages it holds ~5 GB."""
    from quiltdetect.common.caching import cut, keep, release, released

    rows = spark.range(100).selectExpr("id", "repeat('x', 10) AS text")
    before = set(spark.sparkContext._jsc.getPersistentRDDs())
    with released():
        checkpoint, persisted = cut(rows, StorageLevel.DISK_ONLY), keep(rows.where("id > 5"))
        assert persisted.count() == 94 and checkpoint.count() == 100
        held = set(spark.sparkContext._jsc.getPersistentRDDs())
        assert len(held - before) == 2
        release(checkpoint)
        release(persisted)
        assert set(spark.sparkContext._jsc.getPersistentRDDs()) <= before  # (ContextCleaner may drop others')


def test_the_count_of_the_records_checks_no_texts_utf8_and_counts_as_the_repair_does(spark, tmp_path, monkeypatch):
    """The ingest's first scan of a Parquet input (the count by skip reason, the texts' bytes
    that size docs/' ranges) reads each text's length as stored (``read.TEXT_BYTES``): the UTF-8
    checks and repairs of the texts run once, as the texts go to docs/. A missing text is still
    a ``missing_text`` skip, and ``decoded_leniently`` counts the documents that were repaired."""
    import pyarrow as pa

    from quiltdetect.common.config import JobConfig
    from quiltdetect.common.folder import OutputFolder
    from quiltdetect.documents import table
    from quiltdetect.documents.inputs import resolve_inputs
    from quiltdetect.documents.table import document_table, read_documents

    monkeypatch.setattr(table, "REREAD_MIN_BYTES", 0)  # read twice, as a Parquet input of 64 MB or more is
    texts = [b"caf\xc3\xa9 ok", b"bad \xff byte", None, b"nul\x00here"]
    pq.write_table(pa.table({"id": ["a", "b", "c", "d"], "url": [f"http://h/{i}" for i in "abcd"],
                             "text": pa.array(texts, pa.binary())}), tmp_path / "in.parquet")
    cfg = JobConfig(inputs=[str(tmp_path / "in.parquet")], output=str(tmp_path / "out"))
    out = OutputFolder(spark, str(tmp_path / "out"))
    files = resolve_inputs(spark, cfg.inputs, cfg.input_format)
    read = read_documents(spark, cfg, out, files=files, reread=True)
    plan = read.narrow._jdf.queryExecution().optimizedPlan().toString()  # what the count reads, kept
    assert "FileScan parquet" in plan and "octet_length(cast(text#" in plan, plan  # the input's scan itself
    assert not re.search(r"cast\(text#\d+ as string\)\.(makeValid|isValid)", plan), plan
    assert "contains" not in plan.lower(), plan
    assert read.skipped == {"missing_text": 1} and read.candidates == 3
    assert read.candidate_bytes == sum(len(t) for t in texts if t is not None)
    read.release()
    counts: dict = {}
    document_table(spark, cfg, out, counts, files=files)
    assert counts["documents"] == 3 and counts["decoded_leniently"] == 1 and counts["skipped"] == {"missing_text": 1}
    docs = {r["doc_id"]: r for r in pq.read_table(tmp_path / "out" / "docs").to_pylist()}
    assert docs["b"]["text"] == "bad \ufffd byte" and docs["b"]["decode_errors"] is True
    assert docs["d"]["text"] == "nul here" and docs["d"]["decode_errors"] is False
