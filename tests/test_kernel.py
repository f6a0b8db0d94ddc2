"""Kernel tests: tokenisation, fingerprints and the greedy cover, without Spark."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiltdetect.kernel import distinct_grams, gram_fingerprints, greedy_cover, word_hashes, words
from quiltdetect.kernel.murmur import PAD, hash64_many
from quiltdetect.kernel.words import WORD_SEED, batch_word_hashes, batch_words, hash_word
from quiltdetect.quilts.reference import greedy_sources


def test_words_follow_definitions_0():
    assert words("Hello_World, naïve CAFÉ 42x-y  Straße") == ["hello", "world", "naïve", "café", "42x", "y", "strasse"]
    assert words("") == [] and words(None) == []
    assert words("___ --- !!!") == []


def test_word_hashes_match_one_at_a_time_path():
    text = "the quick brown fox jumps over the lazy dog THE"
    batch = word_hashes(text)
    assert batch.dtype == np.uint64
    assert [int(h) for h in batch] == [hash_word(w) for w in words(text)]
    assert batch[0] == batch[6] == batch[9]  # same word, same hash, case-folded


@given(st.lists(st.binary(max_size=100), max_size=30), st.integers(0, 2**32 - 1))
@settings(max_examples=300, deadline=None)
def test_vectorised_murmur_equals_mmh3(keys, seed):
    import mmh3

    buf = np.frombuffer(b"".join(keys) + bytes(PAD), dtype=np.uint8)
    lengths = np.array([len(k) for k in keys], dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    got = hash64_many(buf, starts, lengths, seed)
    assert [int(h) for h in got] == [mmh3.hash64(k, seed, signed=False)[0] for k in keys]


# Characters where a byte-level tokeniser could go wrong: multi-byte letters and digits of every
# UTF-8 width, non-word multi-byte characters, case mappings that change the byte length or the
# class (İ lowers to i + a combining dot, which is not a word character), the final sigma, "_".
# Since issue 61 also: marks of every kind, invisible characters, spaceless scripts (Han, Kana,
# Thai letters), Hangul syllables and jamo, full-width forms, compatibility characters.
_TRICKY = ("aZ09_ -.,'\n\té€’—©ßİΣσςΑ中文字𝔘𝟘😀\u0301\u0307ǅﬁ٣"
           "\u00ad\u200b\u200dहिन्दीภาษาไทย่ี้ັ្ខ မြန်こカー한\u1100\u1161\u11a8ＡＢ１½™\u00a8\u0e33\u3099")


@given(st.lists(st.one_of(st.none(), st.text(alphabet=_TRICKY, max_size=60), st.text(max_size=40)), max_size=12))
@settings(max_examples=400, deadline=None)
def test_batch_word_hashes_equal_the_per_text_path(texts):
    hashes, counts = batch_word_hashes(texts)
    assert counts.tolist() == [len(words(t)) for t in texts]
    expected = [int(h) for t in texts for h in word_hashes(t)]
    assert hashes.dtype == np.uint64 and [int(h) for h in hashes] == expected


@given(st.lists(st.one_of(st.none(), st.text(alphabet=_TRICKY, max_size=60), st.text(max_size=40)), max_size=12))
@settings(max_examples=300, deadline=None)
def test_batch_words_equal_the_per_text_path(texts):
    data, offsets, counts = batch_words(texts)
    assert counts.tolist() == [len(words(t)) for t in texts]
    got = pa.LargeStringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(data.tobytes()))
    assert got.to_pylist() == [w for t in texts for w in words(t)]


def test_batch_word_hashes_on_long_words_and_empty_texts():
    long_word = "x" * 16 + "é" * 20 + "9"  # 57 bytes: three blocks and a tail
    texts = ["", None, f"A {long_word} b", "ΣΑΣ. σας", "", "end"]
    hashes, counts = batch_word_hashes(texts)
    assert counts.tolist() == [0, 0, 3, 2, 0, 1]
    assert int(hashes[1]) == mmh3_hash(long_word.lower())  # (its normal form)
    assert [int(h) for h in hashes] == [int(h) for t in texts for h in word_hashes(t)]
    empty, none = batch_word_hashes([]), batch_word_hashes([None, ""])
    assert empty[0].size == 0 and empty[1].size == 0 and none[1].tolist() == [0, 0]


def mmh3_hash(word: str) -> int:
    import mmh3

    return mmh3.hash64(word, WORD_SEED, signed=False)[0]


def test_gram_fingerprints_shape_and_order_sensitivity():
    h = word_hashes("a b c d e f")
    assert gram_fingerprints(h, 5).shape == (2,)
    assert gram_fingerprints(h, 6).shape == (1,)
    assert gram_fingerprints(h, 7).shape == (0,)
    assert gram_fingerprints(word_hashes("a b"), 2)[0] != gram_fingerprints(word_hashes("b a"), 2)[0]
    with pytest.raises(ValueError, match="k must be"):
        gram_fingerprints(h, 0)


def test_murmur_and_fingerprints_across_their_slices():
    """Both hash a slice of ``CHUNK`` keys at a time: many keys, short and long mixed, give
    what one key at a time gives, and the fingerprints the chain of the definition."""
    import mmh3

    from quiltdetect.kernel.grams import _MIX
    from quiltdetect.kernel.murmur import CHUNK, fmix64

    rng = np.random.default_rng(7)
    lengths = rng.choice([0, 1, 3, 8, 9, 15, 16, 17, 40], size=2 * CHUNK + 123)
    keys = [rng.bytes(int(n)) for n in lengths]
    buf = np.frombuffer(b"".join(keys) + bytes(PAD), dtype=np.uint8)
    starts = np.cumsum(lengths) - lengths
    got = hash64_many(buf, starts, lengths, 99)
    assert [int(h) for h in got] == [mmh3.hash64(k, 99, signed=False)[0] for k in keys]

    hashes = rng.integers(0, 2**64, size=CHUNK + 77, dtype=np.uint64)
    for k in (1, 5):
        expected = fmix64(hashes[:hashes.shape[0] - k + 1])
        for j in range(1, k):
            expected = fmix64((expected * _MIX) ^ hashes[j:j + expected.shape[0]])
        assert np.array_equal(gram_fingerprints(hashes, k), expected)


def test_gram_fingerprint_equals_gram_of_the_same_words_elsewhere():
    one = gram_fingerprints(word_hashes("x y one two three four five z"), 5)
    two = gram_fingerprints(word_hashes("one two three four five"), 5)
    assert two[0] == one[2]


@given(st.lists(st.sampled_from(["a", "b", "c", "d", "é", "ß", "7"]), max_size=40), st.integers(1, 6))
@settings(max_examples=200, deadline=None)
def test_distinct_grams_is_the_set_of_word_kgrams(tokens, k):
    text = " ".join(tokens)
    grams, counts = distinct_grams(text, k)
    kg = [tuple(tokens[i : i + k]) for i in range(len(tokens) - k + 1)]
    assert len(grams) == len(set(kg))  # no collisions on small inputs
    assert int(counts.sum()) == len(kg)
    assert grams.dtype == np.int64 and bool(np.all(grams[1:] > grams[:-1]))


def test_greedy_cover_tie_breaks():
    # 10, 11, 12 each cover 3 new grams; 12 shares 3, 10 and 11 share 3 too -> smallest id 10.
    grams = np.array([1, 2, 3, 3, 4, 5, 1, 2, 5, 6], dtype=np.int64)
    sources = np.array([10, 10, 10, 11, 11, 11, 12, 12, 12, 13], dtype=np.int64)
    cover = greedy_cover(grams, sources)
    assert cover.sources.tolist() == [10, 11, 13]
    assert cover.covered.tolist() == [3, 2, 1]
    assert cover.shared.tolist() == [3, 3, 1]


def test_greedy_cover_prefers_more_shared_on_equal_gain():
    # After 20 covers {1,2,3}, 21 and 22 both gain 1 ({4}); 22 shares more in total (3 vs 2).
    grams = np.array([1, 2, 3, 3, 4, 1, 2, 4], dtype=np.int64)
    sources = np.array([20, 20, 20, 21, 21, 22, 22, 22], dtype=np.int64)
    assert greedy_cover(grams, sources).sources.tolist() == [20, 22]


def test_greedy_cover_empty_and_duplicates():
    assert len(greedy_cover(np.empty(0, np.int64), np.empty(0, np.int64))) == 0
    cover = greedy_cover(np.array([5, 5, 5], np.int64), np.array([3, 3, 3], np.int64))
    assert cover.sources.tolist() == [3] and cover.covered.tolist() == [1] and cover.shared.tolist() == [1]
    with pytest.raises(ValueError, match="differ in shape"):
        greedy_cover(np.array([1], np.int64), np.array([1, 2], np.int64))


def test_greedy_cover_unit_gain_tail_keeps_the_tie_break_order():
    # 1 covers {1, 2, 6, 7} first; then no source gains more than 1. Gram 5 only in 50 (shares 3),
    # gram 3 in 31 (shares 2) and 30 (shares 1), gram 4 in 40 and 41 (share 1 each: smallest id).
    grams = np.array([1, 2, 6, 7, 5, 1, 2, 3, 1, 3, 4, 4], dtype=np.int64)
    sources = np.array([1, 1, 1, 1, 50, 50, 50, 31, 31, 30, 40, 41], dtype=np.int64)
    cover = greedy_cover(grams, sources)
    assert cover.sources.tolist() == [1, 50, 31, 40]
    assert cover.covered.tolist() == [4, 1, 1, 1] and cover.shared.tolist() == [4, 3, 2, 1]


@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 25)), max_size=120), st.booleans())
@settings(max_examples=300, deadline=None)
def test_greedy_cover_equals_the_reference_loop(pairs, indexed):
    """Both ways of finding a pick's newly covered pairs (a pass over the pairs; an index by
    gram, which covers larger than ``SMALL_COVER`` use) give the reference's cover."""
    from collections import Counter

    from quiltdetect.kernel import cover as cover_module

    grams = np.array([g for _, g in pairs], dtype=np.int64)
    sources = np.array([s for s, _ in pairs], dtype=np.int64)
    small, cover_module.SMALL_COVER = cover_module.SMALL_COVER, (-1 if indexed else cover_module.SMALL_COVER)
    try:
        cover = greedy_cover(grams, sources)
    finally:
        cover_module.SMALL_COVER = small
    # The reference works on string ids; zero-padding keeps their order equal to the ints'.
    ref_pairs = {(f"{s:04d}", g) for s, g in pairs}
    shared = Counter(s for s, _ in ref_pairs)
    expected = greedy_sources(ref_pairs, shared)
    got = [(f"{s:04d}", int(c), int(h)) for s, c, h in zip(cover.sources, cover.covered, cover.shared, strict=True)]
    assert got == expected
    # every candidate gram ends up covered exactly once
    assert int(cover.covered.sum()) == len({g for _, g in pairs})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-5, 60), st.integers(-5, 60)), max_size=80),
       st.integers(0, 2**40))
