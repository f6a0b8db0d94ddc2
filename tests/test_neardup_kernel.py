"""Kernel tests of the near-duplicate fingerprints (no Spark)."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiltdetect.kernel import bucket_rows
from quiltdetect.kernel.bucket_rows import bucket_roots, rows_by_part, shared_buckets
from quiltdetect.kernel.grams import fmix64, gram_fingerprints
from quiltdetect.neardup import calibrate as cal
from quiltdetect.neardup import lsh
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.neardup.fingerprints import (
    fingerprint,
    fingerprint_arrays,
    fingerprint_batch_arrays,
    fingerprint_hash_arrays,
    lsh_arrays,
    lsh_batch_arrays,
    lsh_hash_arrays,
    shingle_set,
)
from quiltdetect.neardup.pairs import long_lists
from quiltdetect.neardup.shingles import batch_shingles, circular_shingles_batch, shingles
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
    batch_minvalues,
    minvalues,
    odd_inverses,
    preimages,
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


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(
    st.one_of(st.none(), st.text(alphabet="aB9 ./:_-wW\u00e9\u0130", max_size=50),
              st.sampled_from(["see http://A.b/c.html now", "WWW.Example.org/x y", "plain words only", ""])),
    st.sampled_from([None, "http://site.org/p", "https://other.net/"]),
    st.one_of(st.none(), st.lists(st.sampled_from(["/img/a.png", "http://site.org/logo.gif", "http://cdn.com/x.jpg", ""]),
                                  max_size=3))), max_size=8))
def test_batch_page_term_hashes_equal_one_page_at_a_time(pages):
    import pyarrow as pa

    from quiltdetect.neardup.tokens import batch_page_term_hashes, page_terms, term_hashes

    texts, urls, images = (list(c) for c in zip(*pages, strict=True)) if pages else ([], [], [])
    # as a list, and as the Arrow column a Spark batch gives
    for column in (texts, pa.array(texts, pa.string())):
        got = batch_page_term_hashes(column, urls, images)
        assert len(got) == len(pages)
        for h, (text, url, imgs) in zip(got, pages, strict=True):
            assert h.tolist() == term_hashes(page_terms(text, url, imgs)).tolist()


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


@given(st.lists(st.lists(st.integers(0, 5), max_size=14), max_size=8), st.integers(1, 7))
@settings(max_examples=80, deadline=None)
def test_circular_shingles_batch_equal_one_text_at_a_time(texts, k):
    per_text = [np.array(t, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) for t in texts]
    hashes = np.concatenate([np.empty(0, np.uint64), *per_text])
    got = circular_shingles_batch(hashes, np.array([len(t) for t in texts]), k)
    expected = [gram_fingerprints(np.resize(h, h.shape[0] + k - 1), k) for h in per_text if h.shape[0]]
    assert np.array_equal(got, np.concatenate([np.empty(0, np.uint64), *expected]))  # circle order
    at = 0
    for h in per_text:  # and as sets, the near-duplicate shingles with wrap
        assert np.array_equal(np.unique(got[at : at + h.shape[0]]), shingles(h, k, wrap=True))
        at += h.shape[0]
    with pytest.raises(ValueError, match="k must be"):
        circular_shingles_batch(hashes, np.array([len(t) for t in texts]), 0)


@given(st.lists(st.lists(u64, max_size=30), max_size=8), st.integers(1, 6), st.booleans())
@settings(max_examples=60, deadline=None)
def test_batch_fingerprints_equal_one_page_at_a_time(pages, k, wrap):
    hashes = [np.array(p, dtype=np.uint64) for p in pages]

    def same(a, b):
        return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))

    for got, expected in zip(fingerprint_batch_arrays(hashes, k, wrap, 6),
                             [fingerprint_hash_arrays(h, k, wrap, 6) for h in hashes], strict=True):
        assert got[0] == expected[0] and all(same(a, b) for a, b in zip(got[1:], expected[1:], strict=True))
    for got, expected in zip(lsh_batch_arrays(hashes, k, wrap, 7, 3),
                             [lsh_hash_arrays(h, k, wrap, 7, 3) for h in hashes], strict=True):
        assert got[0] == expected[0] and all(same(a, b) for a, b in zip(got[1:], expected[1:], strict=True))


@pytest.mark.parametrize("block", [7, 8192])
def test_batch_minvalues_equal_one_set_at_a_time(monkeypatch, block):
    rng = np.random.default_rng(5)
    counts = np.array([1, 3, 300, 2, 9000, 40, 1, 5000, 7])  # > 8192 alone; < 7 shared
    values = rng.integers(0, 2**64, size=int(counts.sum()), dtype=np.uint64)
    values[1:4] = values[1]  # repeats do not change a minimum
    monkeypatch.setattr("quiltdetect.neardup.supershingles.BATCH_BLOCK", block)
    got = batch_minvalues(values, counts)
    ends = np.cumsum(counts)
    assert got.shape == (9, 84)
    for row, start, end in zip(got, ends - counts, ends, strict=True):
        assert np.array_equal(row, minvalues(values[start:end]))
    assert batch_minvalues(values[:0], np.array([], dtype=np.int64)).shape == (0, 84)
    with pytest.raises(ValueError, match="non-empty"):
        batch_minvalues(values[:3], np.array([3, 0]))


@given(st.lists(u64, min_size=1, max_size=50))
@settings(max_examples=30, deadline=None)
def test_preimages_invert_every_selector(values):
    x = np.array(values, dtype=np.uint64)[:, None]
    inverses = odd_inverses(MINHASH_MULTIPLIERS)
    with np.errstate(over="ignore"):
        assert np.all(inverses * MINHASH_MULTIPLIERS == np.uint64(1))
        hashed = (x ^ MINHASH_SEEDS) * MINHASH_MULTIPLIERS
    assert np.array_equal(preimages(hashed, MINHASH_SEEDS, inverses), np.broadcast_to(x, hashed.shape))
    with pytest.raises(ValueError, match="odd"):
        odd_inverses(np.array([3, 4], dtype=np.uint64))


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


def test_fingerprint_arrays_become_spark_longs_with_the_same_bits():
    n, ss, sh, pc = fingerprint_arrays("one two three four five six seven eight nine", None, None, 8, False, 12)
    assert n == 9 and ss.shape == (6,) and sh.shape == (6,) and pc.shape == (12,)
    assert fingerprint_arrays("", None, None, 8, False, 12) == (0, None, None, None)
    fp = fingerprint("one two three four five six seven eight nine")
    assert np.array_equal(ss, fp.supershingles)
    column = long_lists([ss, None, sh, np.empty(0, dtype=np.uint64)])
    assert str(column.type) == "list<item: int64>" and column.null_count == 1
    got = column.to_pylist()
    assert got[1] is None and got[3] == [] and len(got[0]) == 6
    assert all(isinstance(v, int) and -(2**63) <= v < 2**63 for v in got[0] + got[2])
    assert np.array_equal(np.array(got[0], dtype=np.int64).view(np.uint64), fp.supershingles)
    assert np.array_equal(np.array(got[2], dtype=np.int64).view(np.uint64), sh)
    assert long_lists([None]).to_pylist() == [None] and long_lists([]).to_pylist() == []


def test_calibration_scores_and_choice():
    truth = np.array([True, True, False, False])
    s = cal.score("b", {"b_threshold": 2}, np.array([True, False, True, False]), truth)
    assert (s.tp, s.fp, s.fn) == (1, 1, 1) and s.f1 == pytest.approx(0.5)
    b = np.array([6, 3, 1, 0])
    c = np.array([384, 370, 360, 200])  # perfect c thresholds: 361..370
    r = np.array([0.9, 0.2, 0.5, 0.1])  # the second pair is found by containment only
    contained = np.array([0.95, 1.0, 0.6, 0.2])
    candidate = np.array([True, True, True, False])
    f = cal.Features(b, c, r, contained, candidate)
    chosen = {alg: cal.best(scores) for alg, scores in cal.sweep(f, truth).items()}
    assert chosen["b"].thresholds == {"b_threshold": 2} and chosen["b"].f1 == 1.0  # 2 and 3 tie: lower middle
    assert chosen["c"].thresholds == {"c_threshold": 365}  # ties 361..370: the middle of the plateau
    assert chosen["combined"].f1 == 1.0
    assert chosen["lsh"].f1 == 1.0 and chosen["lsh"].thresholds["containment_threshold"] > 0.6
    # a pair that shares no band is never an lsh near-duplicate, whatever its similarity
    missed = cal.Features(b, c, np.array([1.0] * 4), np.array([1.0] * 4), np.array([True, False, False, False]))
    assert cal.predict("lsh", chosen["lsh"].thresholds, missed).tolist() == [True, False, False, False]


def random_pair(rng: np.random.Generator, s: float, size: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """Two shingle sets of resemblance exactly s: a shared core plus disjoint parts."""
    common = round(2 * size * s / (1 + s))
    values = np.unique(rng.integers(0, 2**64, size=3 * size, dtype=np.uint64))[: 2 * size - common]
    rng.shuffle(values)
    a, b = values[:size], np.concatenate([values[:common], values[size:]])
    return np.sort(a), np.sort(b)


@pytest.mark.parametrize(("bands", "rows"), [(40, 3), (6, 4)])
def test_lsh_candidate_rate_follows_the_s_curve(bands, rows):
    """Over many random pairs of known resemblance, the share that become candidates (share a
    band) is the S-curve's 1 - (1 - s^r)^b, within 4.5 binomial standard deviations."""
    rng = np.random.default_rng(bands * 100 + rows)
    n = 300
    for s in (0.2, 0.4, 0.55, 0.63, 0.8):
        pairs = [random_pair(rng, s) for _ in range(n)]
        exact = np.array([lsh.resemblance_containment(a, b)[0] for a, b in pairs])
        found = np.mean([lsh.is_candidate(lsh.band_keys(a, bands, rows), lsh.band_keys(b, bands, rows))
                         for a, b in pairs])
        expected = float(np.mean(lsh.candidate_probability(exact, bands, rows)))
        sd = max(np.sqrt(expected * (1 - expected) / n), 1 / n)
        assert abs(found - expected) <= 4.5 * sd, (s, found, expected)
    # the shipped banding: candidate recall at the resemblance threshold and down to 0.5 is near 1
    cfg = NearDupConfig()
    assert lsh.candidate_probability(cfg.resemblance_threshold, cfg.lsh_bands, cfg.lsh_rows) > 0.9999
    assert lsh.candidate_probability(0.5, cfg.lsh_bands, cfg.lsh_rows) > 0.99


