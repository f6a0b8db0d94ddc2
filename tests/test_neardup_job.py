"""End to end: `quiltdetect neardup` and `quiltdetect quilts --collapse-near-duplicates` on a tiny table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from quiltdetect.cli import main

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
    # kept/ and duplicate_of/ name every document exactly once: one per cluster, its smallest doc_id.
    kept = [r["doc_id"] for r in spark.read.parquet(str(out / "kept")).collect()]
    dropped = {r["doc_id"]: r["duplicate_of"] for r in spark.read.parquet(str(out / "duplicate_of")).collect()}
    assert sorted(kept) == ["p1", "q0", "q1"] and dropped == {"p2": "p1", "p3": "p1"}
    assert dropped == {d: c for d, (c, _) in clusters.items() if d != c}
    docs = spark.read.parquet(str(out / "docs"))
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
