"""The batch kernels of the bucketed quilt dataflow equal the one-document-at-a-time kernels."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from quiltdetect.kernel.buckets import (
    batch_gram_pairs,
    bucket_bounds,
    candidate_triple_rows,
    candidate_triples,
    covers,
    doc_sums,
    gram_bucket,
    hashed_gram_pairs,
    is_member,
    patch_mask,
    sort_pairs,
    touched_docs,
)
from quiltdetect.kernel.cover import greedy_cover
from quiltdetect.kernel.grams import distinct_grams
from quiltdetect.kernel.words import word_hashes

WORDS = ["a", "b", "c", "d", "é", "x_y", "42"]
texts_st = st.lists(st.lists(st.sampled_from(WORDS), max_size=14).map(" ".join) | st.none(), max_size=8)


@settings(max_examples=150, deadline=None)
@given(texts_st, st.integers(1, 4))
def test_batch_gram_pairs_equal_distinct_grams_per_text(texts, k):
    found = batch_gram_pairs(texts, k)
    assert np.all(found.grams[1:] >= found.grams[:-1])
    for j, text in enumerate(texts):
        grams, counts = distinct_grams(text, k)
        mine = found.docs == j
        assert found.grams[mine].tolist() == grams.tolist()
        assert found.counts[mine].tolist() == counts.tolist()
        assert found.n_distinct[j] == grams.shape[0]
        assert found.n_occurrences[j] == int(counts.sum())


@settings(max_examples=100, deadline=None)
@given(texts_st, st.integers(1, 4))
def test_grams_from_word_hashes_equal_grams_from_texts(texts, k):
    """The sweep's path (tokenise once, grams per k from the hashes) gives the same arrays."""
    hashes = [word_hashes(t) for t in texts]
    lengths = np.array([h.shape[0] for h in hashes], dtype=np.int64)
    flat = np.concatenate(hashes) if hashes else np.empty(0, dtype=np.uint64)
    got, want = hashed_gram_pairs(flat, lengths, k), batch_gram_pairs(texts, k)
    for name in ("grams", "docs", "counts", "n_distinct", "n_occurrences"):
        assert getattr(got, name).tolist() == getattr(want, name).tolist(), name
        assert getattr(got, name).dtype == np.int64, name


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=60), st.sampled_from([2, 4, 16, 256]))
def test_bucket_bounds_slice_a_sorted_array_by_bucket(values, n):
    grams = np.sort(np.array(values, dtype=np.int64))
    bounds = bucket_bounds(grams, n)
    buckets = gram_bucket(grams, n)
    assert bounds[0] == 0 and bounds[-1] == grams.shape[0]
    assert np.all((buckets >= 0) & (buckets < n))
    for b in range(n):
        assert np.all(buckets[bounds[b] : bounds[b + 1]] == b)


def test_patch_mask_counts_documents_per_gram():
    grams = np.array([1, 1, 2, 3, 3, 3, 4, 4], dtype=np.int64)
    mask, n_distinct, n_patch = patch_mask(grams, 2)
    assert mask.tolist() == [True, True, False, False, False, False, True, True]
    assert (n_distinct, n_patch) == (4, 2)
    keys, sums = doc_sums(np.array([5, 3, 5]), np.array([1, 2, 4]))
    assert keys.tolist() == [3, 5] and sums.tolist() == [2, 5]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 6), st.integers(0, 2)), max_size=40, unique_by=lambda t: t[:2]),
       st.booleans())
def test_triples_and_covers_equal_the_pairwise_definition(pairs, foreign):
    grams = np.array([p[0] for p in pairs], dtype=np.int64)
    docs = np.array([p[1] for p in pairs], dtype=np.int64)
    servers = np.array([p[2] for p in pairs], dtype=np.int64)
    is_target = docs % 2 == 0
    grams, docs, servers, is_target = sort_pairs(grams, docs, servers, is_target)
    target, gram, source = candidate_triples(grams, docs, servers, is_target, foreign=foreign)
    want = sorted(
        (t, g, s)
        for g, t, st_, it in zip(grams, docs, servers, is_target, strict=True) if it
        for g2, s, ss in zip(grams, docs, servers, strict=True)
        if g2 == g and s != t and (not foreign or ss != st_)
    )
    assert sorted(zip(target.tolist(), gram.tolist(), source.tolist(), strict=True)) == want
    picks = covers(target, gram, source)
    for t in sorted(set(target.tolist())):
        mine = target == t
        cover = greedy_cover(gram[mine], source[mine])
        rows = picks["target"] == t
        assert picks["source"][rows].tolist() == cover.sources.tolist()
        assert picks["covered"][rows].tolist() == cover.covered.tolist()
        assert picks["rank"][rows].tolist() == list(range(1, len(cover) + 1))
        assert set(picks["n_pairs"][rows].tolist()) == {int(mine.sum())}
    # An update's path: sources ordered by rank, picks reported by key (a one-to-one relabelling
    # that does not keep the order); the rows of the triples equal the triples.
    key_of = {d: 1000 - 7 * d for d in range(7)}
    t_at, s_at = candidate_triple_rows(grams, docs, servers, is_target, foreign=foreign)
    assert (docs[t_at].tolist(), grams[t_at].tolist(), docs[s_at].tolist()) == (target.tolist(), gram.tolist(),
                                                                                 source.tolist())
    labelled = covers(target, gram, source, np.array([key_of[s] for s in source.tolist()], dtype=np.int64))
    assert labelled["source"].tolist() == [key_of[s] for s in picks["source"].tolist()]
    assert all(np.array_equal(labelled[k], picks[k]) for k in picks if k != "source")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 6), st.integers(0, 9)), max_size=60),
       st.lists(st.integers(0, 59), max_size=4))
