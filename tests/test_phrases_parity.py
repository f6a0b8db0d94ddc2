"""Parity: the Spark phrase job equals the plain in-memory reference of definitions §3.

Corpora are drawn from a seeded generator: pages stitched from a small pool of sentences (so phrases
become popular and covering sets have ties), random words, exact copies (collapsed), one-word
and empty pages, non-ASCII words and underscores, a few hosts and IPs. Each case runs the
whole job once on the union of a dozen corpora and compares every output table with the reference.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from quiltdetect.common.config import merge_settings
from quiltdetect.documents.urls import domain_of, host_of
from quiltdetect.kernel.words import words
from quiltdetect.phrases.config import PhrasesConfig
from quiltdetect.phrases.job import PhrasesJob
from quiltdetect.phrases.reference import reference_phrases
from quiltdetect.quilts.reference import RefDoc

pytestmark = pytest.mark.spark

VOCAB = ["alpha", "beta", "gamma", "delta", "naïve", "straße", "東京", "x1", "École", "z", "øre", "42", "q_r"]
HOSTS = ["a.example.com", "b.example.com", "www.other.org", "x.co.uk", "shop.x.co.uk"]
IPS = [None, "10.0.0.1", "10.0.0.2"]


def corpus(rng: random.Random, n: int) -> list[dict]:
    """One small corpus: pages with id, url, ip and text; words carry the corpus number."""
    vocab = [f"{w}{n}" for w in VOCAB[: rng.randint(3, len(VOCAB))]]
    pool = [[rng.choice(vocab) for _ in range(rng.randint(2, 7))] for _ in range(rng.randint(2, 5))]
    pages: list[dict] = []
    for i in range(rng.randint(3, 12)):
        kind = rng.choice(["stitch", "stitch", "stitch", "random", "copy", "one", "empty"])
        if kind == "stitch":
            tokens = [w for _ in range(rng.randint(1, 4)) for w in rng.choice(pool)]
            tokens += [rng.choice(vocab) for _ in range(rng.randint(0, 2))]
        elif kind == "random":
            tokens = [rng.choice(vocab) for _ in range(rng.randint(1, 15))]
        elif kind == "copy" and pages:
            tokens = rng.choice(pages)["tokens"]
        elif kind == "one":
            tokens = [rng.choice(vocab)]
        else:
            tokens = []
        host = rng.choice(HOSTS)
        pages.append({"id": f"{n:02d}/{i:02d}", "url": f"http://{host}/{n}/{i}", "ip": rng.choice(IPS),
                      "tokens": tokens, "sep": rng.choice([" ", " - ", "\n", ", "])})
    return pages


PARAMETERS = [
    dict(k=2, shingles=6, popular=2, foreign="host", cover_sample="all", cover_min_popular=0,
         min_host_pages=2, monster_min_mean=1.0, monster_max_std=3.0, monster_order="pages"),
    dict(k=3, shingles=84, popular=3, foreign="ip", collapse_near_duplicates=False, cover_sample="per_count",
         cover_sample_size=2, cover_seed=7, cover_min_popular=1, cover_servers=["10.0.0.1", "domain:example.com"],
         min_host_pages=3, monster_min_mean=5.0,
         monster_max_std=40.0),
]


@pytest.mark.parametrize(("params", "seed"), [
    pytest.param(PARAMETERS[0], 11, id="k2-m6-host"),
    pytest.param(PARAMETERS[1], 12, id="k3-m84-ip-nocollapse"),
])
def test_spark_equals_reference(spark, tmp_path_factory, params, seed):
    """Every output table equals the reference on ~12 seeded random corpora in one run."""
    tmp = tmp_path_factory.mktemp("phrases-parity")
    rng = random.Random(seed)
    pages = [p for n in range(12) for p in corpus(rng, n)]
    rows, docs = [], []
    for p in pages:
        text = p["sep"].join(p["tokens"])
        rows.append({"id": p["id"], "url": p["url"], "text": text, "ip": p["ip"]})
        host = host_of(p["url"])
        docs.append(RefDoc(p["id"], text, p["url"], host, domain_of(host), p["ip"]))
    table = tmp / "corpus.jsonl"
    table.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    cfg = merge_settings(PhrasesConfig, params, {"inputs": [str(table)], "output": str(tmp / "out"),
                                                 "overwrite": True, "top": 3}).validate()
    result = PhrasesJob.run(spark, cfg)
    ref = reference_phrases(docs, cfg)
    out = Path(cfg.output)
    urls = {r["id"]: r["url"] for r in rows}

    def read(name: str) -> list[dict]:
        return [r.asDict(recursive=True) for r in spark.read.parquet(str(out / name)).collect()]

    counts = {r["doc_id"]: (r["n_words"], r["n_popular"]) for r in read("doc_popular_counts")}
    n_words = {d.doc_id: len(words(d.text)) for d in docs}
    assert counts == {d: (n_words[d], ref.n_popular[d]) for d in ref.kept}

    phrases = sorted(read("popular_phrases"), key=lambda r: r["rank"])
    assert [(r["phrase"], r["n_documents"], r["n_samples"], r["example_url"]) for r in phrases] == \
        [(text, n, s, urls[d]) for text, n, s, d in ref.phrases]
    assert [r["rank"] for r in phrases] == list(range(1, len(phrases) + 1))

    popular_sizes = Counter(n for n in ref.counts.values() if n >= cfg.popular)
    assert {r["n_documents"]: r["n_shingles"] for r in read("shingle_occurrences")} == dict(popular_sizes)
    per_doc = Counter(ref.n_popular.values())
    assert {r["n_popular"]: r["n_documents"] for r in read("popular_per_document")} == dict(per_doc)

    covers = {r["doc_id"]: r for r in read("covering_sets")}
    assert set(covers) == set(ref.covers)
    for doc_id, picks in ref.covers.items():
        got = covers[doc_id]
        assert [(d["doc_id"], d["covered"], d["shared"], d["foreign"]) for d in got["donors"]] == picks, doc_id
        assert got["cover_size"] == len(picks) and got["uncovered"] == 0
        assert got["foreign_contribution"] == sum(c for _, c, _, f in picks if f)
    assert any(len(p) > 1 for p in ref.covers.values())  # the example exercises the greedy loop

    hosts = {r["host"]: r for r in read("host_stats")}
    assert set(hosts) == set(ref.hosts)
    for h, (n, mean, std, score, cover) in ref.hosts.items():
        got = hosts[h]
        assert got["n_pages"] == n and got["mean_popular"] == pytest.approx(mean)
        assert got["std_popular"] == pytest.approx(std, abs=1e-9) and got["monster_score"] == pytest.approx(score)
        assert got["mean_cover_size"] == (cover if cover is None else pytest.approx(cover))
    assert [r["host"] for r in sorted(read("monster_sites"), key=lambda r: r["rank"])] == ref.monsters
    assert "popular phrases" in result.summary()
