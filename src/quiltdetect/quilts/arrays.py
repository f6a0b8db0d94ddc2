"""Tables of packed arrays: how figure 5's dataflow moves (doc, gram) pairs through Spark.

The straightforward dataflow has one Spark row per (doc, gram) pair: ~450 rows per page,
each exploded, shuffled, joined and converted to Arrow and back. Here an Arrow UDF computes a
whole batch of gram sets at once and emits, per bucket, one row holding the pairs as flat
int64 arrays (each a little-endian ``binary`` value); a grouped Arrow UDF merges each bucket.
Spark shuffles bytes, numpy does the per-pair work (sort, run lengths, masks), and only the
small tables (per-document patch fractions, covers) are Spark rows. The stages' tables:
``gram_table`` (grams), ``patch_grams`` (doc buckets), ``patchfrac``, ``cover`` (sources).

Results do not depend on the bucket counts or on the partitioning (the parity tests check it).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

from quiltdetect.kernel.buckets import stable_argsort

EMPTY = np.empty(0, dtype=np.int64)


def blob(values: np.ndarray) -> bytes:
    """An int64 array as a little-endian ``binary`` value."""
    return np.ascontiguousarray(values, dtype="<i8").tobytes()


def int64s(value) -> np.ndarray:
    """An int64 array from a binary Arrow scalar (no copy), empty for null."""
    if not value.is_valid:
        return EMPTY
    return np.frombuffer(value.as_buffer(), dtype="<i8")


def concat(column: pa.ChunkedArray | pa.Array, rows: np.ndarray | list[int] | None = None) -> np.ndarray:
    """The int64 arrays of a binary column (or of the given rows of it, in that order), concatenated."""
    arrays = [int64s(column[int(i)]) for i in (range(len(column)) if rows is None else rows)]
    return np.concatenate(arrays) if arrays else EMPTY


def rows_by(column: pa.ChunkedArray | pa.Array, rows: np.ndarray | None, key: Callable[[np.ndarray], int]) -> list[int]:
    """Rows (all, or the given ones) ordered by ``key`` of their int64 array, empty ones dropped.

    Concatenated in this order, runs that each hold a contiguous range of docs (or grams) come
    out nearly sorted, which ``sort_pairs`` then finishes in one stable pass.
    """
    keyed = []
    for i in (range(len(column)) if rows is None else rows.tolist()):
        values = int64s(column[int(i)])
        if values.shape[0]:
            keyed.append((key(values), int(i)))
    return [i for _, i in sorted(keyed)]


def bucket_count(partitions: int) -> int:
    """Buckets per shuffle: 8 per shuffle partition, a power of two, so buckets spread evenly."""
    n = 16
    while n < 8 * max(1, partitions):
        n *= 2
    return n


def docs_by_bucket(docs: np.ndarray, n_docs: int) -> list[tuple[int, np.ndarray]]:
    """(doc bucket, row indices) for each non-empty bucket of ``doc mod n_docs``."""
    if docs.shape[0] == 0:
        return []
    bucket = docs % n_docs
    order = stable_argsort(bucket)
    starts = np.flatnonzero(np.concatenate(([True], bucket[order][1:] != bucket[order][:-1])))
    bounds = np.append(starts, order.shape[0])
    return [(int(bucket[order[s]]), order[s:e]) for s, e in zip(bounds[:-1], bounds[1:], strict=True)]