def test_sort_pairs_equals_lexsort_presorted_or_not(pairs, cuts):
    """Both paths (runs already doc-ordered per gram, and any order) give np.lexsort's order."""
    grams = np.array([p[0] for p in pairs], dtype=np.int64)
    docs = np.array([p[1] for p in pairs], dtype=np.int64)
    tags = np.array([p[2] for p in pairs], dtype=np.int64)
    # Also the case the callers build: runs of contiguous doc ranges, each sorted by (gram, doc).
    order = np.lexsort((grams, docs))
    runs = [r[np.lexsort((docs[r], grams[r]))] for r in np.split(order, sorted({c for c in cuts if c < len(order)}))]
    for at in (np.arange(len(pairs)), np.concatenate(runs) if runs else np.arange(0)):
        g, d, t = grams[at], docs[at], tags[at]
        expected = np.lexsort((d, g))
        got = sort_pairs(g, d, t)
        assert np.array_equal(got[0], g[expected])
        assert np.array_equal(got[1], d[expected])
        assert np.array_equal(got[2], t[expected])


def test_row_cuts_split_between_grams_only():
    from quiltdetect.quilts.gram_table import row_cuts

    grams = np.array([1, 1, 1, 2, 3, 3, 4, 4, 4, 4, 5], dtype=np.int64)
    assert row_cuts(grams, 2) == [0, 3, 6, 10, 11]
    assert row_cuts(grams, 100) == [0, 11]
    assert row_cuts(grams[:0], 2) == [0, 0]
    for limit in (1, 3, 5):
        cuts = row_cuts(grams, limit)
        assert cuts[0] == 0 and cuts[-1] == grams.shape[0]
        # no run is split: a cut always falls where the gram changes
        assert all(grams[c - 1] != grams[c] for c in cuts[1:-1])


