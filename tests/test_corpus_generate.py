"""Synthetic corpus generator: determinism, structure, and planted ground truth (no Spark)."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

import testkit.corpus as gen  # test and benchmark support code, not in the wheel
from testkit.corpus.render import render_html
from testkit.shared import shared_data_or_skip

WORD = re.compile(r"[^\W_]+")


@pytest.fixture(scope="module")
def prose():
    return gen.load_prose(shared_data_or_skip())


@pytest.fixture(scope="module")
def corpus300(prose):
    return gen.generate(prose, 300, seed=7)


# --------------------------------------------------------------------------- reference quilt check


def _grams(text: str, k: int) -> set[tuple[str, ...]]:
    t = WORD.findall(text.lower())
    return {tuple(t[i : i + k]) for i in range(len(t) - k + 1)}


def reference_quilts(docs: dict[str, str], k=5, m=50, c=4, theta=0.5):
    """Plain-Python definitions §1: patchfrac and greedy sources for every document."""
    grams = {d: _grams(t, k) for d, t in docs.items()}
    postings: dict[tuple, list[str]] = defaultdict(list)
    for d in sorted(grams):
        for g in grams[d]:
            postings[g].append(d)
    out = {}
    for d, gs in grams.items():
        pg = {g for g in gs if 1 < len(postings[g]) <= m}
        frac = len(pg) / len(gs) if gs else 0.0
        cover: dict[str, set] = defaultdict(set)
        for g in pg:
            for d2 in postings[g]:
                if d2 != d:
                    cover[d2].add(g)
        total = {d2: len(s) for d2, s in cover.items()}
        uncovered = set(pg)
        sources = []
        while uncovered and cover:
            best = min(cover, key=lambda d2: (-len(cover[d2] & uncovered), -total[d2], d2))
            gain = cover[best] & uncovered
            if not gain:
                break
            sources.append(best)
            uncovered -= gain
            del cover[best]
        out[d] = (frac, sources, frac >= theta and len(sources) >= c)
    return out


def test_reference_on_toy_example():
    a = "one two three four five six seven"
    docs = {
        "q": a + " alpha beta gamma delta epsilon",
        "s1": a,
        "s2": "alpha beta gamma delta epsilon",
    }
    res = reference_quilts(docs, c=2)
    assert res["q"][1] == ["s1", "s2"] and res["q"][2]


# --------------------------------------------------------------------------- tests


def test_load_prose(prose):
    licences = Counter(d.licence for d in prose)
    assert licences["public-domain"] >= 100 and licences["CC-BY-SA"] >= 100
    assert sum(len(d.sentences) for d in prose) > 30_000
    assert all(d.sentences for d in prose)


def test_deterministic_bytes(prose, tmp_path):
    a = gen.generate(prose, 120, seed=3)
    b = gen.generate(prose, 120, seed=3)
    gen.write_corpus_table(a, tmp_path / "a.jsonl", "jsonl")
    gen.write_corpus_table(b, tmp_path / "b.jsonl", "jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    gen.write_warc(a, tmp_path / "a" / "c.warc.gz")  # same file name: it is in warcinfo
    gen.write_warc(b, tmp_path / "b" / "c.warc.gz")
    assert (tmp_path / "a" / "c.warc.gz").read_bytes() == (
        tmp_path / "b" / "c.warc.gz"
    ).read_bytes()
    c = gen.generate(prose, 120, seed=4)
    assert [p.text for p in c.pages] != [p.text for p in a.pages]


def test_open_vocabulary_remixes_every_word_from_a_growing_vocabulary(prose):
    """``--vocabulary open`` (testkit/corpus/pool.py): remix passes replace every word, drawing
    from a vocabulary whose distinct words keep growing; pass 0 and the default are as before."""
    import numpy as np

    from testkit.corpus.pool import OpenVocabulary, SentencePool

    docs = prose[:60]
    pools = {v: SentencePool(docs, np.random.default_rng(5), v) for v in ("prose", "open")}
    doc = pools["open"].main_docs[0]
    original = WORD.findall(" ".join(docs[doc].sentences[:4]))
    assert pools["open"]._render(doc, 0, 4, 0) == pools["prose"]._render(doc, 0, 4, 0) == list(docs[doc].sentences[:4])
    default = WORD.findall(" ".join(pools["prose"]._render(doc, 0, 4, 1)))
    remixed = WORD.findall(" ".join(pools["open"]._render(doc, 0, 4, 1)))
    assert len(default) == len(remixed) == len(original)
    assert sum(a != b for a, b in zip(original, default, strict=True)) <= len(original) // 3 + 1
    assert sum(a != b for a, b in zip(original, remixed, strict=True)) > 0.8 * len(original)

    draws = OpenVocabulary([d.sentences for d in docs], np.random.default_rng(9)).draw(400_000)
    assert draws == OpenVocabulary([d.sentences for d in docs], np.random.default_rng(9)).draw(400_000)
    first, second = len(set(draws[:200_000])), len(set(draws))
    assert 1.3 * first < second < 2 * first  # Heaps' law: 2x the words, ~2^0.66 the vocabulary
    counts = Counter(draws)
    assert 0.015 < counts.most_common(1)[0][1] / len(draws) < 0.06  # the most frequent word
    assert all(WORD.fullmatch(w) and w == w.lower() for w in counts)  # one lower-case word each


def test_structure(corpus300):
    pages = corpus300.pages
    assert len(pages) == 300
    assert len({p.id for p in pages}) == 300 and len({p.url for p in pages}) == 300
    assert all(re.fullmatch(r"<urn:uuid:[0-9a-f-]{36}>", p.id) for p in pages)
    kinds = Counter(t.kind for t in corpus300.truth)
    assert 0.02 <= kinds["quilt"] / 300 <= 0.03
    assert kinds["control"] >= 1 and kinds["mirror"] >= 1 and kinds["near_copy"] >= 1
    sizes = sorted((len(s.page_indices) for s in corpus300.sites), reverse=True)
    assert sizes[0] >= 10 and sizes[-1] == 1  # skewed: big sites and singletons
    assert len({s.domain for s in corpus300.sites}) == len(corpus300.sites)
    by_ip = Counter(s.ip for s in corpus300.sites)
    assert len(by_ip) < len(corpus300.sites)  # some organisations host several domains
    words = [len(WORD.findall(p.text)) for p in pages if p.kind == "original"]
    assert min(words) >= 80 and 300 <= sorted(words)[len(words) // 2] <= 700


def test_html_has_text_and_markup(corpus300):
    p = next(p for p in corpus300.pages if p.kind == "quilt")
    h = render_html(p, corpus300.sites[p.site])
    for tag in (
        "<title>",
        "<nav>",
        "<h1>",
        "<p>",
        "<script>",
        "<style>",
        "<footer>",
        'name="description"',
    ):
        assert tag in h
    # visible text = the html with title/head/script/style removed
    body = re.sub(r"(?s)<head>.*?</head>|<!--.*?-->|<[^>]+>", " ", h)
    import html as htmlmod

    assert WORD.findall(htmlmod.unescape(body).lower()) == WORD.findall(p.text.lower())


def test_original_sentences_unique(corpus300):
    seen: dict[str, str] = {}
    mirrored = {t.doc_id for t in corpus300.truth if t.kind in ("mirror", "near_copy")}
    for p in corpus300.pages:
        if p.kind != "original" or p.id in mirrored:
            continue
        for para in p.paragraphs:
            assert seen.setdefault(para, p.id) == p.id


def test_planted_quilts_are_quilts(corpus300):
    docs = {p.id: p.text for p in corpus300.pages}
    res = reference_quilts(docs)
    # a source is "found" if greedy picked it or one of its copies
    copies: dict[str, set[str]] = defaultdict(set)
    for t in corpus300.truth:
        if t.kind in ("mirror", "near_copy"):
            copies[t.sources[0][0]].add(t.doc_id)
    quilts = [t for t in corpus300.truth if t.kind == "quilt"]
    assert quilts
    for t in quilts:
        frac, sources, quilted = res[t.doc_id]
        assert quilted, (t.url, frac, len(sources))
        assert len(t.sources) >= 4
        for sid, _ in t.sources:
            assert ({sid} | copies[sid]) & set(sources), (t.url, sid)
    for t in corpus300.truth:
        if t.kind == "control":
            assert not res[t.doc_id][2], t.url
    # Any other quilted page is a copy pair member: a near-copy covers all but the grams
    # around its edits, which ordinary phrases ("the fair labor standards act") shared
    # with 2-3 unrelated pages then cover -- a real weakness of the definition without φ.
    pairs = {
        (t.doc_id, t.sources[0][0]) for t in corpus300.truth if t.kind in ("mirror", "near_copy")
    }
    pairs |= {(b, a) for a, b in pairs}
    planted = {t.doc_id for t in quilts}
    for d, r in res.items():
        if r[2] and d not in planted:
            assert any((d, s) in pairs for s in r[1]), d


def test_writers(corpus300, tmp_path):
    from warcio.archiveiterator import ArchiveIterator

    gen.write_warc(corpus300, tmp_path / "c.warc.gz")
    types = Counter()
    with open(tmp_path / "c.warc.gz", "rb") as fh:
        for rec in ArchiveIterator(fh):
            types[rec.rec_type] += 1
            if rec.rec_type == "response":
                assert rec.rec_headers.get_header("WARC-IP-Address")
                assert rec.http_headers.get_header("Content-Type") == "text/html; charset=utf-8"
    assert types == {"warcinfo": 1, "request": 300, "response": 300}
    out = gen.write_corpus_table(corpus300, tmp_path / "pq", "parquet")
    import pyarrow.parquet as pq

    tab = pq.read_table(out)
    assert tab.column_names == ["id", "url", "text", "ip"] and tab.num_rows == 300
    gen.write_truth(corpus300, tmp_path / "t.jsonl")
    rows = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert {r["kind"] for r in rows} == {"quilt", "control", "mirror", "near_copy"}
    assert set(rows[0]) == {"doc_id", "url", "kind", "sources", "attributed"}


def test_cli(prose, tmp_path):
    shared = shared_data_or_skip()
    out = tmp_path / "x.jsonl"
    rc = gen.main(
        ["--shared-data", str(shared), "--pages", "60", "--format", "jsonl", "--out", str(out)]
    )
    assert rc == 0 and out.exists() and (tmp_path / "x.truth.jsonl").exists()
    assert len(out.read_text().splitlines()) == 60


def test_bundled_sample_matches_generator(prose):
    sample = (
        Path(__file__).resolve().parents[1] / "data" / "truth" / "synthetic-quilts.truth.jsonl"
    )
    if not sample.exists():
        pytest.skip("bundled sample not present")
    c = gen.generate(prose, 400, seed=1)
    lines = [json.dumps(t.to_json(), ensure_ascii=False) for t in c.truth]
    assert sample.read_text(encoding="utf-8").splitlines() == lines
    with gzip.open(sample.parents[1] / "sample" / "synthetic-quilts.warc.gz", "rb") as fh:
        assert fh.read(8) == b"WARC/1.0"
