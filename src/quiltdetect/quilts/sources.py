"""Candidate triples, greedy source cover per target, and the quilts (figure 5, stages 6-14)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pyspark.sql import Column, DataFrame
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


def keep_contributing(covers: DataFrame, fractions: DataFrame, phi: float) -> DataFrame:
    """The covers without sources that covered fewer than ``phi * |pgrams(d)|`` grams when picked.

    "Contribute" is the grams a source newly covered at its pick (``covered``), the share of
    d it accounts for in the cover; ``shared`` would count a gram once per source holding it.
    Greedy gains never increase, so the kept sources are a prefix of the pick order.
    """
    if phi <= 0:
        return covers
    need = fractions.select(F.col("doc_key").alias("target"), (F.lit(phi) * F.col("n_patch_grams")).alias("need"))
    return covers.join(need, on="target").where(F.col("covered") >= F.col("need")).drop("need")


def normalised_link(url: Column) -> Column:
    """A URL compared for attribution: fragment and trailing slashes stripped."""
    return F.regexp_replace(F.regexp_replace(url, "#.*$", ""), "/+$", "")


def mark_attributed(covers: DataFrame, docs: DataFrame) -> DataFrame:
    """``covers`` plus ``attributed``: the target has an anchor whose target is the source's URL."""
    targets = covers.select("target").distinct()
    links = (
        docs.join(targets, docs.doc_key == targets.target, "left_semi")
        .select(F.col("doc_key").alias("target"), F.explode("anchors").alias("a"))
        .select("target", normalised_link(F.col("a.href")).alias("link"))
        .where(F.col("link") != "")
        .distinct()
    )
    urls = docs.select(F.col("doc_key").alias("source"), normalised_link(F.col("url")).alias("link"))
    linked = (
        covers.select("target", "source")
        .join(urls, on="source")
        .join(links, on=["target", "link"], how="left_semi")
        .select("target", "source", F.lit(True).alias("attributed"))
    )
    return covers.join(linked, on=["target", "source"], how="left").fillna(False, subset=["attributed"])


def cover_sizes(covers: DataFrame) -> DataFrame:
    """(doc_key, n_sources, n_pairs) per covered target."""
    return covers.groupBy(F.col("target").alias("doc_key")).agg(
        F.count(F.lit(1)).alias("n_sources"), F.first("n_pairs").alias("n_pairs")
    )


def assemble_quilts(
    fractions: DataFrame, covers: DataFrame, docs: DataFrame, c: int, *, exclude_attributed: bool = False
) -> DataFrame:
    """The quilts table: SPEC's columns, sources in pick order, ids as strings again.

    Each source says whether the quilt links to it (``attributed``); the quilt carries
    ``n_attributed_sources`` and ``attributed`` (at least one), and ``exclude_attributed``
    drops attributed quilts.
    """
    sizes = cover_sizes(covers).where(F.col("n_sources") >= c).select("doc_key")
    names = docs.select("doc_key", "doc_id", "url")
    kept = covers.join(sizes, covers.target == sizes.doc_key, "left_semi")
    picked = (
        mark_attributed(kept, docs)
        .join(names.withColumnRenamed("doc_key", "source"), on="source")
        .groupBy("target")
        .agg(
            F.sort_array(
                F.collect_list(F.struct("rank", "doc_id", "url", F.col("covered").cast("int").alias("covered"),
                                        F.col("shared").cast("int").alias("shared"), "attributed"))
            ).alias("picks"),
            F.sum(F.col("attributed").cast("int")).alias("n_attributed_sources"),
        )
    )
    if exclude_attributed:
        picked = picked.where(F.col("n_attributed_sources") == 0)
    sources = F.transform(
        "picks",
        lambda p: F.struct(p["doc_id"].alias("doc_id"), p["url"].alias("url"),
                           p["covered"].alias("covered"), p["shared"].alias("shared"),
                           p["attributed"].alias("attributed")),
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
            (F.col("n_attributed_sources") > 0).alias("attributed"),
            F.col("n_attributed_sources").cast("int").alias("n_attributed_sources"),
        )
    )


