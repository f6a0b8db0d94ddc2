"""The grams stage's table (figure 5, stages 1-4): every document's distinct k-grams as gram
buckets, independent of m, c and θ, stored and reused (and layered by an update).

Rows with ``bucket < n`` hold a gram bucket's pairs ``gram, doc, count`` sorted by (gram, doc),
split into rows of about ``ROW_PAIRS`` pairs between grams (all documents of a gram in one
row); rows with ``bucket >= n`` hold document statistics: ``gram`` the documents, ``doc``
their n_grams, ``count`` their n_distinct.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.common.arrow import ddl
from quiltdetect.kernel.buckets import (
    batch_gram_pairs,
    bucket_bounds,
    hashed_gram_pairs,
    sort_pairs,
)
from quiltdetect.kernel.words import batch_word_hashes
from quiltdetect.quilts.arrays import blob, concat, rows_by

GRAM_BUCKETS = pa.schema([("bucket", pa.int32()), ("n", pa.int64()), ("gram", pa.binary()),
                          ("doc", pa.binary()), ("count", pa.binary())])
# Word hashes (the sweep's shared table): each document's words as little-endian uint64 hashes.
WORD_HASHES = pa.schema([("doc_key", pa.int64()), ("hashes", pa.binary())])
GRAM_BUCKETS_DDL = ddl(GRAM_BUCKETS)
WORD_HASHES_DDL = ddl(WORD_HASHES)

# A stored row holds about this many pairs (0.5 MB per array): one row per bucket ran the heap
# out of memory in patch_grams at a million pages, where Spark's Parquet reader holds whole
# batches of rows (see columnarReaderBatchSize in common/session.py; docs/performance.md,
# "Memory and defaults at a million pages").
# The table is written in 16 MB row groups where parquet-mr allows it.
ROW_PAIRS = 1 << 16


@dataclass(frozen=True)
class GramTable:
    """A gram-bucket table as the later stages read it."""

    frame: DataFrame
    buckets: int  # gram buckets (n): rows with bucket >= n hold document statistics
    # Several layers (an update's: the previous run's files and one layer per update, each a
    # range of doc keys): a gram's pairs may be in one row of each layer, merged by doc_buckets.
    layered: bool = False


def _word_hash_rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        hashes, counts = batch_word_hashes(batch.column(1).to_pylist())
        offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts * 8, out=offsets[1:])
        blobs = pa.Array.from_buffers(pa.large_binary(), counts.shape[0],
                                      [None, pa.py_buffer(offsets), pa.py_buffer(hashes.astype("<u8", copy=False))])
        yield pa.RecordBatch.from_arrays([batch.column(0).cast(pa.int64()), blobs.cast(pa.binary())],
                                         schema=WORD_HASHES)


def word_hash_table(docs: DataFrame) -> DataFrame:
    """(doc_key, hashes) of ``docs`` (doc_key, text): every document tokenised and hashed once,
    for a caller that needs the grams of several k (``gram_buckets(..., hashed=True)``)."""
    return docs.select("doc_key", "text").mapInArrow(_word_hash_rows, WORD_HASHES_DDL)


def hash_runs(column: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(word hashes of every row one after the other as uint64, words per row as int64) of a
    binary column of ``word_hash_table``, read in place (a null row has no words)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    wide = pa.types.is_large_binary(column.type)
    buffers = column.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64 if wide else np.int32)[column.offset:
                                                                               column.offset + len(column) + 1]
    lo, hi = (int(offsets[0]), int(offsets[-1])) if len(offsets) else (0, 0)
    values = (np.frombuffer(buffers[2], dtype="<u8", count=(hi - lo) // 8, offset=lo) if hi > lo
              else np.empty(0, dtype=np.uint64))
    return values.astype(np.uint64, copy=False), (np.diff(offsets) // 8).astype(np.int64)


def gram_rows(k: int, n: int, with_counts: bool,
              hashed: bool = False) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The ``mapInArrow`` function from (doc_key, text) batches to GRAM_BUCKETS rows: each
    batch's (gram, doc) pairs cut by gram bucket (rows ``bucket < n``) and its documents' gram
    counts (a row ``n + doc bucket``). ``hashed``: the text column holds word hashes already."""
    def rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            keys = batch.column(0).to_numpy(zero_copy_only=False).astype(np.int64)
            if keys.shape[0] == 0:
                continue
            if hashed:
                found = hashed_gram_pairs(*hash_runs(batch.column(1)), k)
            else:
                found = batch_gram_pairs(batch.column(1).to_pylist(), k)
            docs = keys[found.docs]
            bounds = bucket_bounds(found.grams, n)
            nonempty = np.flatnonzero(np.diff(bounds))
            buckets, sizes, grams, doc_blobs, counts = [], [], [], [], []
            for b in nonempty.tolist():
                lo, hi = int(bounds[b]), int(bounds[b + 1])
                buckets.append(b)
                sizes.append(hi - lo)
                grams.append(blob(found.grams[lo:hi]))
                doc_blobs.append(blob(docs[lo:hi]))
                counts.append(blob(found.counts[lo:hi]) if with_counts else None)
            has = found.n_distinct > 0
            if has.any():
                buckets.append(n + int(keys[0] % n))
                sizes.append(int(has.sum()))
                grams.append(blob(keys[has]))
                doc_blobs.append(blob((found.n_occurrences if with_counts else found.n_distinct)[has]))
                counts.append(blob(found.n_distinct[has]))
            yield pa.RecordBatch.from_arrays(
                [pa.array(buckets, pa.int32()), pa.array(sizes, pa.int64()), pa.array(grams, pa.binary()),
                 pa.array(doc_blobs, pa.binary()), pa.array(counts, pa.binary())], schema=GRAM_BUCKETS)

    return rows


