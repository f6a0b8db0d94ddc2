"""Candidate triples, greedy source cover per target, and the quilts (figure 5, stages 6-14)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.kernel.cover import greedy_cover

COVER_SCHEMA = "target long, rank int, source long, covered long, shared long, n_pairs long"


def candidate_triples(patch_doc_grams: DataFrame, patchy: DataFrame, *, foreign: bool) -> DataFrame:
    """(target, gram, source) for patchy targets only: the pairs C of every patchy document.

    A self-join of the patch-gram rows on gram; each patch gram has at most m documents, so
    a gram contributes at most m*(m-1) triples. With ``foreign`` the source's server differs.
    """
    targets = patch_doc_grams.join(patchy.select("doc_key"), on="doc_key", how="left_semi").select(
        F.col("doc_key").alias("target"), "gram", F.col("server").alias("target_server")
    )
    sources = patch_doc_grams.select(F.col("doc_key").alias("source"), "gram", F.col("server").alias("source_server"))
    triples = targets.join(sources, on="gram").where(F.col("source") != F.col("target"))
    if foreign:
        triples = triples.where(F.col("source_server") != F.col("target_server"))
    return triples.select("target", "gram", "source")


def cover_group(pairs: pd.DataFrame) -> pd.DataFrame:
    """The greedy cover of one target's pairs, one row per picked source (a grouped-map UDF)."""
    cover = greedy_cover(pairs["gram"].to_numpy(np.int64), pairs["source"].to_numpy(np.int64))
    n = len(cover)
    return pd.DataFrame(
        {
            "target": np.full(n, pairs["target"].iat[0], dtype=np.int64),
            "rank": np.arange(1, n + 1, dtype=np.int32),
            "source": cover.sources,
            "covered": cover.covered,
            "shared": cover.shared,
            "n_pairs": np.full(n, len(pairs), dtype=np.int64),
        }
    )


def cover_sources(triples: DataFrame) -> DataFrame:
    """Greedy covers of all patchy targets, computed per target in a grouped pandas UDF."""
    return triples.groupBy("target").applyInPandas(cover_group, schema=COVER_SCHEMA)


def cover_sizes(covers: DataFrame) -> DataFrame:
    """(doc_key, n_sources, n_pairs) per covered target."""
    return covers.groupBy(F.col("target").alias("doc_key")).agg(
        F.count(F.lit(1)).alias("n_sources"), F.first("n_pairs").alias("n_pairs")
    )


def assemble_quilts(fractions: DataFrame, covers: DataFrame, docs: DataFrame, c: int) -> DataFrame:
    """The quilts table: SPEC's columns, sources in pick order, ids as strings again."""
    sizes = cover_sizes(covers).where(F.col("n_sources") >= c).select("doc_key")
    names = docs.select("doc_key", "doc_id", "url")
    picked = (
        covers.join(sizes, covers.target == sizes.doc_key, "left_semi")
        .join(names.withColumnRenamed("doc_key", "source"), on="source")
        .groupBy("target")
        .agg(
            F.sort_array(
                F.collect_list(F.struct("rank", "doc_id", "url", F.col("covered").cast("int").alias("covered"),
                                        F.col("shared").cast("int").alias("shared")))
            ).alias("picks")
        )
    )
    sources = F.transform(
        "picks",
        lambda p: F.struct(p["doc_id"].alias("doc_id"), p["url"].alias("url"),
                           p["covered"].alias("covered"), p["shared"].alias("shared")),
    )
    return (
        picked.join(fractions, picked.target == fractions.doc_key)
        .join(names, on="doc_key")
        .select(
            "doc_id",
            "url",
            F.col("n_grams").cast("int").alias("n_grams"),
            F.col("n_patch_grams").cast("int").alias("n_patch_grams"),
            F.col("patchfrac").cast("double").alias("patchfrac"),
            sources.alias("sources"),
        )
    )


