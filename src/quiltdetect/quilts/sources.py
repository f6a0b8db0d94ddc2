"""From greedy covers to quilts: contributing sources, attribution, cover sizes, the quilts table
(figure 5, stages 10-14; the covers themselves come from ``cover.cover_sources``)."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F


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
    """The quilts table: the columns of definitions §1, sources in pick order, ids as strings again.

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