def merge_gram_bucket(n: int, with_counts: bool, row_pairs: int = ROW_PAIRS) -> Callable[[pa.Table], pa.Table]:
    """The ``applyInArrow`` function that merges one bucket's rows of ``gram_rows`` (from any
    number of batches, in any order) into its stored rows: pairs sorted by (gram, doc), at most
    ``row_pairs`` a row; the same rows for any arrival order."""
    def merge(table: pa.Table) -> pa.Table:
        bucket = table.column("bucket")[0].as_py()
        # Each row holds one input batch's pairs, a contiguous range of docs: in doc order, the
        # docs of every gram are already ascending. Statistics rows (their docs in "gram") go in
        # doc order too, so the stored table does not depend on the order the batches arrived in.
        rows = (rows_by(table.column("doc"), None, lambda docs: int(docs.min())) if bucket < n
                else rows_by(table.column("gram"), None, lambda docs: int(docs.min())))
        grams, docs, counts = (concat(table.column(c), rows) for c in ("gram", "doc", "count"))
        if bucket < n:
            if with_counts:
                grams, docs, counts = sort_pairs(grams, docs, counts)
            else:
                grams, docs = sort_pairs(grams, docs)
        keep_counts = with_counts or bucket >= n
        cuts = row_cuts(grams, row_pairs) if bucket < n else [0, grams.shape[0]]
        spans = list(zip(cuts[:-1], cuts[1:], strict=True))
        return pa.Table.from_arrays(
            [pa.array([bucket] * len(spans), pa.int32()), pa.array([e - s for s, e in spans], pa.int64()),
             pa.array([blob(grams[s:e]) for s, e in spans], pa.binary()),
             pa.array([blob(docs[s:e]) for s, e in spans], pa.binary()),
             pa.array([blob(counts[s:e]) if keep_counts else None for s, e in spans], pa.binary())],
            schema=GRAM_BUCKETS)

    return merge


def row_cuts(sorted_grams: np.ndarray, limit: int) -> list[int]:
    """Offsets that split a bucket's sorted pairs into rows of about ``limit`` pairs,
    never inside a gram's run: a row always holds every document of its grams, so its run
    lengths are document frequencies."""
    n = sorted_grams.shape[0]
    cuts, at = [0], limit
    while at < n:
        at = int(np.searchsorted(sorted_grams, sorted_grams[at - 1], side="right"))
        if at >= n:
            break
        cuts.append(at)
        at += limit
    return [*cuts, n]


def gram_buckets(docs: DataFrame, k: int, n: int, *, with_counts: bool, hashed: bool = False) -> DataFrame:
    """The gram-bucket table of ``docs`` (doc_key, text), or with ``hashed`` of a
    ``word_hash_table`` (doc_key, hashes): see the module doc. Both give the same table."""
    column = "hashes" if hashed else "text"
    rows = docs.select("doc_key", column).mapInArrow(gram_rows(k, n, with_counts, hashed), GRAM_BUCKETS_DDL)
    return rows.groupBy("bucket").applyInArrow(merge_gram_bucket(n, with_counts), GRAM_BUCKETS_DDL)


def gram_bucket_counts(table: DataFrame, n: int) -> tuple[int, int]:
    """(documents with grams, distinct (doc, gram) pairs) of a gram-bucket table."""
    row = table.agg(
        F.sum(F.when(F.col("bucket") >= n, F.col("n")).otherwise(0)),
        F.sum(F.when(F.col("bucket") < n, F.col("n")).otherwise(0)),
    ).first()
    return int(row[0] or 0), int(row[1] or 0)

