"""Blind discovery (step 3b) and the labeled set built from a named corpus (step 3a) on Spark.

L := { o in C : duplicates(o) > threshold, o not a stop chunk }, where duplicates(o) counts
occurrences (a chunk repeated inside one page counts each time, as in the chunk hash vector).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

LABELED_COLUMNS = ("kind", "sha1", "occurrences", "n_docs", "example_key", "example_pos")


def chunk_frequency(chunks: DataFrame) -> DataFrame:
    """Per distinct chunk: occurrences, documents holding it, and its first occurrence.

    The example is the occurrence in the smallest doc_key (= smallest doc_id), first position.
    """
    per_doc = chunks.groupBy("sha1", "doc_key").agg(F.count(F.lit(1)).alias("n"), F.min("pos").alias("pos"))
    return per_doc.groupBy("sha1").agg(
        F.sum("n").alias("occurrences"),
        F.count(F.lit(1)).alias("n_docs"),
        F.min(F.struct("doc_key", "pos")).alias("first"),
    ).select(
        F.lit("chunk").alias("kind"), "sha1", "occurrences", "n_docs",
        F.col("first.doc_key").alias("example_key"), F.col("first.pos").alias("example_pos"),
    )


def file_frequency(hashes: DataFrame) -> DataFrame:
    """Per distinct non-stop file hash: occurrences (= documents) and the first document."""
    return hashes.where(~F.col("file_is_stop")).groupBy(F.col("file_sha1").alias("sha1")).agg(
        F.count(F.lit(1)).alias("occurrences"), F.min("doc_key").alias("example_key")
    ).select(
        F.lit("file").alias("kind"), "sha1", "occurrences", F.col("occurrences").alias("n_docs"),
        "example_key", F.lit(None).cast("int").alias("example_pos"),
    )


def blind_labeled(chunk_freq: DataFrame, file_freq: DataFrame, chunk_threshold: int, file_threshold: int) -> DataFrame:
    """The labeled set of blind discovery: objects with more than the threshold's duplicates."""
    return chunk_freq.where(F.col("occurrences") > chunk_threshold).unionByName(
        file_freq.where(F.col("occurrences") > file_threshold)
    )


def frequency_distribution(freq: DataFrame) -> DataFrame:
    """(kind, occurrences, n_objects): how many distinct objects occur exactly that often (Figs. 1, 2, 11)."""
    return freq.groupBy("kind", "occurrences").agg(F.count(F.lit(1)).alias("n_objects"))


def corpus_labeled(hashes: DataFrame, chunks: DataFrame, min_chunk_chars: int) -> DataFrame:
    """Informed labeled set from a named corpus: its distinct files and its chunks of >= min chars."""
    chunk_part = chunk_frequency(chunks.where(F.col("length") >= min_chunk_chars))
    return chunk_part.unionByName(file_frequency(hashes))


def top_objects(freq: DataFrame, n: int) -> DataFrame:
    """The n most frequent objects (ties: smaller SHA-1 first), for the discovery report."""
    return freq.orderBy(F.desc("occurrences"), F.asc("sha1")).limit(n)