def test_resemblance_and_containment_are_broders():
    a = np.array([1, 2, 3, 4], dtype=np.uint64)
    b = np.array([3, 4, 5, 6, 7, 8, 9, 10], dtype=np.uint64)
    assert lsh.resemblance_containment(a, b) == (2 / 10, 2 / 4)
    assert lsh.resemblance_containment(a, a[:2]) == (0.5, 1.0)  # inserted text: contained whole
    assert lsh.resemblance_containment(a, np.empty(0, dtype=np.uint64)) == (0.0, 0.0)
    assert lsh.band_keys(np.empty(0, dtype=np.uint64), 4, 2) is None and not lsh.is_candidate(None, None)


def test_lsh_arrays_are_the_shingle_set_and_its_bands():
    n, sets, keys = lsh_arrays("one two three four five six", None, None, 4, False, 40, 3)
    assert n == 6 and sets.shape == (3,) and keys.shape == (40,)
    assert np.array_equal(sets, shingle_set("one two three four five six"))
    assert np.array_equal(keys, lsh.band_keys(sets, 40, 3))
    assert lsh_arrays("", None, None, 4, False, 40, 3) == (0, None, None)


@given(st.lists(st.lists(st.integers(0, 6), max_size=16), max_size=9), st.integers(1, 6), st.booleans())
@settings(max_examples=120, deadline=None)
def test_batch_shingles_equal_one_page_at_a_time(pages, k, wrap):
    """One chain over the batch, each page's windows gathered, sorted and made unique in place:
    the same sets as ``shingles`` page by page, empty and short pages included."""
    per_page = [np.array(p, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) for p in pages]
    hashes = np.concatenate([np.empty(0, np.uint64), *per_page])
    values, sizes = batch_shingles(hashes, np.array([len(p) for p in pages], dtype=np.int64), k, wrap=wrap)
    expected = [shingles(h, k, wrap=wrap) for h in per_page]
    assert sizes.tolist() == [e.shape[0] for e in expected]
    assert np.array_equal(values, np.concatenate([np.empty(0, np.uint64), *expected]))


