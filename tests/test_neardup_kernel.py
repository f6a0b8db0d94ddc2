"""Kernel tests of the near-duplicate fingerprints (no Spark)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiltdetect.kernel.grams import fmix64
from quiltdetect.neardup import calibrate as cal
from quiltdetect.neardup.fingerprints import fingerprint, fingerprint_row
from quiltdetect.neardup.shingles import shingles
from quiltdetect.neardup.simhash import (
    N_BITS,
    SIMHASH_SEEDS,
    c_similarity,
    n_pieces,
    pack_bits,
    pieces,
    simhash,
    unpack_bits,
)
from quiltdetect.neardup.supershingles import (
    MINHASH_MULTIPLIERS,
    MINHASH_SEEDS,
    b_similarity,
    minvalues,
    supershingles,
    supershingles_of,
)
from quiltdetect.neardup.tokens import image_term, page_terms, term_hashes, text_terms, url_terms

u64 = st.integers(0, 2**64 - 1)


def test_text_terms_break_urls_at_slashes_and_dots():
    text = "See http://www.Example.com/a-b/page.html, or www.foo.org/x now"
    assert text_terms(text) == ["see", "http:", "www", "example", "com", "a-b", "page", "html",
                                "or", "www", "foo", "org", "x", "now"]
    assert text_terms("plain_words, École 42") == ["plain", "words", "école", "42"]
    assert url_terms("https://a.b/c.d/") == ["https:", "a", "b", "c", "d"]


def test_image_terms_follow_the_host_rule():
    assert image_term("http://www.site.com/img/logo.PNG", "www.site.com") == "logo.png"
    assert image_term("http://cdn.other.net/img/logo.png", "www.site.com") == "http://cdn.other.net/img/logo.png"
    assert image_term("", "www.site.com") is None
    terms = page_terms("hello world", "http://www.site.com/p", ["http://www.site.com/a/b.gif", "http://x.org/c.gif"])
    assert terms == ["hello", "world", "b.gif", "http://x.org/c.gif"]


def test_shingles_window_and_wrap():
    h = term_hashes(list("abcdef"))
    assert shingles(h, 3).shape == (4,)
    assert shingles(h, 3, wrap=True).shape == (6,)  # Fetterly: n tokens -> n shingles
    assert shingles(h[:2], 3).shape == (1,)  # shorter than k: one shingle of all tokens
    assert shingles(h[:2], 3, wrap=True).shape == (2,)
    assert shingles(h[:0], 3).shape == (0,)
    with pytest.raises(ValueError, match="k must be"):
        shingles(h, 0)


@given(st.lists(u64, min_size=1, max_size=300, unique=True))
@settings(max_examples=50, deadline=None)
def test_minvalues_equal_the_definition(values):
    s = np.array(values, dtype=np.uint64)
    naive = np.array([min(((v ^ int(seed)) * int(mult)) % 2**64 for v in values)
                      for seed, mult in zip(MINHASH_SEEDS, MINHASH_MULTIPLIERS, strict=True)], dtype=np.uint64)
    assert np.array_equal(minvalues(s), naive)


def test_minvalues_chunked_equal_one_block(monkeypatch):
    s = np.random.default_rng(1).integers(0, 2**64, size=10_000, dtype=np.uint64)
    whole = minvalues(s)
    monkeypatch.setattr("quiltdetect.neardup.supershingles.CHUNK", 7)
    assert np.array_equal(minvalues(s), whole)


def test_supershingles_batch_equals_one_at_a_time():
    rng = np.random.default_rng(2)
    mins = rng.integers(0, 2**64, size=(5, 84), dtype=np.uint64)
    batch = supershingles_of(mins)
    assert batch.shape == (5, 6)
    for row, expected in zip(mins, batch, strict=True):
        assert np.array_equal(supershingles_of(row), expected)
    changed = mins[0].copy()
    changed[14 * 3 + 5] ^= np.uint64(1)  # one minvalue of run 3 changes: only supershingle 3 does
    assert b_similarity(supershingles_of(changed), batch[0]) == 5
    assert supershingles(np.empty(0, dtype=np.uint64)) is None
    assert b_similarity(None, batch[0]) == 0


def test_b_similarity_tracks_resemblance():
    """Pages sharing most shingles agree on more supershingles than pages sharing few."""
    rng = np.random.default_rng(3)
    base = rng.integers(0, 2**64, size=2000, dtype=np.uint64)
    near = np.concatenate([base[:1990], rng.integers(0, 2**64, size=10, dtype=np.uint64)])
    far = np.concatenate([base[:1000], rng.integers(0, 2**64, size=1000, dtype=np.uint64)])
    s = supershingles(base)
    assert b_similarity(s, supershingles(base)) == 6
    assert b_similarity(s, supershingles(near)) >= 2
    assert b_similarity(s, supershingles(far)) == 0


@given(st.lists(st.sampled_from([f"w{i}" for i in range(30)]), min_size=1, max_size=60))
@settings(max_examples=40, deadline=None)
def test_simhash_equals_the_coordinate_sum(tokens):
    hashes = term_hashes(tokens)
    total = np.zeros(N_BITS)
    for h in hashes:  # one token at a time: +-1 per coordinate, from the bits of fmix64(h ^ r_j)
        with np.errstate(over="ignore"):
            words = fmix64(np.uint64(h) ^ SIMHASH_SEEDS)
        bits = np.array([(int(words[i // 64]) >> (i % 64)) & 1 for i in range(N_BITS)])
        total += 2 * bits - 1
    assert np.array_equal(unpack_bits(simhash(hashes)), (total > 0).astype(np.uint8))


def test_simhash_weights_by_frequency_and_packs_losslessly():
    a = term_hashes(["x", "y"])
    assert not np.array_equal(simhash(term_hashes(["x", "x", "x", "y"])), simhash(a))
    bits = np.random.default_rng(4).integers(0, 2, size=N_BITS).astype(bool)
    assert np.array_equal(unpack_bits(pack_bits(bits)).astype(bool), bits)
    assert c_similarity(simhash(a), simhash(a)) == N_BITS
    assert simhash(np.empty(0, dtype=np.uint64)).tolist() == [0] * 6


@given(st.integers(300, 384), st.data())
@settings(max_examples=40, deadline=None)
def test_pieces_catch_every_pair_within_the_threshold(threshold, data):
    """Pigeonhole: two simhashes with C-similarity >= t share at least one piece."""
    count = n_pieces(threshold)
    a = np.random.default_rng(data.draw(st.integers(0, 1000))).integers(0, 2**64, size=6, dtype=np.uint64)
    flips = data.draw(st.lists(st.integers(0, N_BITS - 1), max_size=N_BITS - threshold, unique=True))
    bits = unpack_bits(a).astype(bool)
    bits[flips] = ~bits[flips]
    b = pack_bits(bits)
    assert c_similarity(a, b) == N_BITS - len(flips) >= threshold
    assert np.any(pieces(a, count) == pieces(b, count))
    assert n_pieces(373) == 12 and pieces(a, 12).max() < 2**32


def test_fingerprint_row_as_spark_longs():
    n, ss, sh, pc = fingerprint_row("one two three four five six seven eight nine", None, None, 8, False, 12)
    assert n == 9 and len(ss) == 6 and len(sh) == 6 and len(pc) == 12
    assert all(isinstance(v, int) and -(2**63) <= v < 2**63 for v in ss + sh)
    assert fingerprint_row("", None, None, 8, False, 12) == (0, None, None, None)
    fp = fingerprint("one two three four five six seven eight nine")
    assert np.array_equal(np.array(ss, dtype=np.int64).view(np.uint64), fp.supershingles)


def test_calibration_scores_and_choice():
    truth = np.array([True, True, False, False])
    s = cal.score("b", {"b_threshold": 2}, np.array([True, False, True, False]), truth)
    assert (s.tp, s.fp, s.fn) == (1, 1, 1) and s.f1 == pytest.approx(0.5)
    b = np.array([6, 3, 1, 0])
    c = np.array([384, 370, 360, 200])  # perfect c thresholds: 361..370
    chosen = {alg: cal.best(scores) for alg, scores in cal.sweep(b, c, truth).items()}
    assert chosen["b"].thresholds == {"b_threshold": 2} and chosen["b"].f1 == 1.0  # 2 and 3 tie: lower middle
    assert chosen["c"].thresholds == {"c_threshold": 365}  # ties 361..370: the middle of the plateau
    assert chosen["combined"].f1 == 1.0
