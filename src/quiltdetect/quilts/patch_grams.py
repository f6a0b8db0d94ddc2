"""Grams per document, documents per gram, and patch grams (SPEC §1; figure 5, stages 1-3).

Only counts are built per gram before the ``m`` filter: no list of documents per gram ever
exists for a gram that occurs in more than m documents.
"""

from __future__ import annotations

import pandas as pd
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, IntegerType, LongType, StructField, StructType

from quiltdetect.kernel.grams import distinct_grams

GRAM_SET_TYPE = StructType(
    [
        StructField("grams", ArrayType(LongType(), containsNull=False)),
        StructField("counts", ArrayType(IntegerType(), containsNull=False)),
    ]
)


def gram_set_udf(k: int, with_counts: bool):
    """A pandas UDF: text -> struct(grams: distinct k-gram fingerprints, counts or null)."""

    @F.pandas_udf(GRAM_SET_TYPE)
    def gram_set(texts: pd.Series) -> pd.DataFrame:
        grams_col, counts_col = [], []
        for text in texts:
            grams, counts = distinct_grams(text, k)
            grams_col.append(grams)
            counts_col.append(counts if with_counts else None)
        return pd.DataFrame({"grams": grams_col, "counts": counts_col})

    return gram_set


def server_column(foreign: str) -> Column:
    """The server of each document under the foreign rule (see ``reference.server_of``)."""
    if foreign == "none":
        return F.lit(None).cast("string")
    if foreign == "host":
        return F.coalesce(F.col("host"), F.lit(""))
    if foreign == "domain":
        return F.coalesce(F.col("domain"), F.lit(""))
    if foreign == "ip":
        return F.coalesce(F.col("ip"), F.concat(F.lit("domain:"), F.coalesce(F.col("domain"), F.lit(""))))
    raise ValueError(f"unknown foreign rule {foreign!r}")


def doc_gram_sets(docs: DataFrame, k: int, *, with_counts: bool) -> DataFrame:
    """One row per document with grams: doc_key, n_grams, grams, counts (null unless with_counts).

    ``n_grams`` is |grams_k(d)|, or the number of gram occurrences with ``with_counts``.
    """
    gram_set = gram_set_udf(k, with_counts)
    sets = docs.select("doc_key", gram_set(F.col("text")).alias("g")).select("doc_key", "g.grams", "g.counts")
    n_grams = F.aggregate("counts", F.lit(0).cast("long"), lambda a, x: a + x) if with_counts else F.size("grams")
    return sets.where(F.size("grams") > 0).withColumn("n_grams", n_grams.cast("long"))


def with_server(gram_sets: DataFrame, docs: DataFrame, foreign: str) -> DataFrame:
    """The gram sets with each document's ``server`` under the foreign rule."""
    if foreign == "none":
        return gram_sets.withColumn("server", F.lit(None).cast("string"))
    servers = docs.select("doc_key", server_column(foreign).alias("server"))
    return gram_sets.join(servers, on="doc_key")


def doc_grams(gram_sets: DataFrame, *, with_counts: bool) -> DataFrame:
    """(doc_key, server, gram[, count]) rows: the sets exploded, one row per distinct gram."""
    if with_counts:
        exploded = gram_sets.select(
            "doc_key", "server", F.explode(F.arrays_zip("grams", "counts")).alias("z")
        )
        return exploded.select("doc_key", "server", F.col("z.grams").alias("gram"), F.col("z.counts").alias("count"))
    return gram_sets.select("doc_key", "server", F.explode("grams").alias("gram"))


def document_frequency(grams: DataFrame) -> DataFrame:
    """(gram, df): the number of documents containing each gram. Counts only, no lists."""
    return grams.groupBy("gram").agg(F.count(F.lit(1)).alias("df"))


def patch_gram_table(df_table: DataFrame, m: int) -> DataFrame:
    """(gram, df) of the patch grams: 1 < df <= m."""
    return df_table.where((F.col("df") > 1) & (F.col("df") <= m))


def doc_patch_grams(grams: DataFrame, patch: DataFrame) -> DataFrame:
    """The rows of ``grams`` whose gram is a patch gram (a semi-join on gram)."""
    return grams.join(patch.select("gram"), on="gram", how="left_semi")
