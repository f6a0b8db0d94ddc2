"""Parity: the Spark quilt job equals the plain in-memory reference of definitions §1.

Each example is a batch of small random corpora with disjoint vocabularies (every word carries
its corpus number), run through Spark as one table: no gram is shared across corpora, so the
union's answer is the union of per-corpus answers, and one Spark run checks many corpora.
Corpora contain exact duplicates, stitched pages (forcing ties between sources), pages shorter
than k, empty pages, non-ASCII words and underscores, and servers for every foreign rule.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tiers import examples, parameter_cases

from quiltdetect.common.config import merge_settings
from quiltdetect.documents.urls import domain_of, host_of
from quiltdetect.quilts.config import QuiltConfig
from quiltdetect.quilts.job import QuiltsJob
from quiltdetect.quilts.reference import RefDoc, reference_quilts

pytestmark = pytest.mark.spark

VOCAB = ["alpha", "beta", "gamma", "delta", "naïve", "straße", "東京", "x1", "École", "z", "øre", "42"]
SEPARATORS = [" ", "_", " - ", "\n", "__", ", ", "<>", " _ "]
IDS = ["a", "B", "b", "aa", "Ab", "é", "z9", "0", "10", "9", "_x", "ü-1", "doc"]
URLS = [
    "http://a.example.com/p", "https://b.example.com/q", "http://www.other.org/", "http://x.co.uk/y",
    "http://EXAMPLE.com:8080/", "http://shop.x.co.uk/z", "not a url", None,
]
IPS = [None, "10.0.0.1", "10.0.0.2", "192.0.2.7"]


@st.composite
def corpus(draw) -> list[dict]:
    """One small corpus: dicts with id, url, ip and the token list of each page."""
    vocab = VOCAB[: draw(st.integers(2, len(VOCAB)))]
    n_docs = draw(st.integers(1, 9))
    ids = draw(st.lists(st.sampled_from(IDS), min_size=n_docs, max_size=n_docs, unique=True))
    pages: list[dict] = []
    for doc_id in ids:
        kind = draw(st.sampled_from(["random", "stitch", "stitch", "dup", "empty", "short"]))
        if kind == "random" or not pages and kind in ("stitch", "dup"):
            tokens = draw(st.lists(st.sampled_from(vocab), max_size=25))
        elif kind == "stitch":
            tokens = []
            for _ in range(draw(st.integers(1, 4))):
                donor = draw(st.sampled_from(pages))["tokens"]
                start = draw(st.integers(0, max(0, len(donor) - 1)))
                tokens += donor[start : start + draw(st.integers(1, 8))]
                tokens += draw(st.lists(st.sampled_from(vocab), max_size=3))
        elif kind == "dup":
            tokens = list(draw(st.sampled_from(pages))["tokens"])
        elif kind == "empty":
            tokens = []
        else:
            tokens = draw(st.lists(st.sampled_from(vocab), min_size=1, max_size=3))
        pages.append({"id": doc_id, "url": draw(st.sampled_from(URLS)), "ip": draw(st.sampled_from(IPS)),
                      "tokens": tokens, "seps": draw(st.lists(st.sampled_from(SEPARATORS), min_size=30, max_size=30)),
                      "upper": draw(st.booleans())})
    return pages


def render(page: dict, prefix: str) -> str:
    """The page's text: words prefixed with the corpus tag, joined by assorted separators."""
    parts = []
    for i, token in enumerate(page["tokens"]):
        word = f"{prefix}{token}"
        parts.append(word.upper() if page["upper"] and i % 2 else word)
        parts.append(page["seps"][i % len(page["seps"])])
    return "".join(parts)


def spark_results(spark, tmp: Path, rows: list[dict], cfg: QuiltConfig) -> tuple[dict, dict]:
    table = tmp / "corpus.jsonl"
    table.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    cfg.inputs, cfg.output, cfg.overwrite, cfg.top = [str(table)], str(tmp / "out"), True, 0
    QuiltsJob.run(spark, cfg)
    quilts = {r["doc_id"]: r for r in (x.asDict(recursive=True) for x in spark.read.parquet(str(tmp / "out" / "quilts")).collect())}
    stats = {r["doc_id"]: r for r in (x.asDict() for x in spark.read.parquet(str(tmp / "out" / "doc_stats")).collect())}
    return quilts, stats


