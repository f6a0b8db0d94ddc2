"""The phrase kernel (no Spark): sampled shingles, phrase texts, greedy covering sets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiltdetect.kernel.words import batch_word_hashes, word_hashes
from quiltdetect.neardup.shingles import shingles
from quiltdetect.neardup.supershingles import minvalues, supershingles
from quiltdetect.phrases.covering import greedy_covering_set
from quiltdetect.phrases.reference import circle, fingerprint, select_phrases
from quiltdetect.phrases.sampling import (
    phrase_texts,
    sample,
    sample_batch,
    sample_hashes,
    select,
    selectors,
)

TEXT = "The quick brown fox jumps over the lazy dog, and the dog sleeps on."


def test_selectors_extend_the_near_duplicate_family():
    from quiltdetect.neardup.supershingles import MINHASH_MULTIPLIERS, MINHASH_SEEDS

    seeds, mults = selectors(100)
    assert seeds.shape == (100,) and np.array_equal(seeds[:84], MINHASH_SEEDS)
    assert np.array_equal(mults[:84], MINHASH_MULTIPLIERS) and np.all(mults & np.uint64(1))
    assert np.array_equal(selectors(7)[0], MINHASH_SEEDS)  # fewer than 84: still the 84 for supershingles
    with pytest.raises(ValueError, match="m must be >= 1"):
        selectors(0)


def test_sample_matches_near_duplicate_minvalues_and_supershingles():
    phrases = shingles(word_hashes(TEXT), 5, wrap=True)
    s = sample(TEXT)
    assert s.n_words == 14 and s.shingles.shape == (84,)
    seeds, mults = selectors(84)
    with np.errstate(over="ignore"):
        assert np.array_equal((s.shingles ^ seeds) * mults, minvalues(phrases))
    assert np.array_equal(s.supershingles, supershingles(phrases))
    assert set(s.shingles.tolist()) <= set(phrases.tolist())
    assert sample("") is None and sample(None) is None and sample("_ - _") is None


def test_select_is_chunked_like_one_block(monkeypatch):
    phrases = np.unique(np.random.default_rng(3).integers(0, 2**64, size=5000, dtype=np.uint64))
    seeds, mults = selectors(90)
    whole = select(phrases, seeds, mults)
    monkeypatch.setattr("quiltdetect.phrases.sampling.CHUNK", 7)
    from quiltdetect.phrases import sampling

    chunked = sampling.select(phrases, seeds, mults)
    assert np.array_equal(whole[0], chunked[0]) and np.array_equal(whole[1], chunked[1])
    with pytest.raises(ValueError, match="empty"):
        select(np.empty(0, np.uint64), seeds, mults)


@given(st.lists(st.sampled_from(["a", "b", "c", "ü", "9", "dog"]), min_size=1, max_size=12), st.integers(1, 6))
@settings(max_examples=60, deadline=None)
def test_sample_equals_reference_selection(tokens, k):
    text = " ".join(tokens)
    chosen, _ = select_phrases(set(circle(tokens, k)), 10)
    s = sample(text, k, 10)
    assert s.shingles.tolist() == [fingerprint(p) for p in chosen]
    # every selected fingerprint maps back to its words
    assert phrase_texts(text, k, s.shingles.view(np.int64).tolist()) == [" ".join(p) for p in chosen]


@given(st.lists(st.one_of(st.none(), st.lists(st.sampled_from(["a", "b", "c", "dog", "-", "9"]), max_size=30)
                          .map(" ".join)), max_size=12), st.integers(1, 6), st.sampled_from([1, 10, 84, 100]))
@settings(max_examples=60, deadline=None)
def test_sample_batch_equals_one_text_at_a_time(texts, k, m):
    hashes, counts = batch_word_hashes(texts)
    table = selectors(m)
    got = sample_batch(hashes, counts, k, m, table)
    ends = np.cumsum(counts)
    expected = [(i, sample_hashes(hashes[e - c : e], k, m, table)) for i, (c, e) in enumerate(zip(counts, ends, strict=True))]
    expected = [(i, s) for i, s in expected if s is not None]  # texts without words are left out
    assert got.rows.tolist() == [i for i, _ in expected]
    assert got.shingles.shape == (len(expected), m) and got.supershingles.shape == (len(expected), 6)
    for row, (_, s) in enumerate(expected):
        assert got.n_words[row] == s.n_words
        assert np.array_equal(got.shingles[row], s.shingles)
        assert np.array_equal(got.supershingles[row], s.supershingles)


def test_one_word_document_is_k_repetitions():
    s = sample("Hello", 5, 3)
    assert phrase_texts("Hello", 5, s.shingles.tolist()) == ["hello hello hello hello hello"] * 3
    assert phrase_texts("a b c", 2, [12345]) == [None]


def naive_cover(meets, shared, donors, foreign):
    uncovered = set(range(meets.shape[1]))
    uncovered = {i for i in uncovered if meets[:, i].any()}
    out = []
    while True:
        gains = [len({i for i in uncovered if meets[j, i]}) for j in range(len(donors))]
        pool = [j for j in range(len(donors)) if gains[j] and (foreign is None or foreign[j])]
        pool = pool or [j for j in range(len(donors)) if gains[j]]
        if not pool:
            return out
        j = min(pool, key=lambda j: (-gains[j], -shared[j], donors[j]))
        out.append((int(donors[j]), gains[j], int(shared[j]), bool(foreign[j]) if foreign is not None else False))
        uncovered -= {i for i in range(meets.shape[1]) if meets[j, i]}


@given(st.integers(0, 10**6), st.integers(0, 25), st.integers(0, 12), st.booleans())
@settings(max_examples=200, deadline=None)
def test_greedy_cover_equals_naive_loop(seed, d, p, with_foreign):
    rng = np.random.default_rng(seed)
    meets = rng.random((d, p)) < rng.uniform(0.05, 0.6)
    shared = meets.sum(axis=1) + rng.integers(0, 3, size=d)
    donors = rng.permutation(1000)[:d].astype(np.int64)
    foreign = rng.random(d) < 0.5 if with_foreign else None
    cover = greedy_covering_set(meets, shared, donors, foreign)
    got = list(zip(cover.donors.tolist(), cover.covered.tolist(), cover.shared.tolist(), cover.foreign.tolist(),
                   strict=True))
    assert got == naive_cover(meets, shared, donors, foreign)
    assert cover.covered.sum() == meets.any(axis=0).sum()
    assert cover.foreign_contribution == sum(c for _, c, _, f in got if f)


def test_cover_tie_breaks():
    # donors 5 and 3 meet the same two shingles; 5 shares more in total, so it goes first;
    # donors 7, 2 and 11 then tie on gain and shared: the smallest id wins
    meets = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=bool)
    shared = np.array([4, 2, 1, 1, 1])
    donors = np.array([5, 3, 7, 2, 11])
    cover = greedy_covering_set(meets, shared, donors)
    assert cover.donors.tolist() == [5, 2, 11] and cover.covered.tolist() == [2, 1, 1]
    # foreign preference: a same-server donor only after no foreign one covers anything
    cover = greedy_covering_set(meets, shared, donors, np.array([False, True, True, False, False]))
    assert cover.donors.tolist() == [3, 7, 11] and cover.foreign.tolist() == [True, True, False]
    assert cover.foreign_contribution == 3
    empty = greedy_covering_set(np.zeros((0, 4), bool), np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert len(empty) == 0 and empty.foreign_contribution == 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 11), min_size=0, max_size=6), min_size=0, max_size=40),
       st.integers(2, 4), st.integers(0, 3))
def test_group_buckets_and_counts_equal_counting_every_triple(samples, popular, skip):
    """Every (selector, shingle) group counted by bucket and sort = counting the triples one by one;
    the shingles reach every bit (top bits pick the bucket), and lists may be short or empty."""
    from collections import Counter

    from quiltdetect.phrases.groups import GROUP_BITS, count_groups, group_buckets

    m = 6
    spread = np.array([0, 1, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 3 << 62, 5, 2**62 + 7, 2**63 + 1, 9, 2**64 - 2],
                      dtype=np.uint64)
    values = np.array([spread[v] for s in samples for v in s], dtype=np.uint64)
    offsets = np.cumsum([0] + [len(s) for s in samples]).astype(np.int64)
    # a slice of a larger batch: offsets that do not start at 0
    values = np.concatenate([np.full(skip, 7, np.uint64), values])
    offsets = offsets + skip
    split = group_buckets(values[skip:].view(np.int64), offsets, m)
    assert split.bounds.shape[0] == (m << GROUP_BITS) + 1
    expected = Counter((i, int(spread[v])) for s in samples for i, v in enumerate(s))
    found, n_groups = {}, 0
    for b in range(m << GROUP_BITS):
        part = split.shingles[split.bounds[b]:split.bounds[b + 1]]
        assert all((b >> GROUP_BITS, int(v) >> (64 - GROUP_BITS)) == divmod(b, 1 << GROUP_BITS) for v in part)
        counted = count_groups(part, popular)
        n_groups += counted.n_groups
        assert list(counted.shingles) == sorted(counted.shingles)
        found.update({(b >> GROUP_BITS, int(s)): int(n) for s, n in zip(counted.shingles, counted.n_documents, strict=True)})
    assert n_groups == len(expected)
    assert found == {g: n for g, n in expected.items() if n >= popular}


def test_group_buckets_refuse_more_shingles_than_selectors():
    from quiltdetect.phrases.groups import group_buckets

    with pytest.raises(ValueError, match="more than m = 2"):
        group_buckets(np.arange(3, dtype=np.int64), np.array([0, 3]), 2)
