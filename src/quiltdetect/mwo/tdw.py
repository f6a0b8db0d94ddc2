"""The term document weight (TDW) matrix on Spark: records, global order, canonical records, postings.

Every step is a DataFrame transform; the per-record work runs in pandas UDFs over the
Spark-free kernels (``rendering``, ``filtering``).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from quiltdetect.mwo.filtering import EPS, suffix_weights
from quiltdetect.mwo.rendering import render_rows

RECORD_SCHEMA = "doc_key long, terms array<string>, weights array<double>"
POSTING_SCHEMA = "term_id int, doc_key long, position int, weight double, rem double"
FIELD_COLUMNS = ("doc_key", "url", "title", "headings", "anchors", "meta_keywords", "meta_description", "text")


def render_batches(batches: Iterator[pd.DataFrame], min_weight_ratio: float) -> Iterator[pd.DataFrame]:
    """Document-table batches -> weighted term records (documents without terms are dropped)."""
    for batch in batches:
        keys, all_terms, all_weights = [], [], []
        for key, (names, weights) in zip(batch["doc_key"].tolist(),
                                          render_rows(batch.to_dict("records"), min_weight_ratio), strict=True):
            if names:
                keys.append(key)
                all_terms.append(names)
                all_weights.append(weights)
        yield pd.DataFrame({"doc_key": pd.Series(keys, dtype="int64"), "terms": all_terms, "weights": all_weights})


def weighted_records(docs: DataFrame, min_weight_ratio: float) -> DataFrame:
    """(doc_key, terms, weights): every page rendered into its normalised weighted record."""
    return docs.select(*FIELD_COLUMNS).mapInPandas(
        lambda it: render_batches(it, min_weight_ratio), schema=RECORD_SCHEMA
    )


def global_order(spark: SparkSession, records: DataFrame) -> DataFrame:
    """(term, df, term_id): term ids numbered by increasing document frequency, ties by term.

    The order is total (term strings are unique), so the ids do not depend on partitioning.
    """
    df = records.select(F.explode("terms").alias("term")).groupBy("term").agg(F.count(F.lit(1)).alias("df"))
    ordered = df.orderBy("df", "term").rdd.zipWithIndex().map(lambda x: (x[0]["term"], int(x[0]["df"]), int(x[1])))
    return spark.createDataFrame(ordered, "term string, df long, term_id int")


def canonical_records(records: DataFrame, order: DataFrame, docs: DataFrame) -> DataFrame:
    """(doc_key, doc_id, url, term_ids, weights): each record sorted by the global order."""
    entries = records.select("doc_key", F.explode(F.arrays_zip("terms", "weights")).alias("e")).select(
        "doc_key", F.col("e.terms").alias("term"), F.col("e.weights").alias("weight")
    )
    canon = (
        entries.join(order.select("term", "term_id"), on="term")
        .groupBy("doc_key")
        .agg(F.array_sort(F.collect_list(F.struct("term_id", "weight"))).alias("tw"))
        .select("doc_key", F.col("tw.term_id").alias("term_ids"), F.col("tw.weight").alias("weights"))
    )
    return canon.join(docs.select("doc_key", "doc_id", "url"), on="doc_key").select(
        "doc_key", "doc_id", "url", "term_ids", "weights"
    )


def posting_batches(batches: Iterator[pd.DataFrame], threshold: float) -> Iterator[pd.DataFrame]:
    """Canonical records -> the postings of their weighted prefixes at ``threshold``."""
    for batch in batches:
        term_ids, keys, positions, ws, rems = [], [], [], [], []
        for key, ids, weights in zip(batch["doc_key"].tolist(), batch["term_ids"], batch["weights"], strict=True):
            w = np.asarray(weights, dtype=np.float64)
            rem = suffix_weights(w)
            n = int(np.count_nonzero(rem >= threshold - EPS))
            term_ids.append(np.asarray(ids[:n], dtype=np.int32))
            keys.append(np.full(n, key, dtype=np.int64))
            positions.append(np.arange(n, dtype=np.int32))
            ws.append(w[:n])
            rems.append(rem[:n])
        if not keys:
            continue
        yield pd.DataFrame({"term_id": np.concatenate(term_ids), "doc_key": np.concatenate(keys),
                            "position": np.concatenate(positions), "weight": np.concatenate(ws),
                            "rem": np.concatenate(rems)})


def prefix_postings(canon: DataFrame, threshold: float) -> DataFrame:
    """(term_id, doc_key, position, weight, rem) for every term in a record's weighted prefix at ``threshold``.

    ``rem`` is the record's weight from that position on; a query at t >= threshold keeps
    the postings with rem >= t, which are exactly the prefix terms at t.
    """
    return canon.select("doc_key", "term_ids", "weights").mapInPandas(
        lambda it: posting_batches(it, threshold), schema=POSTING_SCHEMA
    )
