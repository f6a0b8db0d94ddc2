"""Batch kernels of the quilt dataflow: (gram, doc) pairs as flat numpy arrays, split in buckets.

The Spark job moves these arrays between tasks as a few large binary values per bucket instead
of one row per (doc, gram) pair: shuffling bytes is cheap, per-row work is not. Everything here
works on flat int64 arrays and is independent of how the pairs were split into batches or
buckets, so the results are the same for any partitioning.

Gram buckets are the top bits of the fingerprint, so a gram-sorted array is already grouped
by bucket (``bucket_bounds``). Doc buckets are ``doc_key mod n``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from quiltdetect.kernel.cover import concatenated_ranges, greedy_cover
from quiltdetect.kernel.grams import gram_fingerprints
from quiltdetect.kernel.words import batch_word_hashes

_EMPTY_I64 = np.empty(0, dtype=np.int64)


@dataclass(frozen=True)
class BatchGrams:
    """The distinct (gram, doc) pairs of a batch of texts, sorted by (gram, doc).

    grams: int64 (p,); docs: int64 (p,) index of the text in the batch; counts: int64 (p,)
    occurrences of the gram in the doc; n_distinct / n_occurrences: int64 (n_texts,).
    """

    grams: np.ndarray
    docs: np.ndarray
    counts: np.ndarray
    n_distinct: np.ndarray
    n_occurrences: np.ndarray


def batch_gram_pairs(texts: Sequence[str | None], k: int) -> BatchGrams:
    """k-gram sets of many texts at once: one fingerprint pass and one sort for the whole batch.

    Equal, text by text, to ``grams.distinct_grams`` (tested): the grams of text j are the
    pairs with ``docs == j``.
    """
    return hashed_gram_pairs(*batch_word_hashes(texts), k)


def hashed_gram_pairs(hashes: np.ndarray, lengths: np.ndarray, k: int) -> BatchGrams:
    """``batch_gram_pairs`` of texts given by their word hashes: ``hashes`` uint64, the word
    hashes of every text one after the other, ``lengths`` int64 (n_texts,) words per text.

    Lets a caller that needs the grams of several k tokenise each text once (the sweep).
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    per_doc = np.maximum(lengths - k + 1, 0)
    total = int(per_doc.sum())
    if total == 0:
        zeros = np.zeros(lengths.shape[0], dtype=np.int64)
        return BatchGrams(_EMPTY_I64, _EMPTY_I64, _EMPTY_I64, zeros, zeros)
    chained = gram_fingerprints(hashes, k)
    # A gram starting at position i of text j is valid only if it ends inside text j.
    starts = np.cumsum(lengths) - lengths
    valid = concatenated_ranges(starts, starts + per_doc)
    grams = chained[valid].view(np.int64)
    docs = np.repeat(np.arange(lengths.shape[0], dtype=np.int64), per_doc)
    order = stable_argsort(grams)  # stable: docs stay ascending within a gram
    grams, docs = grams[order], docs[order]
    first = np.empty(total, dtype=bool)
    first[0] = True
    np.not_equal(grams[1:], grams[:-1], out=first[1:])
    first[1:] |= docs[1:] != docs[:-1]
    at = np.flatnonzero(first)
    counts = np.diff(np.append(at, total))
    grams, docs = grams[at], docs[at]
    n_distinct = np.bincount(docs, minlength=lengths.shape[0]).astype(np.int64)
    return BatchGrams(grams, docs, counts.astype(np.int64), n_distinct, per_doc)


def gram_bucket_bits(n_buckets: int) -> int:
    """log2 of a power-of-two bucket count (at least 2 buckets)."""
    if n_buckets < 2 or n_buckets & (n_buckets - 1):
        raise ValueError(f"the number of gram buckets must be a power of two >= 2, got {n_buckets}")
    return n_buckets.bit_length() - 1


