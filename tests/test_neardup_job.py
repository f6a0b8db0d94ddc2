"""End to end: `quiltdetect neardup` and `quiltdetect quilts --collapse-near-duplicates` on a tiny table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from quiltdetect.cli import main
from quiltdetect.common.layout import COMPLETE
from quiltdetect.neardup import lsh
from quiltdetect.neardup.fingerprints import shingle_set
from quiltdetect.review.data import Run
from quiltdetect.review.labels import LabelStore
from quiltdetect.review.server import ReviewApp

pytestmark = pytest.mark.spark

BASE = " ".join(f"word{i}" for i in range(200))


def write_table(path: Path) -> Path:
    rows = [
        {"id": "p1", "url": "http://www.a.com/1", "text": BASE},
        {"id": "p2", "url": "http://www.b.org/2", "text": BASE.replace("word77", "changed")},
        {"id": "p3", "url": "http://www.c.net/3", "text": BASE + " one more"},
        {"id": "q1", "url": "http://www.d.com/4", "text": " ".join(f"other{i}" for i in range(200))},
        {"id": "q0", "url": "http://www.d.com/5", "text": "tiny"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def assert_similarities_recomputed(rows, docs, k: int = 4) -> None:
    """Every duplicate_of/ row's resemblance and containment equal the ones recomputed from the
    two pages' texts (definitions §2), to the last bit."""
    pages = {r["doc_id"]: r for r in docs.select("doc_id", "text", "url", "images").collect()}
    sets = {x: shingle_set(p["text"], p["url"], p["images"], k=k) for x, p in pages.items()}
    rows = list(rows)
    assert rows
    for row in rows:
        assert (row["resemblance"], row["containment"]) == lsh.resemblance_containment(
            sets[row["doc_id"]], sets[row["duplicate_of"]]), row


def test_neardup_command_writes_pairs_clusters_metrics(spark, tmp_path, capsys):
    table = write_table(tmp_path / "docs.jsonl")
    out = tmp_path / "nd"
    assert main(["neardup", "--input", str(table), "--output", str(out), "--set", "top=3"]) == 0
    pairs = {(r["doc_id_a"], r["doc_id_b"]): r.asDict() for r in spark.read.parquet(str(out / "pairs")).collect()}
    assert set(pairs) == {("p1", "p2"), ("p1", "p3"), ("p2", "p3")}
    # the default (lsh): p2 has one word of 200 changed (resemblance 193/201 at k = 4), p3 has p1
    # and two words more (p1 is contained in it whole).
    assert pairs[("p1", "p2")]["resemblance"] == 193 / 201 and pairs[("p1", "p3")]["containment"] == 1.0
    assert all(0.63 <= p["resemblance"] or 0.96 <= p["containment"] for p in pairs.values())
    assert not any(p["same_site"] for p in pairs.values())
    clusters = {r["doc_id"]: (r["cluster_id"], r["cluster_size"]) for r in spark.read.parquet(str(out / "clusters")).collect()}
    assert clusters == {"p1": ("p1", 3), "p2": ("p1", 3), "p3": ("p1", 3)}
    # kept/ and duplicate_of/ name every document exactly once. A table has no crawl dates, so
    # doc_id orders the pages: p1 is kept, p2 and p3 are each a near-duplicate of it.
    kept = [r["doc_id"] for r in spark.read.parquet(str(out / "kept")).collect()]
    rows = {r["doc_id"]: r.asDict() for r in spark.read.parquet(str(out / "duplicate_of")).collect()}
    dropped = {d: r["duplicate_of"] for d, r in rows.items()}
    assert sorted(kept) == ["p1", "q0", "q1"] and dropped == {"p2": "p1", "p3": "p1"}
    # each with the reason: the kept page's url and run, the pair's exact similarity
    run_id = json.loads((out / COMPLETE).read_text())["run_id"]
    assert {(r["kept_url"], r["kept_run"]) for r in rows.values()} == {("http://www.a.com/1", run_id)}
    docs = spark.read.parquet(str(out / "docs"))
    assert_similarities_recomputed(rows.values(), docs)
    # the review tool opens each dropped page beside its kept page, shared shingles marked in both
    app = ReviewApp(Run.open(out), LabelStore(tmp_path / "labels.sqlite"))
    assert [r["doc_id"] for r in app.run.quilts] == ["p2", "p3"] and "2 dropped pages" in app.list_page({})
    status, page = app.quilt_page({"id": ["p2"]})
    assert status == 200 and "dropped as a near-duplicate of the kept page p1" in page
    assert f"resemblance <b>{193 / 201:.4g}</b>" in page and "http://www.a.com/1" in page and run_id in page
    assert page.count("<mark") >= 2  # the shared runs, in the dropped page and in the kept one
    # ... in the terms of a near-duplicate run (issue 73): the job's measures, the rule each page
    # passed at the run's thresholds, labels duplicate / not a duplicate
    assert app.run.measures == ["resemblance", "containment"] and "quilts" not in page
    assert [app.run.by_id[d]["passed"] for d in ("p2", "p3")] == [["resemblance ≥ 0.63", "containment ≥ 0.96"]] * 2
    assert "lsh, k=4: resemblance ≥ 0.63 or containment ≥ 0.96" in page and 'value="duplicate"' in page
    assert app.label({"token": [app.token], "doc_id": ["p3"], "label": ["duplicate"]})[0] == 303
    assert sorted(kept + list(dropped)) == sorted(r["doc_id"] for r in docs.collect())
    assert spark.read.parquet(str(out / "kept")).columns == docs.columns  # a document table, usable as --input
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["stages"]["pairs"]["pairs"] == 3 and metrics["parameters"]["algorithm"] == "lsh"
    assert yaml.safe_load((out / "config.yaml").read_text())["top"] == 3
    # The same run again finds its output complete and reports it without recomputing.
    assert main(["neardup", "--input", str(table), "--output", str(out), "--set", "top=3"]) == 0
    printed = capsys.readouterr().out
    assert "complete_already=1" in printed
    assert f"outputs in {out}: docs/, pairs/, clusters/, kept/, duplicate_of/, metrics.json" in printed
    assert metrics["outputs"]["kept"] == str(out / "kept")
    # Other inputs into the same output are refused unless --overwrite.
    other = write_table(tmp_path / "other.jsonl")
    other.write_text(other.read_text().replace("p1", "q1"))
    assert main(["neardup", "--input", str(other), "--output", str(out)]) == 2


def test_quilts_collapse_near_duplicates_keeps_one_per_cluster(spark, tmp_path):
    table = write_table(tmp_path / "docs.jsonl")
    out = tmp_path / "q"
    assert main(["quilts", "--input", str(table), "--output", str(out), "--collapse-near-duplicates",
                 "-c", "1", "--theta", "0"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["stages"]["collapse"] == {**metrics["stages"]["collapse"], "documents_kept": 3,
                                             "documents_dropped": 2}
    stats = {r["doc_id"] for r in spark.read.parquet(str(out / "doc_stats")).collect()}
    assert stats == {"p1", "q1"}  # q0 is shorter than k: no grams, no doc_stats row
    assert yaml.safe_load((out / "config.yaml").read_text())["collapse_near_duplicates"] is True