def test_gram_rows_split_between_grams_give_the_same_doc_buckets():
    """The grams stage's rows split at ROW_PAIRS (1,000,000-page corpora) and whole give the
    same patch_grams table: runs are never cut, so every row's run lengths stay dfs."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from quiltdetect.quilts import gram_table as b
    from quiltdetect.quilts import patch_grams as p

    rng = np.random.default_rng(3)
    vocab = [f"w{i}" for i in range(40)]
    texts = [" ".join(rng.choice(vocab, size=int(rng.integers(0, 60)))) for _ in range(120)]
    batches = [pa.RecordBatch.from_arrays([pa.array(np.arange(i, i + 30), pa.int64()), pa.array(texts[i:i + 30])],
                                          names=["doc_key", "text"]) for i in range(0, 120, 30)]
    n_gram, n_docs = 16, 4
    rows = pa.Table.from_batches(list(b.gram_rows(2, n_gram, False)(iter(batches))))

    def by(table: pa.Table, column: str, fn) -> list[pa.Table]:
        return [fn(table.filter(pc.equal(table[column], v))) for v in sorted(set(table[column].to_pylist()))]

    results = []
    for row_pairs in (b.ROW_PAIRS, 7):
        grams = pa.concat_tables(by(rows, "bucket", b.merge_gram_bucket(n_gram, False, row_pairs)))
        parts = pa.Table.from_batches(list(p._doc_parts(n_docs, 3, False, n_gram)(iter(grams.to_batches()))))
        results.append((grams.num_rows, pa.concat_tables(by(parts, "dbucket", p._merge_doc_bucket)).to_pylist()))
    (whole_rows, whole), (split_rows, split) = results
    assert split_rows > whole_rows  # the small limit did split rows
    assert split == whole


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_a_gram_bucket_merge_does_not_depend_on_the_order_its_rows_arrive_in(seed, with_counts):
    """Tasks deliver a bucket's rows (one per input batch) in any order; the stored table must
    be the same, the document-statistics buckets included (batches whose first doc_keys are
    equal mod n share one)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from quiltdetect.quilts import gram_table as b

    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(12)]
    texts = [" ".join(rng.choice(vocab, size=int(rng.integers(0, 30)))) for _ in range(64)]
    n_gram = 4
    batches = [pa.RecordBatch.from_arrays([pa.array(np.arange(i, i + 8), pa.int64()), pa.array(texts[i:i + 8])],
                                          names=["doc_key", "text"]) for i in range(0, 64, 8)]
    rows = pa.Table.from_batches(list(b.gram_rows(2, n_gram, with_counts)(iter(batches))))
    merge = b.merge_gram_bucket(n_gram, with_counts)
    buckets = sorted(set(rows["bucket"].to_pylist()))
    assert max(buckets) >= n_gram and len(rows.filter(pc.equal(rows["bucket"], max(buckets)))) > 1
    for bucket in buckets:
        mine = rows.filter(pc.equal(rows["bucket"], bucket))
        shuffled = mine.take(pa.array(rng.permutation(mine.num_rows)))
        assert merge(shuffled).equals(merge(mine))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_a_doc_table_narrowed_to_a_smaller_m_equals_one_built_at_that_m(seed, with_counts):
    """The sweep builds a k's doc-bucket table once at its largest m, keeping each pair's gram df,
    and derives every smaller m by dropping the pairs with df > m (``narrow_doc_table``): that
    must be the table built at m, every column, including each document's n_patch (with and
    without occurrence counts) and the patch gram count of the gram-count row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from quiltdetect.quilts import gram_table as b
    from quiltdetect.quilts import patch_grams as p

    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(int(rng.integers(3, 30)))]
    texts = [" ".join(rng.choice(vocab, size=int(rng.integers(0, 40)))) for _ in range(60)]
    batch = pa.RecordBatch.from_arrays([pa.array(np.arange(60), pa.int64()), pa.array(texts)], names=["doc_key", "text"])
    n_gram, n_docs, largest = 8, 4, 9

    def by(table: pa.Table, column: str, fn) -> pa.Table:
        values = sorted(set(table[column].to_pylist()))
        return pa.concat_tables([fn(table.filter(pc.equal(table[column], v))) for v in values])

    rows = pa.Table.from_batches(list(b.gram_rows(2, n_gram, with_counts)(iter([batch]))))
    grams = by(rows, "bucket", b.merge_gram_bucket(n_gram, with_counts))

    def doc_table(m: int, with_df: bool) -> pa.Table:
        parts = pa.Table.from_batches(list(p._doc_parts(n_docs, m, with_counts, n_gram, with_df=with_df)(
            iter(grams.to_batches()))))
        return by(parts, "dbucket", p._merge_doc_bucket)

    shared = doc_table(largest, with_df=True)
    assert shared["df"].null_count < shared.num_rows
    for m in range(2, largest + 1):
        narrowed = pa.Table.from_batches(list(p._narrow_rows(m)(iter(shared.to_batches()))))
        assert narrowed.to_pylist() == doc_table(m, with_df=False).to_pylist(), m


def _triple_table(target, gram, source):
    import pyarrow as pa

    from quiltdetect.quilts.arrays import blob

    column = [blob(np.asarray(v, dtype=np.int64)) for v in (target, gram, source)]
    return pa.table({"bucket": pa.array([0], pa.int32()), "target": [column[0]], "gram": [column[1]],
                     "source": [column[2]]})


@settings(max_examples=12, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 6), st.integers(0, 9)), max_size=60),
       st.permutations(range(10)))
def test_cover_by_rank_breaks_ties_by_rank_and_answers_in_keys(spark, triples, permutation):
    """An update's triples carry each source's rank, not its key: the cover orders sources by
    rank, and ``sources_by_key`` names them by key. With ranks ordered like the keys it is the
    plain cover; with any ranks it is the plain cover of the ranks, renamed."""
    from quiltdetect.quilts import cover as b

    target, gram, source = (np.array(v, dtype=np.int64).reshape(-1) for v in zip(*triples, strict=True)) \
        if triples else (np.empty(0, np.int64),) * 3

    def keyed(rank_of: np.ndarray) -> list[dict]:
        picked = spark.createDataFrame(b._cover_bucket(_triple_table(target, gram, rank_of[source])).to_pandas(),
                                       b.COVER_DDL)
        ranks = spark.createDataFrame([(k, int(r)) for k, r in enumerate(rank_of)], "doc_key long, rank long")
        return sorted((r.asDict() for r in b.sources_by_key(picked, ranks).collect()),
                      key=lambda r: (r["target"], r["rank"]))

    plain = b._cover_bucket(_triple_table(target, gram, source)).to_pylist()
    assert keyed(3 * np.arange(10, dtype=np.int64) + 7) == plain
    rank_of = np.array(permutation, dtype=np.int64)
    of_ranks = b._cover_bucket(_triple_table(target, gram, rank_of[source])).to_pylist()
    key_of = {int(r): k for k, r in enumerate(rank_of)}
    assert keyed(rank_of) == [{**row, "source": key_of[row["source"]]} for row in of_ranks]


def test_cover_by_rank_picks_the_smaller_rank_of_a_tie(spark):
    """Two sources each cover the target's one gram: the one with the smaller rank (doc_id) wins,
    whatever their keys."""
    from quiltdetect.quilts import cover as b

    picked = b._cover_bucket(_triple_table([0, 0], [5, 5], [1, 0]))  # key 10 has rank 1, key 20 rank 0
    ranks = spark.createDataFrame([(10, 1), (20, 0)], "doc_key long, rank long")
    keyed = b.sources_by_key(spark.createDataFrame(picked.to_pandas(), b.COVER_DDL), ranks).collect()
    assert [r["source"] for r in keyed] == [20]


@settings(max_examples=80, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 12), st.integers(0, 15)), max_size=80), st.sets(st.integers(0, 15)),
       st.integers(2, 4))
def test_touched_docs_are_the_old_holders_of_grams_whose_patch_status_or_holders_change(pairs, new, m):
    """touched_docs by its definition: ``changed`` = old holders of a gram that becomes or stops
    being a patch gram, ``gained`` = old holders of a patch gram that stays one and gains new
    holders; and together they hold every old document whose patch grams or their documents
    change when the new documents are added (the ``changed`` ones exactly those whose patch grams change)."""
    pairs = sorted(pairs)
    grams = np.array([g for g, _ in pairs], dtype=np.int64)
    docs = np.array([d for _, d in pairs], dtype=np.int64)
    new_keys = np.array(sorted(new), dtype=np.int64)
    is_new = is_member(docs, new_keys)
    assert is_new.tolist() == [d in new for d in docs.tolist()]
    changed, gained = (set(a.tolist()) for a in touched_docs(grams, docs, is_new, m))
    holders: dict[int, set[int]] = {}
    for g, d in pairs:
        holders.setdefault(g, set()).add(d)

    def is_patch(n: int) -> bool:
        return 1 < n <= m

    assert changed == {d for hs in holders.values() if hs & new and is_patch(len(hs - new)) != is_patch(len(hs))
                       for d in hs - new}
    assert gained == {d for hs in holders.values() if hs & new and is_patch(len(hs - new)) and is_patch(len(hs))
                      for d in hs - new}

    def patch_postings(doc: int, with_new: bool) -> dict[int, frozenset[int]]:
        out = {}
        for g, hs in holders.items():
            hs = hs if with_new else hs - new
            if doc in hs and 1 < len(hs) <= m:
                out[g] = frozenset(hs)
        return out

    for d in {d for _, d in pairs} - new:
        before, after = patch_postings(d, False), patch_postings(d, True)
        assert (before.keys() != after.keys()) == (d in changed)
        if before != after:
            assert d in changed | gained


_INT64 = st.integers(-(2**63), 2**63 - 1)


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.lists(_INT64, max_size=300),                                   # any keys, full span
    st.lists(st.integers(0, 40), max_size=300),                       # small keys, many ties: exact packing
    st.lists(st.sampled_from([-(2**63), -1, 0, 1, 2**63 - 1]), max_size=60),
    # keys equal in their high bits and different in the low bits that packing drops
    st.tuples(_INT64, st.lists(st.integers(0, 255), min_size=1, max_size=300)).map(
        lambda t: [max(-(2**63), min(2**63 - 1, (t[0] & ~255) | x)) for x in t[1]]
        + [2**63 - 1, -(2**63)]),
    # a few long ascending runs, with ties inside and across them (merged, not sorted anew)
    st.builds(lambda seed, runs, size, high: np.concatenate(
        [np.sort(np.random.default_rng(seed + r).integers(-high, high, size)) for r in range(runs)]).tolist(),
        st.integers(0, 2**32), st.integers(1, 4), st.integers(1, 4000), st.sampled_from([3, 1000, 2**62])),
))
def test_stable_argsort_equals_numpys_stable_argsort(keys):
    from quiltdetect.kernel.buckets import stable_argsort

    keys = np.array(keys, dtype=np.int64)
    assert stable_argsort(keys).tolist() == np.argsort(keys, kind="stable").tolist()


def test_stable_argsort_on_gram_fingerprints_of_a_batch():
    from quiltdetect.kernel.buckets import stable_argsort

    grams = (np.random.default_rng(1).integers(0, 2**20, size=200_000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)).view(np.int64)
    assert np.array_equal(stable_argsort(grams), np.argsort(grams, kind="stable"))
