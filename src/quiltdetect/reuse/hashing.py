"""Spark side of steps 0-2: recursion-error cleaning, neighborhoods and SHA-1 hashing per page.

Both are ``mapInPandas`` bodies over the plain functions of ``chunks`` and ``neighborhoods``.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from quiltdetect.reuse.chunks import chunk_texts, hash_document
from quiltdetect.reuse.neighborhoods import neighborhood_prefixes, recursion_error

HASH_SCHEMA = (
    "doc_key long, file_sha1 binary, file_is_stop boolean, chunks array<binary>, "
    "positions array<int>, lengths array<int>, n_stop int"
)
PATH_SCHEMA = "doc_key long, recursion_error string, prefixes array<string>"
CHUNK_ROW_COLUMNS = ("doc_key", "pos", "sha1", "length")


def _hash_batches(batches: Iterator[pd.DataFrame], stop: frozenset[bytes]) -> Iterator[pd.DataFrame]:
    for batch in batches:
        rows = [hash_document(text, stop) for text in batch["text"]]
        yield pd.DataFrame(
            {
                "doc_key": batch["doc_key"].to_numpy(np.int64),
                "file_sha1": [r.file_sha1 for r in rows],
                "file_is_stop": [r.file_sha1 in stop for r in rows],
                "chunks": [r.chunks for r in rows],
                "positions": [r.positions for r in rows],
                "lengths": [r.lengths for r in rows],
                "n_stop": np.asarray([r.n_stop for r in rows], dtype=np.int32),
            }
        )


def document_hashes(docs: DataFrame, stop: frozenset[bytes]) -> DataFrame:
    """Per document: H(f), whether f is a stop file, and its chunk hash vector minus stop chunks."""
    return docs.select("doc_key", "text").mapInPandas(lambda it: _hash_batches(it, stop), schema=HASH_SCHEMA)


def chunk_rows(hashes: DataFrame) -> DataFrame:
    """One row per (non-stop) chunk occurrence: doc_key, pos, sha1, length."""
    zipped = F.explode(F.arrays_zip(F.col("chunks").alias("sha1"), F.col("positions").alias("pos"),
                                    F.col("lengths").alias("length")))
    return hashes.select("doc_key", zipped.alias("c")).select(
        "doc_key", F.col("c.pos").alias("pos"), F.col("c.sha1").alias("sha1"), F.col("c.length").alias("length")
    )


def _path_batches(batches: Iterator[pd.DataFrame], max_repeats: int, max_depth: int) -> Iterator[pd.DataFrame]:
    for batch in batches:
        urls, hosts = batch["url"].tolist(), batch["host"].tolist()
        errors = [recursion_error(u, max_repeats, max_depth) for u in urls]
        yield pd.DataFrame(
            {
                "doc_key": batch["doc_key"].to_numpy(np.int64),
                "recursion_error": errors,
                "prefixes": [[] if e else neighborhood_prefixes(h, u) for u, h, e in zip(urls, hosts, errors, strict=True)],
            }
        )


def page_paths(docs: DataFrame, max_component_repeats: int, max_prefix_depth: int) -> DataFrame:
    """Per document: its recursion-error reason (or null) and its neighborhoods, deepest first."""
    return docs.select("doc_key", "url", "host").mapInPandas(
        lambda it: _path_batches(it, max_component_repeats, max_prefix_depth), schema=PATH_SCHEMA
    )


def _chunk_at(texts: pd.Series, positions: pd.Series) -> pd.Series:
    out = []
    for text, pos in zip(texts, positions, strict=True):
        chunks = chunk_texts(text)
        out.append(chunks[pos] if 0 <= pos < len(chunks) else None)
    return pd.Series(out, dtype=object)


chunk_at = F.pandas_udf(_chunk_at, StringType())
chunk_at.__doc__ = "The chunk text at a position of the document's chunk vector (pandas UDF)."
