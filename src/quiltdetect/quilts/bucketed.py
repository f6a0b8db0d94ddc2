"""Figure 5 on bucketed arrays: the (doc, gram) pairs travel as a few binary values per bucket.

The straightforward dataflow has one Spark row per (doc, gram) pair: ~450 rows per page,
each exploded, shuffled, joined and converted to Arrow and back. Here an Arrow UDF computes a
whole batch of gram sets at once and emits, per gram bucket, one row holding the pairs as flat
int64 arrays; a grouped Arrow UDF merges each bucket. Spark shuffles bytes, numpy does the
per-pair work (sort, run lengths, masks), and only the small tables (per-document patch
fractions, covers) are Spark rows.

Tables (every array a little-endian int64 ``binary`` value):

* gram buckets (the grams stage's table, independent of m): rows with ``bucket < n`` hold a
  gram bucket's pairs ``gram, doc, count`` sorted by (gram, doc), split into rows of about
  ``ROW_PAIRS`` pairs between grams (all documents of a gram in one row); rows with ``bucket >= n`` hold
  document statistics ``doc, n_grams, n_distinct`` (columns ``gram, doc, count`` reused).
* doc buckets (patch_grams): per ``doc_key mod n``, the patch pairs of its documents and each
  document's n_grams, n_patch_grams and server id; in an update (``increment``), also which
  documents to recompute (``recompute``) and each document's rank in doc_id order (``rank``),
  both null in a fresh run (every document is computed, and its key is its rank).

The greedy cover breaks its last tie on the smallest doc_id. A fresh run's keys are the ranks of
the doc_ids, so the cover compares keys; an update's new documents are keyed after the old ones,
so there the triples carry each source's rank (computed over the union, ``doc_ranks``), the
cover compares ranks and its picks are turned back into keys.

Results do not depend on the bucket counts or on the partitioning (the parity tests check it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

import mmh3
import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.common.foreign import server_column
from quiltdetect.kernel.buckets import (
    batch_gram_pairs,
    bucket_bounds,
    candidate_triple_rows,
    covers,
    doc_sums,
    gram_bucket,
    hashed_gram_pairs,
    is_member,
    patch_dfs,
    patch_mask,
    sort_pairs,
    stable_argsort,
    touched_docs,
)
from quiltdetect.kernel.words import batch_word_hashes

SERVER_SEED = 0x53525652  # "SRVR": server names -> 64-bit ids, compared for equality only

_SPARK_TYPES = {pa.int8(): "byte", pa.int32(): "int", pa.int64(): "long", pa.float64(): "double",
                pa.binary(): "binary", pa.string(): "string"}


def ddl(schema: pa.Schema) -> str:
    """The Spark DDL of an Arrow schema, so each table's columns are written once (here, in Arrow)."""
    return ", ".join(f"{f.name} {_SPARK_TYPES[f.type]}" for f in schema)


GRAM_BUCKETS = pa.schema([("bucket", pa.int32()), ("n", pa.int64()), ("gram", pa.binary()),
                          ("doc", pa.binary()), ("count", pa.binary())])
# Rows shuffled to doc buckets: part 0 = patch pairs (a=gram, b=doc, c=count, d=df or null), 1 =
# document statistics (a=doc, b=n_grams, c=n_distinct), 2 = servers (a=doc, b=server id), 3 =
# documents an update recomputes (a=doc), 4 = an update's ranks in doc_id order (a=doc, b=rank),
# 5 = documents an update recomputes if they are patchy (a=doc; ``touched_docs``' ``gained``).
# A bucket's gram counts (dbucket -1) carry in d the patch grams per df when dfs are kept.
DOC_PARTS = pa.schema([("dbucket", pa.int32()), ("part", pa.int8()), ("n_distinct", pa.int64()),
                       ("n_patch_grams", pa.int64()), ("a", pa.binary()), ("b", pa.binary()), ("c", pa.binary()),
                       ("d", pa.binary())])
