"""Near-duplicate bucket rows as flat arrays: (value, idx, doc_key) per band key, supershingle or
simhash piece of a page, split into parts by value and searched for shared buckets in numpy.

A bucket is the rows of equal value at the same idx. The Spark job stores a part's rows as a
few packed rows (``neardup/pairs.py``) instead of one Spark row each: writing, reading and
grouping four million rows of three numbers cost Spark seconds that numpy spends in
milliseconds (docs/neardup.md, "Throughput"). Nothing here depends on how the rows were split
into parts or batches, so the buckets found are the same for any partitioning.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from quiltdetect.kernel.grams import fmix64

_EMPTY = np.empty(0, dtype=np.int64)


def parts_of(values: np.ndarray, parts: int) -> np.ndarray:
    """The part (0 .. parts - 1) of each row's value: its fmix64 mixed hash modulo ``parts``,
    so that parts are even whatever the values (simhash pieces are not uniform)."""
    with np.errstate(over="ignore"):
        return (fmix64(np.asarray(values).view(np.uint64)) % np.uint64(parts)).astype(np.int64)


def rows_by_part(values: np.ndarray, parts: int) -> list[tuple[int, np.ndarray]]:
    """(part, row indices in input order) for each part that has rows."""
    if values.shape[0] == 0:
        return []
    part = parts_of(values, parts)
    order = np.argsort(part, kind="stable")
    cuts = np.flatnonzero(np.diff(part[order])) + 1
    bounds = np.concatenate(([0], cuts, [order.shape[0]]))
    return [(int(part[order[s]]), order[s:e]) for s, e in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)]


@dataclass(frozen=True)
class SharedBuckets:
    """The rows of the buckets of two or more rows that hold a new row, bucket by bucket, each
    with its bucket's size, its old rows (doc_key < first_new) and smallest doc_key."""

    rows: np.ndarray  # int64: indices into the arrays given, a bucket's rows together
    size: np.ndarray  # int64 per row: the rows of its bucket
    old_size: np.ndarray  # int64 per row: the old rows of its bucket
    root: np.ndarray  # int64 per row: the smallest doc_key of its bucket


def shared_buckets(values: np.ndarray, idx: np.ndarray, doc_keys: np.ndarray, first_new: int = 0) -> SharedBuckets:
    """Every bucket (equal ``values`` and ``idx``) of two or more rows with a doc_key of at
    least ``first_new`` (0: every shared bucket). ``values`` int64, ``idx`` int, ``doc_keys``
    int64, one row per (doc_key, idx).

    Most values are held once: one sort of the values finds those held twice or more, and only
    their rows are sorted by (value, idx) into buckets. An update's part holds ten old rows for
    each new one: only the rows whose value may be a new row's (``maybe_new``) are sorted."""
    values = np.asarray(values, dtype=np.int64)
    if first_new > 0:
        doc_keys = np.asarray(doc_keys, dtype=np.int64)
        picked = maybe_new(values, doc_keys >= first_new)
        found = _shared(values[picked], np.asarray(idx)[picked], doc_keys[picked], first_new)
        return SharedBuckets(picked[found.rows], found.size, found.old_size, found.root)
    return _shared(values, idx, doc_keys, first_new)


# ``maybe_new``'s table has at least this many slots per new row (and at least MIN_SLOTS): about
# one old row in this many whose value no new row holds is sorted all the same.
SLOTS_PER_NEW_ROW = 32
MIN_SLOTS = 1 << 12


def maybe_new(values: np.ndarray, new: np.ndarray) -> np.ndarray:
    """The indices of the rows whose value a ``new`` row may hold (every new row's, and every row
    of equal value): a table of bits of the values that the new rows set, looked up by every
    row in one gather, instead of a sort of every row."""
    slots = max(MIN_SLOTS, 1 << int(np.count_nonzero(new) * SLOTS_PER_NEW_ROW).bit_length())
    mixed = (values ^ (values >> 32)) & (slots - 1)  # the high bits too: simhash pieces are not uniform
    seen = np.zeros(slots, dtype=bool)
    seen[mixed[new]] = True
    return np.flatnonzero(seen[mixed])