@given(st.lists(st.one_of(st.none(), st.lists(u64, max_size=40, unique=True)), max_size=7), st.integers(0, 3))
@settings(max_examples=80, deadline=None)
def test_packed_shingle_sets_round_trip_and_intersect_exactly(sets, cut):
    """The lsh shingle sets as Arrow binary values (one per page, null for a page without
    terms) read back as they were, also from a slice of the column; the verification's
    intersection sizes equal numpy's set intersection."""
    from quiltdetect.neardup.pairs import intersection_sizes, packed_sets, shingle_sets

    arrays = [np.sort(np.array(s, dtype=np.uint64)) for s in (s or [] for s in sets)]
    present = np.array([s is not None for s in sets], dtype=bool)
    column = packed_sets(np.concatenate([np.empty(0, np.uint64), *arrays]),
                         np.array([a.shape[0] for a in arrays], dtype=np.int64), present)
    assert column.type == pa.binary() and column.null_count == int((~present).sum())
    part = column.slice(min(cut, len(sets)))
    values, starts = shingle_sets(part)
    got = [values[a:b] for a, b in zip(starts[:-1], starts[1:], strict=True)]
    assert [g.tolist() for g in got] == [a.tolist() for a in arrays[min(cut, len(sets)):]]
    backwards = shingle_sets(part.take(pa.array(list(range(len(part)))[::-1], pa.int64())))
    common = intersection_sizes((values, starts), backwards)
    assert common.tolist() == [np.intersect1d(a, b).shape[0] for a, b in zip(got, got[::-1], strict=True)]


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 3), st.integers(-3, 3)), max_size=80, unique_by=lambda r: r[:2]),
       st.integers(0, 10))