# ``df`` (each pair's gram df; in the dbucket -1 row, patch grams per df) only in a table made
# ``with_df`` for ``narrow_doc_table``; null otherwise.
DOC_BUCKETS = pa.schema([("dbucket", pa.int32()), ("distinct_grams", pa.int64()), ("patch_grams", pa.int64()),
                         ("n_pairs", pa.int64()), ("gram", pa.binary()), ("doc", pa.binary()), ("count", pa.binary()),
                         ("sdoc", pa.binary()), ("n_grams", pa.binary()), ("n_patch", pa.binary()),
                         ("server", pa.binary()), ("recompute", pa.binary()), ("rank", pa.binary()),
                         ("df", pa.binary())])
# Rows by gram bucket: patch pairs (a=gram, b=doc, c=server, d=is_target, e=rank or null), then
# by target bucket: triples (a=target, b=gram, c=source, d=null; in an update c=the source's
# rank, d=its key).
TRIPLE_PARTS = pa.schema([("bucket", pa.int32()), ("a", pa.binary()), ("b", pa.binary()), ("c", pa.binary()),
                          ("d", pa.binary()), ("e", pa.binary())])
COVER_SCHEMA = pa.schema([("target", pa.int64()), ("rank", pa.int32()), ("source", pa.int64()),
                          ("covered", pa.int64()), ("shared", pa.int64()), ("n_pairs", pa.int64())])
FRACTIONS = pa.schema([("doc_key", pa.int64()), ("n_grams", pa.int64()), ("n_patch_grams", pa.int64()),
                       ("patchfrac", pa.float64())])
# Word hashes (the sweep's shared table): each document's words as little-endian uint64 hashes.
WORD_HASHES = pa.schema([("doc_key", pa.int64()), ("hashes", pa.binary())])
GRAM_BUCKETS_DDL = ddl(GRAM_BUCKETS)
WORD_HASHES_DDL = ddl(WORD_HASHES)
DOC_PARTS_DDL = ddl(DOC_PARTS)
DOC_BUCKETS_DDL = ddl(DOC_BUCKETS)
TRIPLE_PARTS_DDL = ddl(TRIPLE_PARTS)
COVER_DDL = ddl(COVER_SCHEMA)
FRACTIONS_DDL = ddl(FRACTIONS)

_EMPTY = np.empty(0, dtype=np.int64)


def _blob(values: np.ndarray) -> bytes:
    return np.ascontiguousarray(values, dtype="<i8").tobytes()


def _array(value) -> np.ndarray:
    """An int64 array from a binary Arrow scalar (no copy), empty for null."""
    if not value.is_valid:
        return _EMPTY
    return np.frombuffer(value.as_buffer(), dtype="<i8")


def _concat(column: pa.ChunkedArray | pa.Array, rows: np.ndarray | list[int] | None = None) -> np.ndarray:
    """The int64 arrays of a binary column (or of the given rows of it, in that order), concatenated."""
    arrays = [_array(column[int(i)]) for i in (range(len(column)) if rows is None else rows)]
    return np.concatenate(arrays) if arrays else _EMPTY


def _rows_by(column: pa.ChunkedArray | pa.Array, rows: np.ndarray | None, key: Callable[[np.ndarray], int]) -> list[int]:
    """Rows (all, or the given ones) ordered by ``key`` of their int64 array, empty ones dropped.

    Concatenated in this order, runs that each hold a contiguous range of docs (or grams) come
    out nearly sorted, which ``sort_pairs`` then finishes in one stable pass.
    """
    keyed = []
    for i in (range(len(column)) if rows is None else rows.tolist()):
        values = _array(column[int(i)])
        if values.shape[0]:
            keyed.append((key(values), int(i)))
    return [i for _, i in sorted(keyed)]


