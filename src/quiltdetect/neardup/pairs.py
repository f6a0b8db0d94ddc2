"""Candidate pairs from equal LSH bands / supershingles / simhash pieces, verified exactly (Spark).

Pages sharing a bucket (same LSH band, supershingle or simhash piece at the same index) are
candidates. A bucket of more than ``cap`` pages (boilerplate, empty templates) is
never expanded into all its pairs: it is counted and gives star edges from its smallest page
to every other, which keep its pages connected for clustering. Every candidate is verified by
joining both pages' fingerprints and computing exactly what the algorithm decides on: B- and
C-similarity, or (lsh) resemblance and containment of the two shingle sets.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import reduce
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from quiltdetect.common.arrow import ddl
from quiltdetect.common.caching import SPILL, cut, keep, release
from quiltdetect.documents.keys import partition_values
from quiltdetect.documents.urls import site_of
from quiltdetect.kernel.bucket_rows import bucket_roots, rows_by_part, shared_buckets
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.neardup.fingerprints import fingerprint_batch_arrays, lsh_batch
from quiltdetect.neardup.simhash import n_pieces
from quiltdetect.neardup.tokens import batch_page_term_hashes, batch_term_hashes

FINGERPRINT_SCHEMA = ("doc_key long, site string, n_terms int, supershingles array<long>, "
                      "simhash array<long>, pieces array<long>")
# lsh: the shingle set as its uint64 values' bytes (little-endian, sorted as unsigned): one value
# per page for Parquet and Arrow (as array<long>, every value was a list element to encode, and
# Spark's array_intersect verified a pair slowly: docs/neardup.md); ``shingle_sets`` reads it back.
LSH_SCHEMA = "doc_key long, site string, n_terms int, shingles binary, bands array<long>"
# A bucket family's rows (value, idx, doc_key: a band key, supershingle or simhash piece of a page
# and its index), packed: a part's rows as little-endian arrays, at most ROW_ENTRIES a row (1.3 MB:
# the Parquet reader holds 64 rows, ``session.py``), ``part`` its Spark bucket's label
# (``keys.partition_values``). The neardup state (``neardup/chain.py``) and the collapsing's buckets.
BUCKET_ROWS = pa.schema([("part", pa.int32()), ("values", pa.binary()), ("idx", pa.binary()),
                         ("doc_keys", pa.binary())])
BUCKET_ROWS_DDL = ddl(BUCKET_ROWS)
ROW_ENTRIES = 1 << 16
# The rows of the shared buckets (``shared_bucket_rows``).
MEMBERS = pa.schema([("doc_key", pa.int64()), ("idx", pa.int32()), ("value", pa.int64()), ("size", pa.int64()),
                     ("old_size", pa.int64()), ("root", pa.int64())])
MEMBERS_DDL = ddl(MEMBERS)
# An update's touched buckets' rows (``touched_bucket_rows``): MEMBERS with each page's rank over
# the union and whether it is new, and each bucket's root (first page in rank order: rank and
# doc_key) and first old page's rank (null when none).
TOUCHED = pa.schema([("doc_key", pa.int64()), ("rank", pa.int64()), ("is_new", pa.bool_()), ("idx", pa.int32()),
                     ("value", pa.int64()), ("size", pa.int64()), ("old_size", pa.int64()), ("root", pa.int64()),
                     ("root_key", pa.int64()), ("old_root", pa.int64())])
TOUCHED_DDL = ddl(TOUCHED)
# The columns of pairs/ (besides the two documents) per algorithm.
PAIR_COLUMNS = {"lsh": ("resemblance", "containment", "same_site")}
HENZINGER_COLUMNS = ("b_similarity", "c_similarity", "same_site")


def pair_columns(algorithm: str) -> tuple[str, ...]:
    """What a pair row of this algorithm carries besides its two documents."""
    return PAIR_COLUMNS.get(algorithm, HENZINGER_COLUMNS)


def long_lists(arrays: list[np.ndarray | None]) -> pa.Array:
    """An Arrow list<int64> column (Spark array<long>, same bits) of per-row 64-bit arrays, None a
    null row: one concatenation and an offsets buffer, no Python int per value."""
    lengths = np.fromiter((0 if x is None else x.shape[0] for x in arrays), dtype=np.int32, count=len(arrays))
    offsets = np.zeros(len(arrays) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    present = [x.view(np.int64) for x in arrays if x is not None]
    values = np.concatenate(present) if present else np.empty(0, dtype=np.int64)
    nulls = np.fromiter((x is None for x in arrays), dtype=bool, count=len(arrays))
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values),
                                    mask=pa.array(nulls) if nulls.any() else None)


def packed_sets(values: np.ndarray, sizes: np.ndarray, present: np.ndarray) -> pa.Array:
    """An Arrow binary column of uint64 sets given one after the other (``sizes`` each): each set
    its values' little-endian bytes, null where not ``present``. No Python object per set."""
    offsets = np.zeros(sizes.shape[0] + 1, dtype=np.int64)
    np.cumsum(sizes * 8, out=offsets[1:])
    small = offsets[-1] < 2**31  # binary's int32 offsets; else large_binary (a batch of huge pages)
    kind = pa.binary() if small else pa.large_binary()
    validity = None if present.all() else pa.array(present).buffers()[1]
    return pa.Array.from_buffers(kind, sizes.shape[0], [validity, pa.py_buffer(offsets.astype(np.int32) if small else offsets),
                                                        pa.py_buffer(np.ascontiguousarray(values, dtype="<u8"))],
                                 null_count=int((~present).sum()))