@settings(max_examples=150, deadline=None)
def test_shared_buckets_equal_the_definition(rows, first_new):
    """Every bucket (equal value and idx) of two or more rows that holds a row with doc_key >=
    first_new, each row with its bucket's size, old rows and smallest doc_key; any split into
    parts gives the same rows (``rows_by_part``), and so does an update's table of the new rows'
    values of any size (``maybe_new``: with two slots nearly every old row passes it)."""
    docs = np.array([r[0] for r in rows], dtype=np.int64)
    idx = np.array([r[1] for r in rows], dtype=np.int32)
    values = np.array([r[2] * 0x9E3779B97F4A7C15 % 2**64 - 2**63 for r in rows], dtype=np.int64)  # few values, all 64 bits
    buckets: dict[tuple[int, int], list[int]] = {}
    for d, i, v in zip(docs.tolist(), idx.tolist(), values.tolist(), strict=True):
        buckets.setdefault((v, i), []).append(d)
    expected = {(d, i, v, len(ds), sum(x < first_new for x in ds), min(ds))
                for (v, i), ds in buckets.items() if len(ds) > 1 and max(ds) >= first_new for d in ds}
    for parts, slots in ((1, bucket_rows.MIN_SLOTS), (3, bucket_rows.MIN_SLOTS), (1, 2), (3, 1)):
        got = set()
        with mock.patch.object(bucket_rows, "MIN_SLOTS", slots), \
                mock.patch.object(bucket_rows, "SLOTS_PER_NEW_ROW", 0 if slots < 4 else 32):
            for _, part_rows in rows_by_part(values, parts):
                found = shared_buckets(values[part_rows], idx[part_rows], docs[part_rows], first_new)
                rows_found = part_rows[found.rows]
                got |= set(zip(docs[rows_found].tolist(), idx[rows_found].tolist(), values[rows_found].tolist(),
                               found.size.tolist(), found.old_size.tolist(), found.root.tolist(), strict=True))
        assert got == expected


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 3), st.integers(-3, 3)), max_size=80, unique_by=lambda r: r[:2]),
       st.permutations(range(10)), st.integers(0, 10))
@settings(max_examples=150, deadline=None)
def test_bucket_roots_equal_the_definition(rows, ranks, first_new):
    """Each row's bucket's first page in rank order (its rank and doc_key) and first old page's
    rank (doc_key < first_new; -1 when none), in the order the rows came."""
    docs = np.array([r[0] for r in rows], dtype=np.int64)
    idx = np.array([r[1] for r in rows], dtype=np.int32)
    values = np.array([r[2] * 0x9E3779B97F4A7C15 % 2**64 - 2**63 for r in rows], dtype=np.int64)
    rank = np.array(ranks, dtype=np.int64)[docs]
    buckets: dict[tuple[int, int], list[int]] = {}
    for d, i, v in zip(docs.tolist(), idx.tolist(), values.tolist(), strict=True):
        buckets.setdefault((v, i), []).append(d)
    first = {b: min(ds, key=lambda d: ranks[d]) for b, ds in buckets.items()}
    old = {b: min((ranks[d] for d in ds if d < first_new), default=-1) for b, ds in buckets.items()}
    found = bucket_roots(values, idx, rank, docs, first_new)
    keys = list(zip(values.tolist(), idx.tolist(), strict=True))
    assert found.root.tolist() == [ranks[first[b]] for b in keys]
    assert found.root_key.tolist() == [first[b] for b in keys]
    assert found.old_root.tolist() == [old[b] for b in keys]