# A stored row of a gram-bucket table holds about this many pairs (0.5 MB per array): at 1,000,000
# pages one row per bucket (~30 MB per array) ran the heap out of memory in patch_grams, where
# Spark's Parquet reader holds whole batches of rows (see columnarReaderBatchSize in
# common/session.py). The table is written in 16 MB row groups where parquet-mr allows it.
# parquet-mr checks a row group's size every 100 rows at first, which here is up to 150 MB: every
# such row group made it log a 78-line "Too much memory used" warning (9 in a 100,000-page run),
# so it checks every 4. A dictionary of packed arrays never pays (each value is unique) and
# hashing each one for it cost a fifth of the table's write time (4.3 against 5.1-7.1 s at
# 100,000 pages), so there is none.
ROW_PAIRS = 1 << 16
ARRAY_WRITE_OPTIONS = {
    "parquet.block.size": str(16 << 20),
    "parquet.block.size.row.check.min": "4",
    "parquet.page.size.row.check.min": "4",
    "parquet.enable.dictionary": "false",
}


@dataclass(frozen=True)
class GramTable:
    """A gram-bucket table as the later stages read it."""

    frame: DataFrame
    buckets: int  # gram buckets (n): rows with bucket >= n hold document statistics
    # Several layers (an update's: the previous run's files and one layer per update, each a
    # range of doc keys): a gram's pairs may be in one row of each layer, merged by doc_buckets.
    layered: bool = False


def bucket_count(partitions: int) -> int:
    """Buckets per shuffle: 8 per shuffle partition, a power of two, so buckets spread evenly."""
    n = 16
    while n < 8 * max(1, partitions):
        n *= 2
    return n


# --------------------------------------------------------------------------- grams stage


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
                grams.append(_blob(found.grams[lo:hi]))
                doc_blobs.append(_blob(docs[lo:hi]))
                counts.append(_blob(found.counts[lo:hi]) if with_counts else None)
            has = found.n_distinct > 0
            if has.any():
                buckets.append(n + int(keys[0] % n))
                sizes.append(int(has.sum()))
                grams.append(_blob(keys[has]))
                doc_blobs.append(_blob((found.n_occurrences if with_counts else found.n_distinct)[has]))
                counts.append(_blob(found.n_distinct[has]))
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
        rows = (_rows_by(table.column("doc"), None, lambda docs: int(docs.min())) if bucket < n
                else _rows_by(table.column("gram"), None, lambda docs: int(docs.min())))
        grams, docs, counts = (_concat(table.column(c), rows) for c in ("gram", "doc", "count"))
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
             pa.array([_blob(grams[s:e]) for s, e in spans], pa.binary()),
             pa.array([_blob(docs[s:e]) for s, e in spans], pa.binary()),
             pa.array([_blob(counts[s:e]) if keep_counts else None for s, e in spans], pa.binary())],
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


# --------------------------------------------------------------------------- patch grams