def test_components_of_equal_union_find(edges, offset):
    """Every node's component named by its smallest node, as a union-find gives it, for graphs
    with chains, cycles, self-loops and repeated edges (ids shifted to large values too)."""
    from quiltdetect.kernel.components import components_of

    edges = [(a + offset, b + offset) for a, b in edges]
    expected = _components(edges, lambda x: x)
    v = np.array([a for a, _ in edges], dtype=np.int64)
    u = np.array([b for _, b in edges], dtype=np.int64)
    nodes, centres = components_of(v, u)
    assert nodes.tolist() == sorted(expected)
    assert dict(zip(nodes.tolist(), centres.tolist(), strict=True)) == expected


def _components(edges: list[tuple[int, int]], name) -> dict[int, int]:
    """Each node of ``edges`` -> the node of its component that ``name`` orders first."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb, key=name)] = min(ra, rb, key=name)
    return {x: find(x) for x in parent}


@given(st.lists(st.tuples(st.integers(0, 19), st.integers(0, 19)).filter(lambda e: e[0] != e[1]), max_size=30),
       st.lists(st.booleans(), min_size=30, max_size=30), st.permutations(range(30)), st.integers(0, 30))
@settings(max_examples=200, deadline=None)
def test_updated_components_equal_the_components_of_the_remaining_and_new_pairs(old, withdrawn, ranks, extra):
    """An update's clusters (the previous clusters as stars, those that lost a pair rebuilt from
    their pairs, and the pairs with a new page) are the components of every remaining and new
    pair, each named by its page of smallest rank; and the count of rebuilt clusters."""
    from quiltdetect.kernel.components import updated_components

    first_new = 20  # pages 20..29 are new
    rank = lambda x: ranks[x]  # noqa: E731
    old = sorted({(min(a, b, key=rank), max(a, b, key=rank)) for a, b in old})
    before = _components(old, rank)
    gone = [p for p, w in zip(old, withdrawn, strict=False) if w]
    new = [(a % 30, 20 + (a + b + extra) % 10) for a, b in old[: extra % 7]] + [(20 + extra % 10, 20 + (extra + 3) % 10)]
    new = sorted({(min(a, b, key=rank), max(a, b, key=rank)) for a, b in new if a != b})
    pairs = [p for p in old if p not in gone] + new
    keys = np.arange(30, dtype=np.int64)
    arr = lambda xs: np.array(xs, dtype=np.int64)  # noqa: E731
    pages, named, rebuilt = updated_components(
        keys, arr(ranks), arr(list(before)), arr(list(before.values())), arr([a for a, _ in pairs]),
        arr([b for _, b in pairs]), arr([a for a, _ in gone]), arr([b for _, b in gone]), first_new)
    assert dict(zip(pages.tolist(), named.tolist(), strict=True)) == _components(pairs, rank)
    assert rebuilt == len({before[a] for p in gone for a in p})
