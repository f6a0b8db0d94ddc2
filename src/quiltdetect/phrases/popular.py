"""Sampled shingles per document, duplicate suppression and popular shingles (§3.2-3.3, on Spark).

The counts are the paper's sorted triples (i, s, d): one row per (document, selector), grouped
by (selector, shingle). A shingle is popular when its group holds at least ``popular``
documents; each document's popular count is the number of its m shingles that are popular.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.kernel.words import batch_word_hashes
from quiltdetect.neardup.clusters import connected_components
from quiltdetect.neardup.collapse import cluster_representatives
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.neardup.pairs import near_duplicate_pairs
from quiltdetect.phrases.groups import GROUP_BITS, count_groups, group_buckets
from quiltdetect.phrases.sampling import phrase_texts, sample_batch, selectors

SAMPLE_SCHEMA = "doc_key long, n_words int, shingles array<long>, supershingles array<long>"
TEXT_SCHEMA = "shingle long, phrase string"


def sampled_shingles(docs: DataFrame, k: int, m: int) -> DataFrame:
    """(doc_key, n_words, shingles: m phrase fingerprints, supershingles: 6) per document with words."""

    def batches(frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        table = selectors(m)
        for frame in frames:
            hashes, counts = batch_word_hashes(frame["text"].tolist())
            s = sample_batch(hashes, counts, k, m, table)
            yield pd.DataFrame({"doc_key": pd.Series(frame["doc_key"].to_numpy()[s.rows], dtype="int64"),
                                "n_words": pd.Series(s.n_words, dtype="int32"),
                                "shingles": list(s.shingles.view(np.int64)),
                                "supershingles": list(s.supershingles.view(np.int64))})

    return docs.select("doc_key", "text").mapInPandas(batches, SAMPLE_SCHEMA)


def suppress_near_duplicates(samples: DataFrame, b: int, counts: dict[str, Any],
                             checkpoint_every: int = 1) -> tuple[DataFrame, DataFrame, DataFrame]:
    """(kept samples, clusters, pairs): one document per cluster of near-duplicates; ``pairs`` is
    persisted, for the caller to unpersist once it has materialised the others.

    Near-duplicates agree in at least ``b`` of the 6 supershingles of the same 84 selectors
    (the paper: two of six); clusters are the transitive closure, computed by the
    near-duplicate job's own candidate buckets, verification and connected components; each
    keeps its smallest doc_id.
    """
    fps = samples.select("doc_key", F.lit("").alias("site"), F.col("n_words").alias("n_terms"), "supershingles",
                         F.lit(None).cast("array<long>").alias("simhash"), F.lit(None).cast("array<long>").alias("pieces"))
    cfg = NearDupConfig(algorithm="b", b_threshold=b, wrap=True, cc_checkpoint_every=checkpoint_every)
    pairs = near_duplicate_pairs(fps, cfg, counts)
    clusters = connected_components(pairs.select("a", "b"), checkpoint_every=cfg.cc_checkpoint_every,
                                    max_rounds=cfg.cc_max_rounds)
    return cluster_representatives(samples, clusters), clusters, pairs


def shingle_triples(samples: DataFrame) -> DataFrame:
    """The paper's triples (i, s, d) as (doc_key, selector, shingle): m rows per document."""
    return samples.select("doc_key", F.posexplode("shingles").alias("selector", "shingle"))


def shingle_counts(triples: DataFrame) -> DataFrame:
    """(selector, shingle, n_documents): documents whose i-th shingle is s (one row each).

    The definition, row by row; ``popular_shingles`` computes its popular rows."""
    return triples.groupBy("selector", "shingle").agg(F.count(F.lit(1)).alias("n_documents"))


GROUP_ROWS = pa.schema([("bucket", pa.int32()), ("shingles", pa.binary())])
GROUP_ROWS_DDL = "bucket int, shingles binary"
COUNTS = pa.schema([("selector", pa.int32()), ("shingle", pa.int64()), ("n_documents", pa.int64())])
COUNTS_DDL = "selector int, shingle long, n_documents long"