def _doc_parts(n_docs: int, m: int, with_counts: bool, n_gram: int, first_new_key: int | None = None,
               with_df: bool = False):
    """Gram-bucket rows -> doc-bucket parts: patch pairs (1 < df <= m) and document statistics.

    ``first_new_key`` (an update: the new documents are keyed from it on) adds the
    documents to recompute: the new ones and the old ones ``touched_docs`` finds (its
    ``gained`` ones as part 5: only if patchy, which the doc bucket knows). ``with_df``:
    each patch pair carries its gram's df, and the bucket's counts the patch grams per df.
    """
    parts_of = partial(_parts_of_pairs, n_docs, m, with_counts, first_new_key, with_df)

    def doc_parts(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            rows: list[tuple] = []
            buckets = batch.column("bucket").to_numpy()
            for i in range(batch.num_rows):
                rows += parts_of(*(_array(batch.column(c)[i]) for c in ("gram", "doc", "count")),
                                 stats=bool(buckets[i] >= n_gram))
            yield _doc_parts_batch(rows)

    return doc_parts


def _layered_doc_parts(n_docs: int, m: int, with_counts: bool, n_gram: int, first_new_key: int | None = None,
                       with_df: bool = False) -> Callable[[pa.Table], pa.Table]:
    """``_doc_parts`` of one gram bucket of a layered gram table (an update's: the previous
    table's files and a layer per update, ``increment``), whose grams may each have rows in
    several layers: the rows are merged first. Layers hold ascending ranges of doc keys, so in
    the order of their smallest doc the rows give each gram's documents in ascending order."""
    parts_of = partial(_parts_of_pairs, n_docs, m, with_counts, first_new_key, with_df)

    def doc_parts(table: pa.Table) -> pa.Table:
        rows: list[tuple] = []
        if table.num_rows and table.column("bucket")[0].as_py() >= n_gram:  # statistics: a document in one row
            for i in range(table.num_rows):
                rows += parts_of(*(_array(table.column(c)[i]) for c in ("gram", "doc", "count")), stats=True)
        elif table.num_rows:
            order = _rows_by(table.column("doc"), None, lambda docs: int(docs.min()))
            grams, docs, counts = (_concat(table.column(c), order) for c in ("gram", "doc", "count"))
            grams, docs, counts = (sort_pairs(grams, docs, counts) if with_counts
                                   else (*sort_pairs(grams, docs), counts))
            rows = parts_of(grams, docs, counts, stats=False)
        return pa.Table.from_batches([_doc_parts_batch(rows)])

    return doc_parts


def _parts_of_pairs(n_docs: int, m: int, with_counts: bool, new: int | None, with_df: bool,
                    grams: np.ndarray, docs: np.ndarray, counts: np.ndarray, *, stats: bool) -> list[tuple]:
    """The doc-bucket parts of one gram-bucket row (every document of its grams, sorted by
    (gram, doc)), or with ``stats`` of one statistics row (doc, n_grams, n_distinct)."""
    rows: list[tuple] = []
    add = rows.append
    if stats:
        for dbucket, at in docs_by_bucket(grams, n_docs):
            add((dbucket, 1, 0, 0, _blob(grams[at]), _blob(docs[at]), _blob(counts[at]), None))
        if new is not None:
            rows += _recompute_parts(grams[grams >= new], n_docs)
        return rows
    if new is not None:
        changed, gained = touched_docs(grams, docs, docs >= new, m)
        rows += _recompute_parts(changed, n_docs) + _recompute_parts(gained, n_docs, part=5)
    is_patch, n_distinct, n_patch = patch_mask(grams, m)
    dfs = hist = None
    if with_df:
        dfs, hist = patch_dfs(grams, m)
        dfs = dfs[is_patch]
    grams, docs = grams[is_patch], docs[is_patch]
    counts = counts[is_patch] if with_counts else np.ones(grams.shape[0], dtype=np.int64)
    # the bucket's gram counts
    add((-1, 0, n_distinct, n_patch, None, None, None, None if hist is None else _blob(hist)))
    for dbucket, at in docs_by_bucket(docs, n_docs):
        add((dbucket, 0, 0, 0, _blob(grams[at]), _blob(docs[at]), _blob(counts[at]),
             None if dfs is None else _blob(dfs[at])))
    return rows


def _doc_parts_batch(rows: list[tuple]) -> pa.RecordBatch:
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in DOC_PARTS]
    return pa.RecordBatch.from_arrays([pa.array(list(v), f.type) for v, f in zip(columns, DOC_PARTS, strict=True)],
                                      schema=DOC_PARTS)


def _recompute_parts(docs: np.ndarray, n_docs: int, part: int = 3) -> list[tuple]:
    """Part-3 rows: the documents an update recomputes, by doc bucket (part 5: if patchy)."""
    return [(dbucket, part, 0, 0, _blob(docs[at]), None, None, None) for dbucket, at in docs_by_bucket(docs, n_docs)]


def docs_by_bucket(docs: np.ndarray, n_docs: int) -> list[tuple[int, np.ndarray]]:
    """(doc bucket, row indices) for each non-empty bucket of ``doc mod n_docs``."""
    if docs.shape[0] == 0:
        return []
    bucket = docs % n_docs
    order = stable_argsort(bucket)
    starts = np.flatnonzero(np.concatenate(([True], bucket[order][1:] != bucket[order][:-1])))
    bounds = np.append(starts, order.shape[0])
    return [(int(bucket[order[s]]), order[s:e]) for s, e in zip(bounds[:-1], bounds[1:], strict=True)]


def _server_ids(column: pa.Array) -> np.ndarray:
    return np.fromiter((mmh3.hash64(s, SERVER_SEED)[0] for s in column.to_pylist()), dtype=np.int64,
                       count=len(column))