def gram_bucket(grams: np.ndarray, n_buckets: int) -> np.ndarray:
    """Bucket of each gram: its top bits, ordered like the signed values (int64 (p,))."""
    bits = gram_bucket_bits(n_buckets)
    return (grams >> (64 - bits)) + (1 << (bits - 1))


def bucket_bounds(sorted_grams: np.ndarray, n_buckets: int) -> np.ndarray:
    """Offsets (n_buckets + 1,) of each bucket's slice in a gram-sorted array."""
    bits = gram_bucket_bits(n_buckets)
    lows = (np.arange(n_buckets + 1, dtype=np.int64) - (1 << (bits - 1))) << (64 - bits)
    bounds = np.searchsorted(sorted_grams, lows[:-1], side="left")
    return np.append(bounds, sorted_grams.shape[0]).astype(np.int64)


# Average run length (keys in ascending order) from which merging the runs beats sorting anew.
MERGE_RUN = 1024


def stable_argsort(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of an int64 array, the fastest way for its keys.

    * Keys in long ascending runs (the callers often concatenate sorted runs: a gram bucket's
      layers, rows of sorted pairs): numpy's stable sort itself, which merges the runs it
      finds, far faster than the packed sort below.
    * Keys spanning fewer than 2¹⁶ values (bucket numbers): their offsets as uint16, which
      numpy sorts stably by radix in linear time.
    * Otherwise numpy sorts plain values much faster than it argsorts, so each key's offset
      from the smallest key goes in the high bits of one uint64 and its position in the low
      bits; sorting those values orders by key, ties by position. When offset and position do
      not fit in 64 bits together (fingerprints span all 64), the offset's low bits are
      dropped, and the rare runs of keys that then look equal but are not are sorted again by
      (key, position).
    """
    keys = np.asarray(keys, dtype=np.int64)
    n = keys.shape[0]
    if n < 2:
        return np.arange(n, dtype=np.int64)
    if np.count_nonzero(keys[1:] < keys[:-1]) * MERGE_RUN < n:
        return np.argsort(keys, kind="stable")
    low, high = keys.min(), keys.max()
    if int(high) - int(low) < 1 << 16:
        return np.argsort((keys - low).astype(np.uint16), kind="stable")
    bits = (n - 1).bit_length()
    span = (int(high) - int(low)).bit_length()
    drop = np.uint64(max(0, span + bits - 64))
    offsets = keys.view(np.uint64) - low.astype(np.int64).view(np.uint64)  # wraps: keys - min, as unsigned
    packed = ((offsets >> drop) << np.uint64(bits)) | np.arange(n, dtype=np.uint64)
    packed.sort()
    order = (packed & np.uint64((1 << bits) - 1)).astype(np.int64)
    if drop:
        ranked = keys[order]
        descents = np.flatnonzero(ranked[1:] < ranked[:-1])
        if descents.size:
            top = packed >> np.uint64(bits)
            seen = top[descents]
            for lo, hi in sorted(set(zip(np.searchsorted(top, seen, "left").tolist(),
                                         np.searchsorted(top, seen, "right").tolist(), strict=True))):
                run = order[lo:hi]
                order[lo:hi] = run[np.lexsort((run, keys[run]))]
    return order


def sort_pairs(grams: np.ndarray, docs: np.ndarray, *others: np.ndarray) -> tuple[np.ndarray, ...]:
    """The arrays reordered by (gram, doc), ties in input order (as ``np.lexsort``).

    One stable sort by gram when the docs of every gram already come in ascending order (the
    callers concatenate runs so that they do); otherwise a stable sort by doc first. Both are
    several times faster than ``np.lexsort`` on int64 keys, and give the same order.
    """
    order = stable_argsort(grams)
    sorted_grams, sorted_docs = grams[order], docs[order]
    same = sorted_grams[1:] == sorted_grams[:-1]
    if np.any(sorted_docs[1:][same] < sorted_docs[:-1][same]):
        by_doc = stable_argsort(docs)
        order = by_doc[stable_argsort(grams[by_doc])]
        sorted_grams, sorted_docs = grams[order], docs[order]
    return (sorted_grams, sorted_docs, *(o[order] for o in others))


def gram_runs(sorted_grams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start offsets and lengths of the runs of equal grams in a sorted array."""
    n = sorted_grams.shape[0]
    if n == 0:
        return _EMPTY_I64, _EMPTY_I64
    starts = np.flatnonzero(np.concatenate(([True], sorted_grams[1:] != sorted_grams[:-1])))
    return starts, np.diff(np.append(starts, n))


def patch_mask(sorted_grams: np.ndarray, m: int,
               runs: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, int, int]:
    """Which pairs hold a patch gram (1 < df <= m), the number of distinct grams and of patch grams.

    ``sorted_grams`` holds each (gram, doc) pair once, so a run's length is the gram's df.
    ``runs``: its ``gram_runs``, when the caller has them.
    """
    starts, lengths = runs if runs is not None else gram_runs(sorted_grams)
    is_patch = (lengths > 1) & (lengths <= m)
    return np.repeat(is_patch, lengths), int(starts.shape[0]), int(is_patch.sum())


def patch_dfs(sorted_grams: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's gram df, and how many patch grams (1 < df <= m) have each df (index 0..m).

    What a smaller m' keeps of the patch pairs at m is the pairs with df <= m', and its patch
    grams number ``hist[:m' + 1].sum()``: one table at the largest m serves every m (the sweep).
    """
    _, lengths = gram_runs(sorted_grams)
    hist = np.bincount(lengths[(lengths > 1) & (lengths <= m)], minlength=m + 1).astype(np.int64)
    return np.repeat(lengths, lengths), hist


def doc_sums(docs: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct docs ascending, sum of values per doc), int64 arrays."""
    if docs.shape[0] == 0:
        return _EMPTY_I64, _EMPTY_I64
    keys, inverse = np.unique(docs, return_inverse=True)
    sums = np.bincount(inverse, weights=values, minlength=keys.shape[0])
    return keys, np.rint(sums).astype(np.int64)


def candidate_triples(
    grams: np.ndarray, docs: np.ndarray, servers: np.ndarray, is_target: np.ndarray, *, foreign: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(target, gram, source) for every target pair: every other doc holding the same gram.

    Inputs are the patch pairs of one gram bucket sorted by gram (each pair once); ``servers``
    int64 server ids (compared only with ``foreign``), ``is_target`` bool (patchy documents).
    A gram has at most m docs, so a gram gives at most m*(m-1) triples.
    """
    t_at, s_at = candidate_triple_rows(grams, docs, servers, is_target, foreign=foreign)
    return docs[t_at], grams[t_at], docs[s_at]


def candidate_triple_rows(
    grams: np.ndarray, docs: np.ndarray, servers: np.ndarray, is_target: np.ndarray, *, foreign: bool
) -> tuple[np.ndarray, np.ndarray]:
    """``candidate_triples`` as the rows of its target pair and its source pair: any other
    per-pair value (a document's key beside the rank it is ordered by) is one gather away."""
    starts, lengths = gram_runs(grams)
    run_of = np.repeat(np.arange(starts.shape[0]), lengths)
    t_at = np.flatnonzero(is_target)
    if t_at.shape[0] == 0:
        return _EMPTY_I64, _EMPTY_I64
    t_run = run_of[t_at]
    # Each target pair t meets every pair of its run: s in [start, start + length).
    per_target = lengths[t_run]
    t_rep = np.repeat(t_at, per_target)
    s_at = concatenated_ranges(starts[t_run], starts[t_run] + per_target)
    keep = docs[s_at] != docs[t_rep]
    if foreign:
        keep &= servers[s_at] != servers[t_rep]
    return t_rep[keep], s_at[keep]


def covers(targets: np.ndarray, grams: np.ndarray, sources: np.ndarray,
           labels: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Greedy covers of many targets' triples: one row per pick, targets ascending.

    Returns target, rank (1-based pick order), source, covered, shared, n_pairs (int64 arrays).
    ``labels`` (aligned with ``sources``, one per source id): report each picked source by its
    label; the cover's order and tie-breaks still use ``sources``.
    """
    if targets.shape[0] == 0:
        return {k: _EMPTY_I64 for k in ("target", "rank", "source", "covered", "shared", "n_pairs")}
    order = stable_argsort(targets)
    targets, grams, sources = targets[order], grams[order], sources[order]
    labels = None if labels is None else labels[order]
    starts, lengths = gram_runs(targets)
    picks: dict[str, list[np.ndarray]] = {"source": [], "covered": [], "shared": []}
    sizes = np.empty(starts.shape[0], dtype=np.int64)
    for i, (start, length) in enumerate(zip(starts.tolist(), lengths.tolist(), strict=True)):
        cut = slice(start, start + length)
        cover = greedy_cover(grams[cut], sources[cut], None if labels is None else labels[cut])
        sizes[i] = len(cover)
        picks["source"].append(cover.sources)
        picks["covered"].append(cover.covered)
        picks["shared"].append(cover.shared)
    first = np.cumsum(sizes) - sizes  # each target's first row
    return {"target": np.repeat(targets[starts], sizes),
            "rank": np.arange(1, int(sizes.sum()) + 1, dtype=np.int64) - np.repeat(first, sizes),
            **{k: np.concatenate(v).astype(np.int64) for k, v in picks.items()},
            "n_pairs": np.repeat(lengths, sizes).astype(np.int64)}


def is_member(keys: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Which ``keys`` are in ``sorted_set`` (int64, ascending), as a boolean array."""
    if sorted_set.shape[0] == 0 or keys.shape[0] == 0:
        return np.zeros(keys.shape[0], dtype=bool)
    at = np.minimum(np.searchsorted(sorted_set, keys), sorted_set.shape[0] - 1)
    return sorted_set[at] == keys


def touched_docs(sorted_grams: np.ndarray, docs: np.ndarray, is_new: np.ndarray, m: int,
                 runs: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The old documents whose quilt figures an update may change, in two kinds:
    (``changed``: old holders of a gram that new documents make a patch gram or stop being one,
    ``gained``: old holders of a patch gram that stays one and gains new documents).

    A ``changed`` document's patch grams change, so its patch fraction may, and it is recomputed.
    A ``gained`` document's patch grams stay what they were, only its possible sources grow: its
    cover can change only if it is patchy, which its unchanged patch fraction says (the caller
    tells). Every other old document keeps its patch grams and their documents, so its cover: a
    gram frequent before stays frequent (dfs only grow), a gram of one old document that new
    ones take past m never was nor becomes a patch gram. ``sorted_grams``/``docs``: (gram, doc)
    pairs sorted by gram, a gram's documents all present; ``is_new`` marks the pairs of new
    documents; ``runs``: the grams' ``gram_runs``, when the caller has them. Both come in pair
    order. Only the runs that hold a new document are looked at: in an update, few of them.
    """
    starts, lengths = runs if runs is not None else gram_runs(sorted_grams)
    new_at = np.flatnonzero(is_new)
    if starts.shape[0] == 0 or new_at.shape[0] == 0:
        return _EMPTY_I64, _EMPTY_I64
    hit, n_new = np.unique(np.searchsorted(starts, new_at, side="right") - 1, return_counts=True)
    df = lengths[hit]
    old_df = df - n_new
    was_patch = (old_df > 1) & (old_df <= m)
    is_patch = (df > 1) & (df <= m)

    def old_holders(runs_of: np.ndarray) -> np.ndarray:
        at = concatenated_ranges(starts[runs_of], starts[runs_of] + lengths[runs_of])
        return docs[at[~is_new[at]]]

    return old_holders(hit[was_patch != is_patch]), old_holders(hit[was_patch & is_patch])
