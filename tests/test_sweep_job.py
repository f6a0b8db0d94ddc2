"""The sweep on Spark: its counts equal the reference's and separate quilt-job runs.

One seeded batch of random corpora (disjoint vocabularies, as in test_quilts_parity: pages
stitched from slices of others, exact duplicates, short and empty pages) goes through one sweep with a full (k, m) grid and two φ. Every grid point's count, average
cover size and Theorem 3 break count must equal what the plain reference gives per (k, m);
counts must never rise with θ or c (Theorems 1-2); wherever a count falls as m grows, the
reported breaks must account for it. A separate quilt-job run on the same rows (θ = min θ,
c = 1) must give the same counts for every (θ, c) through its doc_stats, and the same quilts.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from quiltdetect.common.config import merge_settings
from quiltdetect.kernel.words import word_hashes, words
from quiltdetect.quilts.config import QuiltConfig
from quiltdetect.quilts.gram_table import _word_hash_rows, hash_runs
from quiltdetect.quilts.job import QuiltsJob
from quiltdetect.quilts.reference import RefDoc, reference_quilts
from quiltdetect.quilts.sources import mark_attributed
from quiltdetect.sweep import job as sweep_job
from quiltdetect.sweep.config import SweepConfig
from quiltdetect.sweep.job import SweepJob

pytestmark = pytest.mark.spark

GRID = dict(ks=[2, 3], ms=[2, 4], cs=[1, 2, 3], thetas=[0.0, 0.3, 0.6, 1.0], phis=[0.0, 0.25],
            pivot=[3, 4, 2, 0.3], grid="full")


def expected_rows(ref_docs: list[RefDoc], cfg: SweepConfig) -> dict[tuple, tuple]:
    """(k, m, c, θ, φ) -> (quilted, avg_sources, m_breaks) straight from the reference."""
    out = {}
    for phi in cfg.phis:
        for k in cfg.ks:
            before: dict[str, tuple[float, int]] | None = None
            for m in cfg.ms:
                ref = reference_quilts(ref_docs, k, m, min(cfg.thetas), phi=phi)
                now = {d: (r.patchfrac, len(r.sources)) for d, r in ref.items() if r.n_patch_grams}
                for c in cfg.cs:
                    for t in cfg.thetas:
                        quilted = [n for pf, n in now.values() if pf >= t and n >= c]
                        avg = round(sum(quilted) / len(quilted), 2) if quilted else None
                        breaks = None
                        if before is not None:
                            breaks = sum(1 for d, (pf, n) in before.items() if pf >= t and n >= c
                                         and not (d in now and now[d][0] >= t and now[d][1] >= c))
                        out[(k, m, c, t, phi)] = (len(quilted), avg, breaks)
                before = now
    return out


def random_corpora(seed: int, n_corpora: int) -> list[tuple[str, str]]:
    """(doc_id, text) of small corpora with disjoint vocabularies and many stitched pages."""
    rng = random.Random(seed)
    docs = []
    for n in range(n_corpora):
        vocab = [f"c{n}w{i}" for i in range(rng.randint(3, 12))]
        pages: list[list[str]] = []
        for i in range(rng.randint(3, 12)):
            kind = rng.choice(["random", "stitch", "stitch", "stitch", "dup", "short", "empty"])
            if kind == "random" or not pages and kind in ("stitch", "dup"):
                tokens = [rng.choice(vocab) for _ in range(rng.randint(0, 25))]
            elif kind == "stitch":
                tokens = []
                for _ in range(rng.randint(1, 5)):
                    donor = rng.choice(pages)
                    start = rng.randint(0, max(0, len(donor) - 1))
                    tokens += donor[start : start + rng.randint(2, 9)] + [rng.choice(vocab)] * rng.randint(0, 1)
            elif kind == "dup":
                tokens = list(rng.choice(pages))
            elif kind == "short":
                tokens = [rng.choice(vocab)]
            else:
                tokens = []
            pages.append(tokens)
            docs.append((f"{n:03d}/{i:02d}", " ".join(tokens)))
    return docs


@pytest.mark.parametrize("large", [False, True])
def test_word_hash_rows_read_back_in_place_for_any_slice(large):
    texts = ["Alpha beta gamma", None, "", "beta, Gamma! delta", "x"]
    batch = pa.RecordBatch.from_arrays([pa.array([10, 11, 12, 13, 14], pa.int64()), pa.array(texts)],
                                       names=["doc_key", "text"])
    column = next(_word_hash_rows(iter([batch]))).column(1)
    column = column.cast(pa.large_binary()) if large else column
    column = pa.array([*column.to_pylist()[:1], None, *column.to_pylist()[2:]], column.type)  # a real null
    for lo, hi in ((0, 5), (1, 4), (3, 5), (2, 2)):
        values, lengths = hash_runs(column.slice(lo, hi - lo))
        want = [word_hashes(t) for t in texts[lo:hi]]
        assert lengths.tolist() == [w.shape[0] for w in want]
        assert values.dtype == np.uint64
        assert values.tolist() == (np.concatenate(want).tolist() if want else [])
    chunked = pa.chunked_array([column.slice(0, 2), column.slice(2)])
    assert hash_runs(chunked)[1].tolist() == [3, 0, 0, 3, 1]


def test_sweep_equals_reference_and_quilt_job(spark, tmp_path):
    tmp = tmp_path
    rows, ref_docs = [], []
    for doc_id, text in random_corpora(seed=2012, n_corpora=25):
        rows.append({"id": doc_id, "url": f"http://h{doc_id[:3]}.example/{doc_id}", "text": text})
        ref_docs.append(RefDoc(doc_id, text))
    table = tmp / "corpus.jsonl"
    table.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")

    cfg = merge_settings(SweepConfig, GRID, {"inputs": [str(table)], "output": str(tmp / "sweep")})
    result = SweepJob.run(spark, cfg)
    got = {(r["k"], r["m"], r["c"], r["theta"], r["phi"]): (r["quilted"], r["avg_sources"], r["m_breaks"])
           for r in result.report["rows"]}
    expected = expected_rows(ref_docs, cfg)
    assert got == expected
    assert sum(q for q, _, _ in got.values()) > 0, "the corpora should hold some quilts"
    # every text tokenised once, for every k
    stage = result.metrics.stages["words"]
    assert (stage["documents"], stage["words"]) == (len(rows), sum(len(words(r["text"])) for r in rows))

    checks = sweep_job.monotonicity_summary(result.report["rows"])
    assert checks["theta_violations"] == 0 and checks["c_violations"] == 0
    for (k, m, c, t, phi), (quilted, _, breaks) in got.items():
        if m != cfg.ms[0]:  # every page lost since the previous m is a reported break
            previous = cfg.ms[cfg.ms.index(m) - 1]
            assert quilted >= got[(k, previous, c, t, phi)][0] - breaks
    out = Path(cfg.output)
    for name in ("sweep.csv", "table1.csv", "report.html", "plots/fig3_k.png", "plots/fig3_theta.png"):
        assert (out / name).is_file(), name
    assert "data:image/png;base64," in (out / "report.html").read_text()

    # a separate run of the quilt job with θ = min θ and c = 1 gives every (θ, c) of its (k, m)
    k, m, phi = 3, 4, 0.25
    qcfg = merge_settings(QuiltConfig, {"inputs": [str(table)], "output": str(tmp / "job"), "k": k, "m": m,
                                        "c": 1, "theta": 0.0, "phi": phi, "top": 0})
    QuiltsJob.run(spark, qcfg)
    stats = [r.asDict() for r in spark.read.parquet(str(tmp / "job" / "doc_stats")).collect()]
    for c in cfg.cs:
        for t in cfg.thetas:
            from_job = sum(1 for r in stats if r["patchfrac"] >= t and r["n_sources"] >= c)
            assert got[(k, m, c, t, phi)][0] == from_job, (c, t)
    assert spark.read.parquet(str(tmp / "job" / "quilts")).count() == got[(k, m, 1, 0.0, phi)][0]


def test_attribution_links_targets_to_their_sources(spark):
    covers = spark.createDataFrame(
        [(1, 1, 10, 5, 5, 9), (1, 2, 11, 3, 3, 9), (1, 3, 12, 1, 2, 9), (2, 1, 10, 4, 4, 4)],
        "target long, rank int, source long, covered long, shared long, n_pairs long",
    )
    anchor = "array<struct<text:string,href:string>>"
    docs = spark.createDataFrame(
        [
            (1, "http://quilt.example/", [("a", "http://src.example/ten/#frag"), ("b", "http://src.example/twelve?x")]),
            (2, "http://other.example/", [("c", "http://elsewhere.example/")]),
            (10, "http://src.example/ten", []),
            (11, "http://src.example/eleven", []),
            (12, "http://src.example/twelve", []),
        ],
        f"doc_key long, url string, anchors {anchor}",
    )
    marked = {(r.target, r.source): r.attributed for r in mark_attributed(covers, docs).collect()}
    assert marked == {(1, 10): True, (1, 11): False, (1, 12): False, (2, 10): False}