def popular_shingles(samples: DataFrame, m: int, popular: int) -> DataFrame:
    """``shingle_counts`` of the samples' triples where n_documents >= ``popular``, plus one row
    per group bucket with selector -1 whose n_documents is the bucket's number of groups (so the
    caller can count every group without keeping them).

    The triples are not exploded into rows: each batch of samples sends every group bucket its
    shingles as one binary value, and each bucket is counted by one sort (``phrases/groups.py``).
    """

    def bucket_rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            lists = batch.column(0)
            split = group_buckets(lists.flatten().to_numpy(zero_copy_only=False),
                                  lists.offsets.to_numpy(zero_copy_only=False), m)
            nonempty = np.flatnonzero(np.diff(split.bounds))
            yield pa.RecordBatch.from_arrays(
                [pa.array(nonempty.astype(np.int32), pa.int32()),
                 pa.array([split.shingles[split.bounds[b]:split.bounds[b + 1]].tobytes() for b in nonempty.tolist()],
                          pa.binary())], schema=GROUP_ROWS)

    def count_bucket(table: pa.Table) -> pa.Table:
        bucket = int(table.column("bucket")[0].as_py())
        parts = [np.frombuffer(v.as_buffer(), dtype="<u8") for v in table.column("shingles") if v.is_valid]
        found = count_groups(np.concatenate(parts) if parts else np.empty(0, np.uint64), popular)
        n = found.shingles.shape[0]
        return pa.Table.from_arrays(
            [pa.array(np.append(np.full(n, bucket >> GROUP_BITS, np.int32), -1), pa.int32()),
             pa.array(np.append(found.shingles.view(np.int64), bucket), pa.int64()),
             pa.array(np.append(found.n_documents, found.n_groups), pa.int64())], schema=COUNTS)

    rows = samples.select("shingles").mapInArrow(bucket_rows, GROUP_ROWS_DDL)
    counted = rows.groupBy("bucket").applyInArrow(count_bucket, COUNTS_DDL)
    # a count is never null: typed so, the tables written from it keep count()'s schema
    return counted.select("selector", "shingle", F.coalesce("n_documents", F.lit(0)).alias("n_documents"))


def popular_counts_per_document(samples: DataFrame, triples: DataFrame, popular: DataFrame) -> DataFrame:
    """(doc_key, n_words, n_popular) for every sampled document, 0 when none is popular."""
    hits = (triples.join(popular.select("selector", "shingle"), on=["selector", "shingle"], how="left_semi")
            .groupBy("doc_key").agg(F.count(F.lit(1)).cast("int").alias("n_popular")))
    return (samples.select("doc_key", "n_words").join(hits, on="doc_key", how="left")
            .select("doc_key", "n_words", F.coalesce("n_popular", F.lit(0)).alias("n_popular")))


def popular_phrases(triples: DataFrame, popular: DataFrame) -> DataFrame:
    """(shingle, n_documents, n_samples, n_popular_selectors, example_key) per popular phrase.

    A phrase is listed when it is popular under at least one selector; n_documents counts the
    documents that sampled it under any selector, n_samples the triples (i, s, d) with s the
    phrase (the paper's "times sampled"), example_key is the smallest doc_key among them.
    """
    selectors_per_phrase = popular.groupBy("shingle").agg(F.count(F.lit(1)).cast("int").alias("n_popular_selectors"))
    return (triples.join(selectors_per_phrase.select("shingle"), on="shingle", how="left_semi")
            .groupBy("shingle")
            .agg(F.countDistinct("doc_key").alias("n_documents"), F.count(F.lit(1)).alias("n_samples"),
                 F.min("doc_key").alias("example_key"))
            .join(selectors_per_phrase, on="shingle"))


def recover_phrase_texts(phrases: DataFrame, docs: DataFrame, k: int) -> DataFrame:
    """(shingle, phrase): the k words of each phrase, read from its example document's text.

    Phrases are grouped by example document, so each document's text is tokenised once.
    """
    wanted = phrases.groupBy(F.col("example_key").alias("doc_key")).agg(F.collect_list("shingle").alias("wanted"))
    rows = wanted.join(docs.select("doc_key", "text"), on="doc_key")

    def batches(frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for frame in frames:
            fps, texts = [], []
            for text, want in zip(frame["text"], frame["wanted"], strict=True):
                want = [int(x) for x in want]
                fps += want
                texts += phrase_texts(text, k, want)
            yield pd.DataFrame({"shingle": pd.Series(fps, dtype="int64"), "phrase": pd.Series(texts, dtype=object)})

    return rows.select("wanted", "text").mapInPandas(batches, TEXT_SCHEMA)


def ranked(frame: DataFrame, *order: Any, name: str = "rank") -> DataFrame:
    """``frame`` with a 1-based ``name`` column in the given total order (distributed sort and
    zipWithIndex: no single-partition window)."""
    spark = frame.sparkSession
    ordered = frame.orderBy(*order)
    schema = ordered.schema.add(name, "long")
    rdd = ordered.rdd.zipWithIndex().map(lambda pair: (*pair[0], pair[1] + 1))
    out = spark.createDataFrame(rdd, schema)
    return out.select(name, *frame.columns)
