"""Patch fraction per document and the patchy documents (figure 5, stages 4-5)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F


def patchfrac(gram_sets: DataFrame, patch_doc_grams: DataFrame, *, count_occurrences: bool) -> DataFrame:
    """(doc_key, n_grams, n_patch_grams, patchfrac) for every document with grams.

    Sets by default (SPEC); with ``count_occurrences`` numerator and denominator count
    occurrences, as the paper's figure 5 does.
    """
    n_patch = F.sum("count") if count_occurrences else F.count(F.lit(1))
    per_doc = patch_doc_grams.groupBy("doc_key").agg(n_patch.cast("long").alias("n_patch_grams"))
    return (
        gram_sets.select("doc_key", "n_grams")
        .join(per_doc, on="doc_key", how="left")
        .fillna(0, subset=["n_patch_grams"])
        .withColumn("patchfrac", F.col("n_patch_grams") / F.col("n_grams"))
    )


def patchy_docs(fractions: DataFrame, theta: float) -> DataFrame:
    """Documents whose patch fraction is at least theta and that have a patch gram."""
    return fractions.where((F.col("patchfrac") >= theta) & (F.col("n_patch_grams") > 0))
