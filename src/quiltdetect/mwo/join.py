"""The corpus-wide MWO self-join on Spark: l-prefix filtering, positional filtering, verification.

Records are cut into blocks of ``block_size`` consecutive doc_keys, each block holding its
records' extended prefixes (``filtering.prefix_block_csr``). Every pair of blocks (a block with
itself included) meets in one task: one sparse product of the two blocks' term incidence
matrices counts the shared extended-prefix terms of every cross pair, the pairs sharing
min(l_a, l_b) of them are bounded by the weighted positional filter, and only the
survivors leave the task. Nothing per shared term is ever shuffled: the cost that grows with
the square of the corpus is C code inside tasks, the data moved grows with blocks x blocks.
Survivors are verified batch-wise by the vectorised exact kernel (``filtering.mwo_batch``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from pyspark import RDD
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from quiltdetect.mwo.arrowlists import flat_numpy
from quiltdetect.mwo.filtering import (
    EPS,
    mwo_batch,
    positional_bounds,
    prefix_block_csr,
    shared_prefix_candidates,
)

PAIR_SCHEMA = "key_a long, key_b long, mwo double"
BLOCK_FIELDS = ("keys", "offsets", "terms", "weights", "afters", "ells")
BLOCK_SCHEMA = "block long, records long, postings long, " + ", ".join(f"{f} binary" for f in BLOCK_FIELDS)
BLOCK_PAIR_SCHEMA = "sharing long, candidates long, key_a array<long>, key_b array<long>"
DTYPES = {"keys": np.int64, "offsets": np.int64, "terms": np.int32, "weights": np.float64,
          "afters": np.float64, "ells": np.int32}


def _block_row(table: pa.Table, t: float, ell: int) -> pa.Table:
    """One block's records -> one row: its extended prefixes, each array as raw bytes."""
    table = table.sort_by("doc_key")
    offsets, ids = flat_numpy(table.column("term_ids"))
    _, weights = flat_numpy(table.column("weights"))
    arrays = prefix_block_csr(offsets, ids, weights, t, ell)
    arrays["keys"] = table.column("doc_key").to_numpy().astype(np.int64)
    row = {"block": pa.array([int(table.column("block")[0].as_py())], pa.int64()),
           "records": pa.array([table.num_rows], pa.int64()), "postings": pa.array([len(arrays["terms"])], pa.int64())}
    row.update({f: pa.array([np.ascontiguousarray(arrays[f], dtype=DTYPES[f]).tobytes()], pa.binary())
                for f in BLOCK_FIELDS})
    return pa.table(row)


def prefix_blocks(canon: DataFrame, t: float, ell: int, block_size: int) -> DataFrame:
    """(block, records, postings, arrays...): the records' extended prefixes at t, block by block."""
    return canon.select((F.col("doc_key") / block_size).cast("long").alias("block"), "doc_key", "term_ids",
                        "weights").groupBy("block").applyInArrow(lambda table: _block_row(table, t, ell),
                                                                 schema=BLOCK_SCHEMA)


def _arrays(row: tuple) -> dict[str, np.ndarray]:
    return {f: np.frombuffer(row[i], dtype=DTYPES[f]) for i, f in enumerate(BLOCK_FIELDS)}


def compare_blocks(a: dict[str, np.ndarray], b: dict[str, np.ndarray], same: bool, t: float,
                   n_terms: int) -> tuple[int, int, list[int], list[int]]:
    """Two blocks -> (pairs sharing a prefix term, l-prefix candidates, survivors' key_a, key_b)."""
    rows_a, rows_b, sharing = shared_prefix_candidates(a["offsets"], a["terms"], a["ells"], b["offsets"],
                                                       b["terms"], b["ells"], n_terms, same)
    bound = positional_bounds(a["offsets"], a["terms"], a["weights"], a["afters"], b["offsets"], b["terms"],
                              b["weights"], b["afters"], rows_a, rows_b)
    keep = bound >= t - EPS
    return sharing, len(rows_a), a["keys"][rows_a[keep]].tolist(), b["keys"][rows_b[keep]].tolist()