def shingle_sets(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(every set's values one after the other, uint64; where each starts, int64 (n + 1,)) of a
    ``packed_sets`` column, a null as an empty set."""
    if column.null_count:
        column = column.fill_null(b"")
    wide = pa.types.is_large_binary(column.type)
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int64 if wide else np.int32)
    offsets = offsets[column.offset:column.offset + len(column) + 1].astype(np.int64)
    data = column.buffers()[2]
    values = np.frombuffer(data, dtype="<u8") if data is not None and data.size else np.empty(0, dtype="<u8")
    return values.view(np.uint64), offsets // 8


def _page_columns(batch: pa.RecordBatch) -> tuple[pa.Array, list, list]:
    """(texts as the batch's column, urls, image lists) of a batch of (doc_key, url, host, text,
    images) rows (``tokens.batch_term_hashes``'s arguments)."""
    return batch.column(3), batch.column(1).to_pylist(), batch.column(4).to_pylist()


def _sites(batch: pa.RecordBatch) -> pa.Array:
    return pa.array([site_of(h or "") for h in batch.column(2).to_pylist()], pa.string())


def fingerprints(docs: DataFrame, cfg: NearDupConfig) -> DataFrame:
    """One row per page: doc_key, Henzinger site, n_terms, and the algorithm's fingerprints
    (supershingles, simhash, simhash pieces; for lsh the shingle set and its band keys)."""
    if cfg.algorithm == "lsh":
        return lsh_fingerprints(docs, cfg)
    k, wrap, count = cfg.k, cfg.wrap, n_pieces(cfg.c_threshold)

    def batches(source: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in source:
            rows = fingerprint_batch_arrays(batch_page_term_hashes(*_page_columns(batch)), k, wrap, count)
            n_terms, ss, sh, pc = zip(*rows, strict=True) if rows else ((), (), (), ())
            yield pa.RecordBatch.from_arrays(
                [batch.column(0).cast(pa.int64()), _sites(batch), pa.array(n_terms, pa.int32()),
                 long_lists(list(ss)), long_lists(list(sh)), long_lists(list(pc))],
                names=["doc_key", "site", "n_terms", "supershingles", "simhash", "pieces"])

    return docs.select("doc_key", "url", "host", "text", "images").mapInArrow(batches, FINGERPRINT_SCHEMA)


def lsh_fingerprints(docs: DataFrame, cfg: NearDupConfig) -> DataFrame:
    """doc_key, site, n_terms, shingles (the set), bands (lsh_bands band keys) per page."""
    k, wrap, bands, rows = cfg.k, cfg.wrap, cfg.lsh_bands, cfg.lsh_rows

    def batches(source: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in source:
            sets, keys = lsh_batch(*batch_term_hashes(*_page_columns(batch)), k, wrap, bands, rows)
            present = sets.present
            offsets = np.zeros(present.shape[0] + 1, dtype=np.int32)
            np.cumsum(present * np.int32(bands), out=offsets[1:])
            band_keys = pa.ListArray.from_arrays(pa.array(offsets), pa.array(keys.ravel().view(np.int64)),
                                                 mask=pa.array(~present) if not present.all() else None)
            yield pa.RecordBatch.from_arrays(
                [batch.column(0).cast(pa.int64()), _sites(batch), pa.array(sets.n_terms, pa.int32()),
                 packed_sets(sets.values, sets.sizes, present), band_keys],
                names=["doc_key", "site", "n_terms", "shingles", "bands"])

    return docs.select("doc_key", "url", "host", "text", "images").mapInArrow(batches, LSH_SCHEMA)


def _packed(column: pa.ChunkedArray, dtype: str) -> np.ndarray:
    """The arrays of a binary column of packed arrays (``dtype`` each), concatenated."""
    pieces = []
    for chunk in column.chunks:
        if chunk.null_count:
            chunk = chunk.fill_null(b"")
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[chunk.offset:chunk.offset + len(chunk) + 1]
        data = chunk.buffers()[2]
        if data is not None and offsets[-1] > offsets[0]:
            pieces.append(np.frombuffer(data, dtype=np.uint8)[offsets[0]:offsets[-1]].view(dtype))
    return np.concatenate(pieces) if pieces else np.empty(0, dtype=dtype)


def packed_bucket_rows(fps: DataFrame, column: str, parts: int) -> DataFrame:
    """A family's bucket rows of the pages of ``fps``: (value, idx, doc_key) for each entry of
    the array ``column``, split into ``parts`` by value (``bucket_rows.parts_of``) and packed,
    a part's rows of a task in rows of at most ``ROW_ENTRIES`` (``BUCKET_ROWS``, the part as its
    Spark bucket's label: ``keys.partition_values``)."""
    labels = partition_values(parts)

    def batches(source: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        keys, positions, values = [], [], []
        for batch in source:
            lists = batch.column(1)
            lengths = pc.list_value_length(lists).fill_null(0).to_numpy().astype(np.int64)
            starts = np.cumsum(lengths) - lengths
            values.append(lists.flatten().to_numpy().astype(np.int64, copy=False))
            keys.append(np.repeat(batch.column(0).to_numpy().astype(np.int64, copy=False), lengths))
            positions.append((np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(starts, lengths)).astype(np.int32))
        if not values:
            return
        value, idx, key = np.concatenate(values), np.concatenate(positions), np.concatenate(keys)
        for part, rows in rows_by_part(value, parts):
            for s in range(0, rows.shape[0], ROW_ENTRIES):
                chunk = rows[s:s + ROW_ENTRIES]
                yield pa.RecordBatch.from_arrays(
                    [pa.array([labels[part]], pa.int32()), pa.array([value[chunk].astype("<i8").tobytes()]),
                     pa.array([idx[chunk].astype("<i4").tobytes()]), pa.array([key[chunk].astype("<i8").tobytes()])],
                    schema=BUCKET_ROWS)

    return fps.where(F.col(column).isNotNull()).select("doc_key", column).mapInArrow(batches, BUCKET_ROWS_DDL)


# A task of ``parts_in_tasks`` holds about this many bytes of packed bucket rows at most (20 bytes
# an entry): what one task keeps in memory (a persisted frame's column batch) and writes.
TASK_BYTES = 128 << 20


def parts_in_tasks(packed: DataFrame, entries: int) -> DataFrame:
    """Packed bucket rows (``BUCKET_ROWS``, about ``entries`` in all) hash-partitioned on the
    part: grouped by part (``shared_bucket_rows``) without another shuffle, a part at a time,
    and written as the state table (a task writes a file per Spark bucket it holds), in as many
    tasks as the session has cores, or more where a task would hold over ``TASK_BYTES``: not a
    Spark task per part, each of which costs the same however few its rows (docs/performance.md,
    "Figures behind choices in the code")."""
    tasks = max(packed.sparkSession.sparkContext.defaultParallelism, math.ceil(entries * 20 / TASK_BYTES))
    return packed.repartition(tasks, "part")


def _members(table: pa.Table, first_new: int) -> pa.Table:
    """``MEMBERS`` of one part's packed rows (``bucket_rows.shared_buckets``)."""
    values, idx = _packed(table.column("values"), "<i8"), _packed(table.column("idx"), "<i4")
    keys = _packed(table.column("doc_keys"), "<i8")
    found = shared_buckets(values, idx, keys, first_new)
    return pa.Table.from_arrays(
        [pa.array(keys[found.rows]), pa.array(idx[found.rows].astype(np.int32)), pa.array(values[found.rows]),
         pa.array(found.size), pa.array(found.old_size), pa.array(found.root)], schema=MEMBERS)


def shared_bucket_rows(rows: DataFrame, first_new: int = 0) -> DataFrame:
    """The rows of every bucket of two or more pages that holds a page with doc_key >=
    ``first_new`` (every bucket of two or more pages when 0), with the bucket's size, its pages
    below ``first_new`` and its smallest doc_key (``MEMBERS_DDL``), from packed bucket rows
    (``BUCKET_ROWS``): each part's rows together in numpy (``bucket_rows.shared_buckets``).
    Read bucketed on the part (an update's state tables) or hash-partitioned on it
    (``parts_in_tasks``), the rows are grouped where they are; others are shuffled by part."""
    return rows.groupBy("part").applyInArrow(lambda table: _members(table, first_new), MEMBERS_DDL)


def shared_bucket_rows_of_files(spark: SparkSession, parts: list[list[str]], first_new: int) -> DataFrame:
    """``shared_bucket_rows`` of packed bucket rows stored as local Parquet files, ``parts`` the
    files of each part (``folder.bucket_files``): a task per part reads its files with pyarrow in
    the Python worker. Spark's Parquet reader would decode every stored row in the JVM and send
    it to Python again, which takes longer than pyarrow's read (docs/performance.md, "Figures
    behind choices in the code")."""

    def members(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for files in batch.column(0).to_pylist():
                yield from _members(pq.read_table(files, columns=["values", "idx", "doc_keys"]), first_new).to_batches()

    listed = spark.sparkContext.parallelize([(files,) for files in parts], max(1, len(parts)))
    return spark.createDataFrame(listed, "files array<string>").mapInArrow(members, MEMBERS_DDL)


# The groups of buckets ``touched_bucket_rows`` finds roots in (each a numpy call; Spark's
# partitions are fewer and adaptive execution sizes them).
BUCKET_GROUPS = 256


def _touched(table: pa.Table, first_new: int) -> pa.Table:
    """``TOUCHED`` of the ranked rows of whole buckets (``bucket_rows.bucket_roots``)."""
    keys, ranks = table.column("doc_key").to_numpy(), table.column("rank").to_numpy()
    found = bucket_roots(table.column("value").to_numpy(), table.column("idx").to_numpy(), ranks, keys, first_new)
    return pa.Table.from_arrays(
        [table.column("doc_key"), table.column("rank"), pa.array(keys >= first_new), table.column("idx"),
         table.column("value"), table.column("size"), table.column("old_size"), pa.array(found.root),
         pa.array(found.root_key), pa.array(found.old_root, mask=found.old_root < 0)], schema=TOUCHED)


def touched_bucket_rows(members: DataFrame, ranks: DataFrame, first_new: int) -> DataFrame:
    """``TOUCHED_DDL``: the rows of shared buckets that hold a page with doc_key >= ``first_new``
    (``shared_bucket_rows``) with their pages' ranks (``ranks``: doc_key, rank), each bucket's
    root and first old page found in numpy, a group of buckets at a time (by a hash of the
    value), not by a window that sorts every row by bucket in Spark."""
    ranked = (members.join(ranks, on="doc_key")
              .withColumn("_group", F.pmod(F.xxhash64("value"), F.lit(BUCKET_GROUPS))))
    return ranked.groupBy("_group").applyInArrow(
        lambda table: _touched(table.select(list(MEMBERS.names) + ["rank"]), first_new), TOUCHED_DDL)


def bucket_members(rows: DataFrame) -> DataFrame:
    """The rows of every bucket of two or more pages, with the bucket's size and root (its
    smallest doc_key): (doc_key, idx, value, size, root), persisted at once (the caller releases
    it: the pairs' self-join and the stars read it three times, which Spark would otherwise
    compute three times over, side by side), from packed bucket rows (``BUCKET_ROWS``; each
    part's rows found shared in numpy, ``bucket_rows.shared_buckets``), not as Spark rows
    through a hash aggregate, a join and a window (docs/performance.md, "Figures behind choices
    in the code")."""
    return cut(shared_bucket_rows(rows).select("doc_key", "idx", "value", "size", "root"), SPILL)


def bucket_pairs(members: DataFrame, cap: int, *, order: str = "doc_key", root: str = "root",
                 root_key: str = "root", new: str | None = None) -> DataFrame:
    """The bucket rule, written once for a fresh run and an update: (a, b) on doc_keys, a first in
    ``order``, from the rows of buckets of two or more pages (``members``: doc_key, idx, value,
    size, ``order``, the bucket's first member in that order ``root`` and its doc_key ``root_key``).

    A bucket of at most ``cap`` pages gives every pair of its pages; a larger one (boilerplate,
    empty templates) is never expanded: it gives star edges from its root to every other page,
    which keep its pages connected for clustering. With ``new`` (an update: a boolean column,
    and ``old_root``, the bucket's root among the old pages alone), only the pairs that a fresh
    run over the union gives and the previous run did not: a pair of a small bucket with a new
    page, a star edge to a new page, or every star edge of a bucket whose root is new. The
    rows are few (only the shared buckets'): the self-join hashes them on the bucket."""
    small = members.where(F.col("size") <= cap).select(*dict.fromkeys(["idx", "value", "doc_key", order,
                                                                        *([new] if new else [])]))
    pairs = small.alias("x").join(small.alias("y"), ["value", "idx"])
    ordered = F.col(f"x.{order}") < F.col(f"y.{order}")
    star = (F.col("size") > cap) & (F.col(order) != F.col(root))
    if new is not None:
        ordered = ordered & (F.col(f"x.{new}") | F.col(f"y.{new}"))
        root_is_new = F.col("old_root").isNull() | (F.col("old_root") != F.col(root))
        star = star & (F.col(new) | root_is_new)
    pairs = pairs.where(ordered).select(F.col("x.doc_key").alias("a"), F.col("y.doc_key").alias("b"))
    stars = members.where(star).select(F.col(root_key).alias("a"), F.col("doc_key").alias("b"))
    return pairs.unionByName(stars).distinct()


def _b_similarity(a: str, b: str) -> Column:
    return F.coalesce(F.expr(f"aggregate(zip_with({a}, {b}, (x, y) -> if(x = y, 1, 0)), 0, (s, v) -> s + v)"),
                      F.lit(0))


def _c_similarity(a: str, b: str) -> Column:
    return F.coalesce(F.expr(f"384 - aggregate(zip_with({a}, {b}, (x, y) -> bit_count(x ^ y)), 0, (s, v) -> s + v)"),
                      F.lit(0))


def verify(candidates: DataFrame, fps: DataFrame) -> DataFrame:
    """(a, b, b_similarity, c_similarity, same_site) for candidate pairs, computed exactly."""
    left = fps.select(F.col("doc_key").alias("a"), F.col("site").alias("site_a"),
                      F.col("supershingles").alias("ss_a"), F.col("simhash").alias("sh_a"))
    right = fps.select(F.col("doc_key").alias("b"), F.col("site").alias("site_b"),
                       F.col("supershingles").alias("ss_b"), F.col("simhash").alias("sh_b"))
    return candidates.join(left, on="a").join(right, on="b").select(
        "a", "b",
        _b_similarity("ss_a", "ss_b").cast("int").alias("b_similarity"),
        _c_similarity("sh_a", "sh_b").cast("int").alias("c_similarity"),
        ((F.col("site_a") == F.col("site_b")) & (F.col("site_a") != "")).alias("same_site"),
    )


VERIFIED_LSH = "a long, b long, resemblance double, containment double, same_site boolean"


def verify_lsh(candidates: DataFrame, fps: DataFrame) -> DataFrame:
    """(a, b, resemblance, containment, same_site) of candidate pairs, exact on the shingle sets:
    both pages' packed sets joined to the pair, their intersection counted in numpy
    (``intersection_sizes``: the sets are sorted), the measures as ``lsh.resemblance_containment``
    computes them (a double division of integer counts, so the two agree to the last bit)."""
    # hashed, not sorted: a sort-merge join would sort the rows that carry the sets on each side
    left = fps.select(F.col("doc_key").alias("a"), F.col("site").alias("site_a"),
                      F.col("shingles").alias("s_a")).hint("shuffle_hash")
    right = fps.select(F.col("doc_key").alias("b"), F.col("site").alias("site_b"),
                       F.col("shingles").alias("s_b")).hint("shuffle_hash")
    joined = candidates.join(left, on="a").join(right, on="b").select("a", "b", "site_a", "site_b", "s_a", "s_b")
    return joined.mapInArrow(_verified_batches, VERIFIED_LSH)


def intersection_sizes(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """|A_i ∩ B_i| for each row i of two columns of sorted, duplicate-free sets, each given as
    (values one after the other, where each set starts: ``shingle_sets``). Each row is one
    ``searchsorted`` of the smaller set in the larger."""
    (va, oa), (vb, ob) = a, b
    out = np.zeros(oa.shape[0] - 1, dtype=np.int64)
    for i, (a0, a1, b0, b1) in enumerate(zip(oa[:-1].tolist(), oa[1:].tolist(), ob[:-1].tolist(), ob[1:].tolist(),
                                             strict=True)):
        x, y = va[a0:a1], vb[b0:b1]
        if x.shape[0] > y.shape[0]:
            x, y = y, x
        if x.shape[0] == 0:
            continue
        at = np.searchsorted(y, x)
        at[at == y.shape[0]] = 0
        out[i] = int(np.count_nonzero(y[at] == x))
    return out


def _verified_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        sa, sb = shingle_sets(batch.column(4)), shingle_sets(batch.column(5))
        common = intersection_sizes(sa, sb).astype(np.float64)
        n_a, n_b = np.diff(sa[1]).astype(np.float64), np.diff(sb[1]).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            resemblance, containment = common / (n_a + n_b - common), common / np.minimum(n_a, n_b)
        site_a, site_b = batch.column(2), batch.column(3)
        same_site = pc.and_(pc.equal(site_a, site_b), pc.not_equal(site_a, ""))
        yield pa.RecordBatch.from_arrays([batch.column(0), batch.column(1), pa.array(resemblance), pa.array(containment),
                                          same_site], names=["a", "b", "resemblance", "containment", "same_site"])


# The rows of a few pages (those a run verifies, names or decides) are picked out of a table of
# every page by a broadcast join up to this many pages, by a shuffle above.
BROADCAST_PAGES = 1_000_000
# ... and the pages are named by their doc_keys, broadcast to the table's scan up to this many
# (repeats counted: a hash table of 8-byte keys, tens of MB at most), shuffled with it above.
BROADCAST_KEYS = 4_000_000


def with_keys(table: DataFrame, keys: DataFrame) -> tuple[DataFrame, int]:
    """The rows of ``table`` whose doc_key is in ``keys`` (doc_key, repeats allowed), and how many
    keys were asked for (repeats counted: at least the pages found): picked by a broadcast of the
    keys up to ``BROADCAST_KEYS`` (the table is then only scanned), else by a shuffle. The keys
    are not made distinct first: a semi-join gives each row once however often its key is asked
    for, and the distinct cost a shuffle and a job of its own (the callers' keys are persisted)."""
    n = keys.count()
    return table.join(F.broadcast(keys) if n <= BROADCAST_KEYS else keys, on="doc_key", how="left_semi"), n


def rows_of(table: DataFrame, keys: DataFrame) -> tuple[DataFrame, int]:
    """``with_keys``, persisted. Joins with the result may broadcast it (``small``: the count is
    at least its rows)."""
    rows, n = with_keys(table, keys)
    return cut(rows, SPILL), n


# A table of at most this many rows is sorted in one task: one file, which adaptive execution made
# of ``orderBy``'s range partitions anyway (pairs/ of 1,000,000 pages, ~115,000 rows, is a few
# MB), without the job that samples every row for the ranges and the shuffle into them.
ONE_TASK_SORT_ROWS = 1_000_000


def in_order(frame: DataFrame, n: int, *columns: str) -> DataFrame:
    """``frame`` (``n`` rows) sorted by ``columns`` to be written: in one task up to
    ``ONE_TASK_SORT_ROWS`` rows, by ``orderBy`` above (part files of key ranges)."""
    if n <= ONE_TASK_SORT_ROWS:
        return frame.coalesce(1).sortWithinPartitions(*columns)
    return frame.orderBy(*columns)


def small(frame: DataFrame, n: int) -> DataFrame:
    """``frame`` (of about ``n`` pages' rows) marked for a broadcast join when n is at most
    ``BROADCAST_PAGES``."""
    return F.broadcast(frame) if n <= BROADCAST_PAGES else frame


# The fingerprint columns the verification reads (``verify_lsh``; ``verify``): the others (lsh's
# bands, an array of 40 longs a page) are not decoded when the candidates' pages are picked out.
VERIFIED_COLUMNS = {True: ("doc_key", "site", "shingles"), False: ("doc_key", "site", "supershingles", "simhash")}


def candidate_pages(candidates: dict[str, DataFrame], fps: DataFrame) -> DataFrame:
    """The fingerprints the verification reads (``VERIFIED_COLUMNS``) of the pages at either end
    of a candidate pair of any family, persisted (``rows_of``; the caller releases them): what
    the verification joins to each pair, so that only these pages' shingle sets, not every
    page's, are shuffled to their pairs."""
    ends = [c.select(F.col(end).alias("doc_key")) for c in candidates.values() for end in ("a", "b")]
    columns = VERIFIED_COLUMNS["shingles" in fps.columns]
    return rows_of(fps.select(*columns), reduce(DataFrame.unionByName, ends))[0]


# The bucket families of each algorithm: (name in counts and state, fingerprint column).
FAMILIES = {"lsh": (("lsh", "bands"),), "b": (("b", "supershingles"),), "combined": (("b", "supershingles"),),
            "c": (("c", "pieces"),), "combined-sites": (("b", "supershingles"), ("c", "pieces"))}
CAPPED_SCHEMA = "family string, idx int, value long, size long, root long"


def near_duplicate_pairs(fps: DataFrame, cfg: NearDupConfig, counts: dict[str, Any]) -> DataFrame:
    """The near-duplicate pairs of the configured algorithm among the pages of ``fps``, on
    doc_keys (a < b): persisted (the caller unpersists) and counted in ``counts["pairs"]``, with
    each bucket family's counts (``count_buckets``). What the quilt job's and the phrase job's
    near-duplicate collapsing use; the neardup job runs the same rules as a step of its chain,
    keeping its state (``neardup/chain.py``)."""
    shared: list[DataFrame] = []
    candidates: dict[str, DataFrame] = {}
    parts = int(fps.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    for name, column in FAMILIES[cfg.algorithm]:
        members = bucket_members(packed_bucket_rows(fps, column, parts))  # grouped by part: shuffled once
        shared.append(members)
        candidates[name] = cut(bucket_pairs(members, cfg.bucket_cap), SPILL)
        count_buckets(members, cfg.bucket_cap, counts, name)
    pages = candidate_pages(candidates, fps)
    pairs = keep(decided_pairs(candidates, pages, cfg), SPILL)
    counts["pairs"] = pairs.count()
    for frame in [pages, *candidates.values(), *shared]:
        release(frame)
    return pairs


def decided_pairs(candidates: dict[str, DataFrame], fps: DataFrame, cfg: NearDupConfig) -> DataFrame:
    """The candidate pairs (a, b: doc_keys) of each bucket family that are near-duplicates by the
    algorithm's definition, verified exactly on the fingerprints ``fps`` (a, b, then
    ``pair_columns``)."""
    if cfg.algorithm == "lsh":
        verified = verify_lsh(candidates["lsh"], fps)
        return verified.where((F.col("resemblance") >= F.lit(float(cfg.resemblance_threshold)))
                              | (F.col("containment") >= F.lit(float(cfg.containment_threshold))))
    parts: list[DataFrame] = []
    b_t, c_t, cc_t = cfg.b_threshold, cfg.c_threshold, cfg.combined_c_threshold
    if "b" in candidates:
        verified = verify(candidates["b"], fps)
        passes = F.col("b_similarity") >= b_t
        if cfg.algorithm != "b":
            passes = passes & (F.col("c_similarity") >= cc_t)
        if cfg.algorithm == "combined-sites":
            passes = passes & F.col("same_site")
        parts.append(verified.where(passes))
    if "c" in candidates:
        passes = F.col("c_similarity") >= c_t
        if cfg.algorithm == "combined-sites":
            passes = passes & ~F.col("same_site")
        parts.append(verify(candidates["c"], fps).where(passes))
    # combined-sites: the two parts are disjoint (same site vs not), so a plain union
    return reduce(DataFrame.unionByName, parts)


def count_buckets(shared: DataFrame, cap: int, counts: dict[str, Any], name: str) -> None:
    """A bucket family's counts, from the rows of its buckets of two or more pages
    (``bucket_members``: each bucket has one row of its root): how many, how many over the cap,
    the pairs those did not expand, the largest."""
    over = F.col("size") > cap
    row = shared.where(F.col("doc_key") == F.col("root")).agg(
        F.count(F.lit(1)),
        F.sum(over.cast("long")),
        F.sum(F.when(over, F.col("size") * (F.col("size") - 1) / 2 - (F.col("size") - 1)).otherwise(0)),
        F.max("size"),
    ).first()
    counts[f"{name}_buckets"] = int(row[0])
    counts[f"{name}_capped_buckets"] = int(row[1] or 0)
    counts[f"{name}_pairs_not_expanded"] = int(row[2] or 0)
    counts[f"{name}_largest_bucket"] = int(row[3] or 0)
