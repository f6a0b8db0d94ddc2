"""The term document weight (TDW) matrix on Spark: records, global order, canonical records, postings.

Every step is a DataFrame transform; the per-record work runs in Arrow UDFs, a batch at a time, over the
Spark-free kernels (``rendering``, ``filtering``).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import Broadcast
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from quiltdetect.mwo.arrowlists import flat, flat_numpy
from quiltdetect.mwo.filtering import EPS, suffix_weights_batch
from quiltdetect.mwo.rendering import render_batch

RECORD_SCHEMA = "doc_key long, doc_id string, url string, terms array<string>, weights array<double>"
CANON_SCHEMA = "doc_key long, doc_id string, url string, term_ids array<int> not null, weights array<double> not null"
POSTING_SCHEMA = "term_id int, doc_key long, position int, weight double, rem double"
FIELD_COLUMNS = ("doc_key", "doc_id", "url", "title", "headings", "anchors", "meta_keywords", "meta_description", "text")


def render_batches(batches: Iterator[pa.RecordBatch], min_weight_ratio: float) -> Iterator[pa.RecordBatch]:
    """Document-table batches -> weighted term records (documents without terms are dropped)."""
    for batch in batches:
        rows = {name: batch.column(name).to_pylist() for name in FIELD_COLUMNS[2:]
                if batch.column(name).null_count < batch.num_rows}
        rows.setdefault("text", [None] * batch.num_rows)
        records = render_batch(rows, min_weight_ratio)
        if records.pages.shape[0] == 0:
            continue
        kept = pa.array(records.pages)
        offsets = pa.array(records.offsets.astype(np.int32))
        yield pa.RecordBatch.from_arrays(
            [batch.column("doc_key").cast(pa.int64()).take(kept), batch.column("doc_id").take(kept),
             batch.column("url").take(kept), pa.ListArray.from_arrays(offsets, records.terms),
             pa.ListArray.from_arrays(offsets, pa.array(records.weights, pa.float64()))],
            names=["doc_key", "doc_id", "url", "terms", "weights"])


def weighted_records(docs: DataFrame, min_weight_ratio: float) -> DataFrame:
    """(doc_key, doc_id, url, terms, weights): every page rendered into its normalised weighted record."""
    return docs.select(*FIELD_COLUMNS).mapInArrow(
        lambda it: render_batches(it, min_weight_ratio), schema=RECORD_SCHEMA
    )


def global_order(spark: SparkSession, records: DataFrame) -> DataFrame:
    """(term, df, term_id): term ids numbered by increasing document frequency, ties by term.

    The order is total (term strings are unique), so the ids do not depend on partitioning.
    """
    df = records.select(F.explode("terms").alias("term")).groupBy("term").agg(F.count(F.lit(1)).alias("df"))
    ordered = df.orderBy("df", "term").rdd.zipWithIndex().map(lambda x: (x[0]["term"], int(x[0]["df"]), int(x[1])))
    return spark.createDataFrame(ordered, "term string, df long, term_id int")


def canonical_batches(batches: Iterator[pa.RecordBatch], vocabulary: Broadcast) -> Iterator[pa.RecordBatch]:
    """Records -> canonical records, by a lookup in the broadcast global order.

    ``vocabulary`` holds the order's terms as an Arrow string array whose position is the term
    id; each term is found by one hashed lookup per batch, and each record sorted by term id
    (terms are unique within a record, so the order is total).
    """
    for batch in batches:
        offsets, terms = flat(batch.column("terms"))
        _, weights = flat_numpy(batch.column("weights"))
        ids = pc.index_in(terms, value_set=vocabulary.value).to_numpy(zero_copy_only=False)
        record = np.repeat(np.arange(batch.num_rows, dtype=np.int64), np.diff(offsets))
        order = np.argsort((record << 32) | ids.astype(np.int64), kind="stable")
        lists = pa.array(offsets.astype(np.int32))
        yield pa.RecordBatch.from_arrays(
            [batch.column("doc_key"), batch.column("doc_id"), batch.column("url"),
             pa.ListArray.from_arrays(lists, pa.array(ids[order].astype(np.int32))),
             pa.ListArray.from_arrays(lists, pa.array(weights[order]))],
            names=["doc_key", "doc_id", "url", "term_ids", "weights"])


def canonical_records(spark: SparkSession, records: DataFrame, order: DataFrame, *, broadcast: bool) -> DataFrame:
    """(doc_key, doc_id, url, term_ids, weights): each record sorted by the global order.

    ``broadcast``: the global order goes to every executor and each record is mapped in place
    (no shuffle). Otherwise every record term is joined with the order and the records are
    regrouped: two shuffles of every term of the corpus. Both give the same rows.
    """
    if broadcast:
        table = order.select("term_id", "term").toArrow()
        by_id = table.column("term").take(pc.sort_indices(table.column("term_id"))).combine_chunks()
        vocabulary = spark.sparkContext.broadcast(by_id)
        return records.mapInArrow(lambda it: canonical_batches(it, vocabulary), schema=CANON_SCHEMA)
    entries = records.select("doc_key", F.explode(F.arrays_zip("terms", "weights")).alias("e")).select(
        "doc_key", F.col("e.terms").alias("term"), F.col("e.weights").alias("weight")
    )
    canon = (
        entries.join(order.select("term", "term_id"), on="term")
        .groupBy("doc_key")
        .agg(F.array_sort(F.collect_list(F.struct("term_id", "weight"))).alias("tw"))
        .select("doc_key", F.col("tw.term_id").alias("term_ids"), F.col("tw.weight").alias("weights"))
    )
    return canon.join(records.select("doc_key", "doc_id", "url"), on="doc_key").select(
        "doc_key", "doc_id", "url", "term_ids", "weights"
    )


def posting_batches(batches: Iterator[pa.RecordBatch], threshold: float) -> Iterator[pa.RecordBatch]:
    """Canonical records -> the postings of their weighted prefixes at ``threshold``."""
    for batch in batches:
        offsets, ids = flat_numpy(batch.column("term_ids"))
        _, weights = flat_numpy(batch.column("weights"))
        rem = suffix_weights_batch(offsets, weights)
        record = np.repeat(np.arange(batch.num_rows, dtype=np.int64), np.diff(offsets))
        keep = rem >= threshold - EPS  # rem falls along a record: its prefix
        if not keep.any():
            continue
        record = record[keep]
        keys = batch.column("doc_key").to_numpy(zero_copy_only=False).astype(np.int64)
        yield pa.RecordBatch.from_arrays(
            [pa.array(ids[keep].astype(np.int32)), pa.array(keys[record]),
             pa.array((np.flatnonzero(keep) - offsets[record]).astype(np.int32)), pa.array(weights[keep]),
             pa.array(rem[keep])], names=["term_id", "doc_key", "position", "weight", "rem"])


def prefix_postings(canon: DataFrame, threshold: float) -> DataFrame:
    """(term_id, doc_key, position, weight, rem) for every term in a record's weighted prefix at ``threshold``.

    ``rem`` is the record's weight from that position on; a query at t >= threshold keeps
    the postings with rem >= t, which are exactly the prefix terms at t.
    """
    return canon.select("doc_key", "term_ids", "weights").mapInArrow(
        lambda it: posting_batches(it, threshold), schema=POSTING_SCHEMA
    )