PARAMETERS = [
    dict(k=1, m=2, c=1, theta=0.0, foreign="none"),
    dict(k=2, m=3, c=1, theta=0.3, foreign="host"),
    dict(k=3, m=5, c=1, theta=0.5, foreign="domain"),
    dict(k=2, m=4, c=1, theta=0.0, foreign="ip"),
    dict(k=3, m=3, c=2, theta=0.2, foreign="none", count_occurrences=True),
    dict(k=5, m=50, c=1, theta=0.5, foreign="none"),
    dict(k=2, m=4, c=2, theta=0.1, foreign="host", phi=0.2),
]
# Settings whose rules another entry already covers with the small budget (foreign host, foreign
# none): checked with the larger budget only.
LARGER_BUDGET_ONLY = (1, 5)


@pytest.mark.parametrize(("params", "budget"), parameter_cases(PARAMETERS, 1, 3, more_only=LARGER_BUDGET_ONLY))
def test_spark_equals_reference(spark, tmp_path_factory, params, budget):
    examples(budget)(given(corpora=st.lists(corpus(), min_size=8, max_size=20))(check_parity))(
        spark, tmp_path_factory, params)


def check_parity(spark, tmp_path_factory, params, corpora):
    tmp = tmp_path_factory.mktemp("parity")
    rows, ref_docs = corpus_rows(corpora)
    cfg = merge_settings(QuiltConfig, params).validate(need_io=False)
    quilts, stats = spark_results(spark, tmp, rows, cfg)
    assert_reference(quilts, stats, ref_docs, cfg)


def corpus_rows(corpora: list[list[dict]]) -> tuple[list[dict], list[RefDoc]]:
    """The table rows and the reference's documents of a batch of corpora (disjoint vocabularies)."""
    rows, ref_docs = [], []
    for n, pages in enumerate(corpora):
        prefix = f"q{n:03d}"
        for page in pages:
            doc_id, text = f"{n:03d}/{page['id']}", render(page, prefix)
            rows.append({"id": doc_id, "url": page["url"], "text": text, "ip": page["ip"]})
            host = host_of(page["url"])
            ref_docs.append(RefDoc(doc_id, text, page["url"] or "", host, domain_of(host), page["ip"]))
    return rows, ref_docs


def assert_reference(quilts: dict, stats: dict, ref_docs: list[RefDoc], cfg: QuiltConfig) -> None:
    """quilts/ and doc_stats/ (by doc_id) equal the reference of definitions §1 on ``ref_docs``."""
    expected = reference_quilts(ref_docs, cfg.k, cfg.m, cfg.theta, cfg.foreign, cfg.count_occurrences, phi=cfg.phi)
    expected_quilts = {
        d: r for d, r in expected.items() if r.patchfrac >= cfg.theta and r.n_patch_grams and len(r.sources) >= cfg.c
    }
    assert set(quilts) == set(expected_quilts)
    for doc_id, ref in expected_quilts.items():
        got = quilts[doc_id]
        assert (got["n_grams"], got["n_patch_grams"]) == (ref.n_grams, ref.n_patch_grams), doc_id
        assert got["patchfrac"] == pytest.approx(ref.patchfrac, abs=0, rel=1e-15)
        assert [(s["doc_id"], s["covered"], s["shared"]) for s in got["sources"]] == ref.sources, doc_id
    # doc_stats: every document with grams, and the cover size of every patchy one
    assert set(stats) == set(expected)
    for doc_id, ref in expected.items():
        row = stats[doc_id]
        assert (row["n_grams"], row["n_patch_grams"]) == (ref.n_grams, ref.n_patch_grams)
        assert row["n_sources"] == len(ref.sources)