def block_rdd(spark: SparkSession, blocks: DataFrame, n_blocks: int) -> RDD:
    """The blocks as an RDD of (block, arrays as bytes) for ``block_pairs``: persist it.

    A cartesian product reads its right-hand partition once per element of the left one, so
    an RDD that is not persisted is converted from the DataFrame again and again. Partitions
    are chosen so that about four cartesian tasks per core share the block pairs.
    """
    parts = max(1, min(n_blocks, math.ceil(2 * math.sqrt(spark.sparkContext.defaultParallelism))))
    return blocks.select("block", *BLOCK_FIELDS).rdd.map(lambda r: (r[0], tuple(r[1:]))).coalesce(parts)


def block_pairs(spark: SparkSession, rdd: RDD, t: float, n_terms: int) -> DataFrame:
    """(sharing, candidates, key_a, key_b) per pair of blocks (i <= j): every block pair meets once."""
    met = rdd.cartesian(rdd).filter(lambda p: p[0][0] <= p[1][0]).map(
        lambda p: compare_blocks(_arrays(p[0][1]), _arrays(p[1][1]), p[0][0] == p[1][0], t, n_terms))
    return spark.createDataFrame(met, BLOCK_PAIR_SCHEMA)


def survivors(pairs: DataFrame) -> DataFrame:
    """(key_a, key_b) of every candidate that passed both filters."""
    return pairs.select(F.explode(F.arrays_zip("key_a", "key_b")).alias("p")).select(
        F.col("p.key_a").alias("key_a"), F.col("p.key_b").alias("key_b"))


def verify_arrow(batches: Iterator[pa.RecordBatch], t: float) -> Iterator[pa.RecordBatch]:
    """Pairs with both records -> the pairs whose MWO >= t, with their MWO (a batch at a time)."""
    for batch in batches:
        (oa, ia), (_, wa) = flat_numpy(batch.column("ids_a")), flat_numpy(batch.column("w_a"))
        (ob, ib), (_, wb) = flat_numpy(batch.column("ids_b")), flat_numpy(batch.column("w_b"))
        kept, values = mwo_batch(oa, ia, wa, ob, ib, wb, t)
        yield pa.RecordBatch.from_arrays(
            [pa.array(batch.column("key_a").to_numpy()[kept], pa.int64()),
             pa.array(batch.column("key_b").to_numpy()[kept], pa.int64()), pa.array(values, pa.float64())],
            names=["key_a", "key_b", "mwo"])


def verified_pairs(pairs: DataFrame, canon: DataFrame, t: float) -> DataFrame:
    """(doc_id_a, doc_id_b, mwo) for the candidate pairs whose MWO >= t; doc_id_a < doc_id_b."""
    rec_a = canon.select(F.col("doc_key").alias("key_a"), F.col("term_ids").alias("ids_a"), F.col("weights").alias("w_a"))
    rec_b = canon.select(F.col("doc_key").alias("key_b"), F.col("term_ids").alias("ids_b"), F.col("weights").alias("w_b"))
    joined = pairs.join(rec_a, on="key_a").join(rec_b, on="key_b").select("key_a", "key_b", "ids_a", "w_a", "ids_b", "w_b")
    kept = joined.mapInArrow(lambda it: verify_arrow(it, t), schema=PAIR_SCHEMA)
    ids = canon.select("doc_key", "doc_id")
    return (
        kept.join(ids.select(F.col("doc_key").alias("key_a"), F.col("doc_id").alias("doc_id_a")), on="key_a")
        .join(ids.select(F.col("doc_key").alias("key_b"), F.col("doc_id").alias("doc_id_b")), on="key_b")
        .select("doc_id_a", "doc_id_b", "mwo")
    )