def _rank_values(column: pa.Array) -> np.ndarray:
    return column.to_numpy(zero_copy_only=False).astype(np.int64)


def _value_parts(n_docs: int, part: int, values: Callable[[pa.Array], np.ndarray]):
    """(doc_key, x) rows -> doc-bucket parts ``part`` holding each document's int64 ``values(x)``."""

    def value_parts(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            keys = batch.column(0).to_numpy(zero_copy_only=False).astype(np.int64)
            ids = values(batch.column(1))
            parts = docs_by_bucket(keys, n_docs)
            yield pa.RecordBatch.from_arrays(
                [pa.array([d for d, _ in parts], pa.int32()), pa.array([part] * len(parts), pa.int8()),
                 pa.array([0] * len(parts), pa.int64()), pa.array([0] * len(parts), pa.int64()),
                 pa.array([_blob(keys[r]) for _, r in parts], pa.binary()),
                 pa.array([_blob(ids[r]) for _, r in parts], pa.binary()), pa.nulls(len(parts), pa.binary()),
                 pa.nulls(len(parts), pa.binary())],
                schema=DOC_PARTS)

    return value_parts


def _doc_values(table: pa.Table, rows: np.ndarray, sdoc: np.ndarray) -> np.ndarray:
    """The values of the (a=doc, b=value) parts ``rows``, aligned with ``sdoc`` (0 where absent)."""
    found_values = np.zeros(sdoc.shape[0], dtype=np.int64)
    if rows.shape[0] == 0:
        return found_values
    key, value = _concat(table.column("a"), rows), _concat(table.column("b"), rows)
    if not np.all(key[:-1] <= key[1:]):
        o = np.argsort(key)
        key, value = key[o], value[o]
    at = np.searchsorted(key, sdoc)
    found = at < key.shape[0]
    found_values[found] = value[at[found]]
    return found_values


def _patch_counts_of(sdoc: np.ndarray, docs: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each document of ``sdoc`` (sorted) with its patch gram count: the sum of its pairs'
    counts, 0 for a document without patch pairs."""
    with_patch, n_patch_of = doc_sums(docs, counts)
    n_patch = np.zeros(sdoc.shape[0], dtype=np.int64)
    n_patch[np.searchsorted(sdoc, with_patch)] = n_patch_of
    return n_patch


def _merge_doc_bucket(table: pa.Table, restricted: float | None = None, ranked: bool = False) -> pa.Table:
    """One doc bucket's parts -> its row of the doc-bucket table; ``restricted`` (an update, the
    run's theta): flag in ``recompute`` the documents that part-3 rows name and those part-5 rows
    name that are patchy; ``ranked``: each document's rank from part-4 rows in ``rank``."""
    part = table.column("part").to_numpy()
    dbucket = table.column("dbucket")[0].as_py()
    distinct = int(pa.compute.sum(table.column("n_distinct")).as_py() or 0)
    patch = int(pa.compute.sum(table.column("n_patch_grams")).as_py() or 0)
    # Each pair row holds one gram bucket's pairs sorted by (gram, doc): in gram order they are sorted.
    pairs = _rows_by(table.column("a"), np.flatnonzero(part == 0), lambda grams: int(grams[0]))
    grams, docs, counts = (_concat(table.column(c), pairs) for c in ("a", "b", "c"))
    with_df = bool(pa.compute.any(table.column("d").is_valid()).as_py())
    dfs = _concat(table.column("d"), pairs) if with_df else _EMPTY
    if grams.shape[0] and with_df:
        grams, docs, counts, dfs = sort_pairs(grams, docs, counts, dfs)
    elif grams.shape[0]:
        grams, docs, counts = sort_pairs(grams, docs, counts)
    stats = np.flatnonzero(part == 1)
    sdoc, n_grams = _concat(table.column("a"), stats), _concat(table.column("b"), stats)
    order = np.argsort(sdoc)
    sdoc, n_grams = sdoc[order], n_grams[order]
    n_patch = _patch_counts_of(sdoc, docs, counts)
    server = _doc_values(table, np.flatnonzero(part == 2), sdoc)
    flags = ranks = None
    if restricted is not None:
        named = np.unique(_concat(table.column("a"), np.flatnonzero(part == 3)))
        if_patchy = np.unique(_concat(table.column("a"), np.flatnonzero(part == 5)))
        patchy = (n_patch / np.maximum(n_grams, 1) >= restricted) & (n_patch > 0)  # as _fraction_rows
        flags = _blob((is_member(sdoc, named) | (is_member(sdoc, if_patchy) & patchy)).astype(np.int64))
    if ranked:
        ranks = _blob(_doc_values(table, np.flatnonzero(part == 4), sdoc))
    df = _blob(dfs) if with_df else None
    if dbucket < 0:
        sdoc = n_grams = n_patch = server = _EMPTY
        flags = ranks = None
        if with_df:  # patch grams per df, summed over the gram buckets
            hists = [_array(h) for h in table.column("d") if h.is_valid]
            df = _blob(np.sum(hists, axis=0))
    values = [dbucket, distinct, patch, grams.shape[0], _blob(grams), _blob(docs), _blob(counts), _blob(sdoc),
              _blob(n_grams), _blob(n_patch), _blob(server), flags, ranks, df]
    return pa.Table.from_arrays([pa.array([v], f.type) for v, f in zip(values, DOC_BUCKETS, strict=True)],
                                schema=DOC_BUCKETS)


def doc_buckets(
    grams_table: DataFrame, docs: DataFrame, m: int, n_gram: int, n_docs: int, *, with_counts: bool, foreign: str,
    first_new_key: int | None = None, theta: float = 0.0, ranks: DataFrame | None = None, with_df: bool = False,
    layered: bool = False,
) -> DataFrame:
    """The doc-bucket table: patch pairs and per-document counts, grouped by ``doc_key mod n_docs``.

    ``first_new_key``: an update's first new key (the new documents are keyed from it on): the
    table then flags the documents whose figures may change at ``theta`` (the previous run's), and
    later stages compute only those.
    ``ranks``: (doc_key, rank) when keys do not order like doc_ids (an update, ``doc_ranks``).
    ``with_df``: keep each pair's gram df, so ``narrow_doc_table`` can derive any smaller m.
    ``layered``: ``grams_table`` holds several layers (``GramTable``); each gram bucket's rows
    are merged first (a group per bucket: without a shuffle when the table is read bucketed).
    """
    if layered:
        parts = grams_table.groupBy("bucket").applyInArrow(
            _layered_doc_parts(n_docs, m, with_counts, n_gram, first_new_key, with_df), DOC_PARTS_DDL)
    else:
        parts = grams_table.mapInArrow(_doc_parts(n_docs, m, with_counts, n_gram, first_new_key, with_df),
                                       DOC_PARTS_DDL)
    if foreign != "none":
        servers = docs.select("doc_key", server_column(foreign).alias("server"))
        parts = parts.unionByName(servers.mapInArrow(_value_parts(n_docs, 2, _server_ids), DOC_PARTS_DDL))
    if ranks is not None:
        parts = parts.unionByName(ranks.select("doc_key", "rank").mapInArrow(_value_parts(n_docs, 4, _rank_values),
                                                                             DOC_PARTS_DDL))
    merge = partial(_merge_doc_bucket, restricted=theta if first_new_key is not None else None,
                    ranked=ranks is not None)
    return parts.groupBy("dbucket").applyInArrow(merge, DOC_BUCKETS_DDL)


def _narrow_rows(m: int):
    """Doc-bucket rows made ``with_df`` -> the same rows at a smaller m: the pairs with df <= m,
    each document's n_patch summed again, the patch grams counted from the per-df counts."""
    changed = ("patch_grams", "n_pairs", "gram", "doc", "count", "n_patch")

    def narrow_rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            out: dict[str, list] = {name: [] for name in changed}
            for i in range(batch.num_rows):
                dfs = _array(batch.column("df")[i])
                if batch.column("dbucket")[i].as_py() < 0:  # the gram counts: patch grams with df <= m
                    row = {"patch_grams": int(dfs[: m + 1].sum()), "n_pairs": 0}
                    row.update({c: batch.column(c)[i].as_py() for c in ("gram", "doc", "count", "n_patch")})
                else:
                    keep = dfs <= m
                    grams, docs, counts = (_array(batch.column(c)[i])[keep] for c in ("gram", "doc", "count"))
                    sdoc = _array(batch.column("sdoc")[i])
                    n_patch = _patch_counts_of(sdoc, docs, counts)
                    row = {"patch_grams": batch.column("patch_grams")[i].as_py(), "n_pairs": int(grams.shape[0]),
                           "gram": _blob(grams), "doc": _blob(docs), "count": _blob(counts), "n_patch": _blob(n_patch)}
                for name in changed:
                    out[name].append(row[name])
            arrays = [pa.array(out[f.name], f.type) if f.name in out
                      else pa.nulls(batch.num_rows, f.type) if f.name == "df" else batch.column(f.name)
                      for f in DOC_BUCKETS]
            yield pa.RecordBatch.from_arrays(arrays, schema=DOC_BUCKETS)

    return narrow_rows


def narrow_doc_table(doc_table: DataFrame, m: int) -> DataFrame:
    """The doc-bucket table at ``m`` from one made ``with_df`` at a larger m (no shuffle): a
    gram's df does not depend on m, so the patch pairs at m are those with df <= m."""
    return doc_table.mapInArrow(_narrow_rows(m), DOC_BUCKETS_DDL)


def patch_counts(doc_table: DataFrame) -> tuple[int, int, int]:
    """(distinct grams, patch grams, (doc, patch gram) pairs) of a doc-bucket table."""
    row = doc_table.agg(F.sum("distinct_grams"), F.sum("patch_grams"), F.sum("n_pairs")).first()
    return int(row[0] or 0), int(row[1] or 0), int(row[2] or 0)


# --------------------------------------------------------------------------- patchfrac


def _fraction_rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        for i in range(batch.num_rows):
            sdoc = _array(batch.column("sdoc")[i])
            if sdoc.shape[0] == 0:
                continue
            n_grams, n_patch = _array(batch.column("n_grams")[i]), _array(batch.column("n_patch")[i])
            flags = batch.column("recompute")[i]
            if flags.is_valid:  # an update: only the documents it recomputes
                keep = _array(flags).astype(bool)
                sdoc, n_grams, n_patch = sdoc[keep], n_grams[keep], n_patch[keep]
            yield pa.RecordBatch.from_arrays(
                [pa.array(sdoc), pa.array(n_grams), pa.array(n_patch), pa.array(n_patch / n_grams)], schema=FRACTIONS)


def fractions_of(doc_table: DataFrame) -> DataFrame:
    """(doc_key, n_grams, n_patch_grams, patchfrac) for every document with grams (in an
    update: every one it recomputes)."""
    return doc_table.mapInArrow(_fraction_rows, FRACTIONS_DDL)


def patchy_docs(fractions: DataFrame, theta: float) -> DataFrame:
    """Documents whose patch fraction is at least theta and that have a patch gram."""
    return fractions.where((F.col("patchfrac") >= theta) & (F.col("n_patch_grams") > 0))


# --------------------------------------------------------------------------- sources


def _target_pairs(n_gram: int, theta: float):
    """Doc-bucket rows -> the patch pairs, marked with the doc's server and patchiness, by gram bucket."""

    def target_pairs(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for i in range(batch.num_rows):
                grams, docs = _array(batch.column("gram")[i]), _array(batch.column("doc")[i])
                if grams.shape[0] == 0:
                    continue
                sdoc = _array(batch.column("sdoc")[i])
                n_grams, n_patch = _array(batch.column("n_grams")[i]), _array(batch.column("n_patch")[i])
                server = _array(batch.column("server")[i])
                patchy = (n_patch / n_grams >= theta) & (n_patch > 0)
                flags = batch.column("recompute")[i]
                if flags.is_valid:  # an update: only the documents it recomputes are targets
                    patchy &= _array(flags).astype(bool)
                at = np.searchsorted(sdoc, docs)
                is_target, servers = patchy[at].astype(np.int64), server[at]
                rank = batch.column("rank")[i]
                ranks = _array(rank)[at] if rank.is_valid else None
                buckets = gram_bucket(grams, n_gram)  # grams are sorted: buckets ascending
                bounds = np.flatnonzero(np.concatenate(([True], buckets[1:] != buckets[:-1], [True])))
                rows = list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
                yield pa.RecordBatch.from_arrays(
                    [pa.array([int(buckets[s]) for s, _ in rows], pa.int32()),
                     pa.array([_blob(grams[s:e]) for s, e in rows], pa.binary()),
                     pa.array([_blob(docs[s:e]) for s, e in rows], pa.binary()),
                     pa.array([_blob(servers[s:e]) for s, e in rows], pa.binary()),
                     pa.array([_blob(is_target[s:e]) for s, e in rows], pa.binary()),
                     pa.array([None if ranks is None else _blob(ranks[s:e]) for s, e in rows], pa.binary())],
                    schema=TRIPLE_PARTS)

    return target_pairs


def _triples_of_bucket(n_targets: int, foreign: bool):
    """All pairs of one gram bucket -> (target, gram, source) triples, by target bucket."""

    def triples(table: pa.Table) -> pa.Table:
        grams, docs, servers, is_target = (_concat(table.column(c)) for c in ("a", "b", "c", "d"))
        ranked = table.num_rows > 0 and table.column("e")[0].is_valid
        ids = _concat(table.column("e")) if ranked else docs  # what the cover orders sources by
        # Runs of equal grams are all the triples need: the cover of a target does not depend on
        # the order of its triples, so the pairs are not sorted by document within a gram.
        order = stable_argsort(grams)
        grams, ids, servers, is_target, docs = (a[order] for a in (grams, ids, servers, is_target, docs))
        t_at, s_at = candidate_triple_rows(grams, ids, servers, is_target.astype(bool), foreign=foreign)
        # targets by key; sources by what the cover orders them by (ranks in an update, with
        # their keys in ``d``)
        target, gram, source = docs[t_at], grams[t_at], ids[s_at]
        keys = docs[s_at] if ranked else None
        parts = docs_by_bucket(target, n_targets)
        return pa.Table.from_arrays(
            [pa.array([b for b, _ in parts], pa.int32()), pa.array([_blob(target[r]) for _, r in parts], pa.binary()),
             pa.array([_blob(gram[r]) for _, r in parts], pa.binary()),
             pa.array([_blob(source[r]) for _, r in parts], pa.binary()),
             pa.array([None if keys is None else _blob(keys[r]) for _, r in parts], pa.binary()),
             pa.nulls(len(parts), pa.binary())],
            schema=TRIPLE_PARTS)

    return triples


def _cover_bucket(table: pa.Table) -> pa.Table:
    # an update: sources are ranks (the tie-break) and the picks are reported by their keys (``d``)
    keys = _concat(table.column("d")) if table.num_rows and table.column("d")[0].is_valid else None
    picks = covers(_concat(table.column("a")), _concat(table.column("b")), _concat(table.column("c")), keys)
    arrays = [pa.array(picks[f.name].astype(np.int32 if f.name == "rank" else np.int64)) for f in COVER_SCHEMA]
    return pa.Table.from_arrays(arrays, schema=COVER_SCHEMA)


def cover_sources(doc_table: DataFrame, theta: float, n_gram: int, n_targets: int, *, foreign: bool) -> DataFrame:
    """Greedy covers of every patchy document: (target, rank, source, covered, shared, n_pairs)."""
    pairs = doc_table.mapInArrow(_target_pairs(n_gram, theta), TRIPLE_PARTS_DDL)
    triples = pairs.groupBy("bucket").applyInArrow(_triples_of_bucket(n_targets, foreign), TRIPLE_PARTS_DDL)
    return triples.groupBy("bucket").applyInArrow(_cover_bucket, COVER_DDL)