def _shared(values: np.ndarray, idx: np.ndarray, doc_keys: np.ndarray, first_new: int) -> SharedBuckets:
    """``shared_buckets`` of the rows given (``values`` int64)."""
    n = values.shape[0]
    if n < 2:
        return SharedBuckets(_EMPTY, _EMPTY, _EMPTY, _EMPTY)
    order = np.argsort(values)
    ranked = values[order]
    repeated = ranked[1:] == ranked[:-1]
    twice = np.zeros(n, dtype=bool)
    twice[1:] = repeated
    twice[:-1] |= repeated
    held = order[twice]
    idx = np.asarray(idx, dtype=np.int64)
    held = held[np.lexsort((idx[held], values[held]))]
    if held.shape[0] == 0:
        return SharedBuckets(_EMPTY, _EMPTY, _EMPTY, _EMPTY)
    v, i, d = values[held], idx[held], np.asarray(doc_keys, dtype=np.int64)[held]
    starts = np.flatnonzero(np.concatenate(([True], (v[1:] != v[:-1]) | (i[1:] != i[:-1]))))
    sizes = np.diff(np.append(starts, held.shape[0]))
    new = np.add.reduceat((d >= first_new).astype(np.int64), starts)
    roots = np.minimum.reduceat(d, starts)
    chosen = (sizes > 1) & (new > 0)
    rows = held[np.repeat(chosen, sizes)]
    sizes, new, roots = sizes[chosen], new[chosen], roots[chosen]
    return SharedBuckets(rows, np.repeat(sizes, sizes), np.repeat(sizes - new, sizes), np.repeat(roots, sizes))


@dataclass(frozen=True)
class BucketRoots:
    """Each row's bucket's first row in rank order: its rank and doc_key, and the first rank
    among the bucket's old rows (doc_key < first_new; -1 when it has none)."""

    root: np.ndarray  # int64 per row
    root_key: np.ndarray  # int64 per row
    old_root: np.ndarray  # int64 per row, -1: no old row in the bucket


def bucket_roots(values: np.ndarray, idx: np.ndarray, ranks: np.ndarray, doc_keys: np.ndarray,
                 first_new: int) -> BucketRoots:
    """The roots of the buckets (equal ``values`` and ``idx``) of the rows given, each row's in
    input order: what an update's touched buckets add to their rows once each row has its page's
    rank over the union (ranks are distinct per page, so the first row is unique)."""
    values, idx = np.asarray(values, dtype=np.int64), np.asarray(idx, dtype=np.int64)
    ranks, doc_keys = np.asarray(ranks, dtype=np.int64), np.asarray(doc_keys, dtype=np.int64)
    n = values.shape[0]
    if n == 0:
        return BucketRoots(_EMPTY, _EMPTY, _EMPTY)
    order = np.lexsort((ranks, idx, values))
    v, i = values[order], idx[order]
    starts = np.flatnonzero(np.concatenate(([True], (v[1:] != v[:-1]) | (i[1:] != i[:-1]))))
    sizes = np.diff(np.append(starts, n))
    old_ranks = np.where(doc_keys[order] < first_new, ranks[order], np.iinfo(np.int64).max)
    old_root = np.minimum.reduceat(old_ranks, starts)
    old_root[old_root == np.iinfo(np.int64).max] = -1
    root, root_key, old = (np.empty(n, dtype=np.int64) for _ in range(3))
    root[order] = np.repeat(ranks[order[starts]], sizes)
    root_key[order] = np.repeat(doc_keys[order[starts]], sizes)
    old[order] = np.repeat(old_root, sizes)
    return BucketRoots(root, root_key, old)
