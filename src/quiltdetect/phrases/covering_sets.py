"""Covering sets for a sample of documents (§3.4, on Spark).

The sample's triples are joined with everyone's on (selector, shingle): each match is a donor
holding one of the target's shingles as its own i-th shingle. Each target's matches go to a
grouped pandas UDF, which reduces them per donor to the popular selectors met and the number
of shingles shared in total and runs the greedy kernel.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from quiltdetect.common.caching import SPILL, keep
from quiltdetect.common.foreign import ForeignRule
from quiltdetect.phrases.config import PhrasesConfig
from quiltdetect.phrases.covering import greedy_covering_set, sample_priority
from quiltdetect.phrases.monsters import ordered_mean

COVER_SCHEMA = "target long, rank int, donor long, covered int, shared int, foreign boolean"
COVER_COLUMNS = {"target": "int64", "rank": "int32", "donor": "int64", "covered": "int32", "shared": "int32",
                 "foreign": "object"}


def servers(docs: DataFrame, foreign: ForeignRule) -> DataFrame:
    """(doc_key, host, server): the host and the server under the foreign rule (null when it is off)."""
    return docs.select("doc_key", F.coalesce("host", F.lit("")).alias("host"), foreign.server_column().alias("server"))


def priority(seed: int) -> Callable[[Column], Column]:
    """A pandas UDF: doc_id -> its place in the seeded uniform sample (mmh3, signed 64-bit)."""

    @F.pandas_udf("long")
    def by_seed(ids: pd.Series) -> pd.Series:
        return pd.Series([sample_priority(i, seed) for i in ids], dtype="int64")

    return by_seed


def cover_sample(counts: DataFrame, docs: DataFrame, server: DataFrame, cfg: PhrasesConfig) -> DataFrame:
    """(doc_key) of the documents whose covering sets are computed.

    Eligible: at least ``cover_min_popular`` popular shingles (and on ``cover_servers`` when
    given: ``server`` is every document's server, ``servers``). ``uniform``: the
    ``cover_sample_size`` eligible documents with the smallest seeded mmh3 of their doc_id;
    ``per_count``: that many per popular count (Figs. 3-4); ``all``.
    """
    eligible = counts.where(F.col("n_popular") >= cfg.cover_min_popular).select("doc_key", "n_popular")
    if cfg.cover_servers:
        on = server.where(F.col("server").isin(cfg.cover_servers)).select("doc_key")
        eligible = eligible.join(on, on="doc_key", how="left_semi")
    if cfg.cover_sample == "all":
        return eligible.select("doc_key")
    keyed = eligible.join(docs.select("doc_key", "doc_id"), on="doc_key").withColumn(
        "priority", priority(cfg.cover_seed)(F.col("doc_id")))
    if cfg.cover_sample == "uniform":
        return keyed.orderBy("priority", "doc_key").limit(cfg.cover_sample_size).select("doc_key")
    place = F.row_number().over(Window.partitionBy("n_popular").orderBy("priority", "doc_key"))
    return keyed.withColumn("place", place).where(F.col("place") <= cfg.cover_sample_size).select("doc_key")


def donor_rows(sample: DataFrame, triples: DataFrame, popular: DataFrame, server: DataFrame,
               foreign: ForeignRule) -> DataFrame:
    """(target, donor, selector, popular, foreign): one row per shingle a donor shares with a
    sampled page (the donor's i-th shingle is the page's i-th), ``popular`` whether that
    shingle is popular, ``foreign`` whether the donor is on another server than the page
    (``server``, under the rule ``foreign``; null when the rule is off). ``cover_group``
    reduces them per donor.

    Not merged per (page, donor) in Spark: that merge (a ``collect_list``) runs in one task,
    and the cover's grouped UDF sees the same rows anyway.
    """
    marked = popular.select("selector", "shingle", F.lit(True).alias("popular"))
    # The sample's triples are materialised first: a sample of the default size is m rows per
    # sampled document, so Spark then sees that it is small and broadcasts it, and everyone's
    # triples meet it where they are read instead of being shuffled for a sort-merge join.
    targets = (triples.join(sample, on="doc_key", how="left_semi")
               .join(marked, on=["selector", "shingle"], how="left")
               .select(F.col("doc_key").alias("target"), "selector", "shingle",
                       F.coalesce("popular", F.lit(False)).alias("popular")))
    if foreign.on:
        targets = targets.join(server.select(F.col("doc_key").alias("target"), F.col("server").alias("target_server")),
                               on="target")
    targets = keep(targets, SPILL)
    targets.count()
    donors = triples.select(F.col("doc_key").alias("donor"), "selector", "shingle")
    rows = targets.join(donors, on=["selector", "shingle"]).where(F.col("donor") != F.col("target"))
    if not foreign.on:
        return rows.select("target", "donor", "selector", "popular", F.lit(None).cast("boolean").alias("foreign"))
    donor_server = server.select(F.col("doc_key").alias("donor"), F.col("server").alias("donor_server"))
    return rows.join(donor_server, on="donor").select(
        "target", "donor", "selector", "popular", (F.col("donor_server") != F.col("target_server")).alias("foreign"))


def cover_group(m: int) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The grouped-map function: one sampled page's ``donor_rows`` -> its covering set in pick
    order. Per donor: the popular selectors it meets and the shingles it shares in all; donors
    meeting no popular shingle are left out."""

    def cover(rows: pd.DataFrame) -> pd.DataFrame:
        donors, inverse = np.unique(rows["donor"].to_numpy(np.int64), return_inverse=True)
        shared = np.bincount(inverse, minlength=donors.shape[0]).astype(np.int64)
        hit = rows["popular"].to_numpy(dtype=bool)
        meets = np.zeros((donors.shape[0], m), dtype=bool)
        meets[inverse[hit], rows["selector"].to_numpy(np.int64)[hit]] = True
        foreign = None
        if not rows["foreign"].isna().all():
            foreign = np.zeros(donors.shape[0], dtype=bool)
            foreign[inverse] = rows["foreign"].to_numpy(dtype=bool)  # one value per donor
        useful = meets.any(axis=1)
        if not useful.any():  # no donor meets a popular shingle: no covering set rows
            return pd.DataFrame({c: pd.Series(dtype=t) for c, t in COVER_COLUMNS.items()})
        cs = greedy_covering_set(meets[useful], shared[useful], donors[useful],
                                 None if foreign is None else foreign[useful])
        n = len(cs)
        return pd.DataFrame({
            "target": np.full(n, rows["target"].iat[0], dtype=np.int64),
            "rank": np.arange(1, n + 1, dtype=np.int32),
            "donor": cs.donors,
            "covered": cs.covered.astype(np.int32),
            "shared": cs.shared.astype(np.int32),
            "foreign": pd.Series(cs.foreign if foreign is not None else [None] * n, dtype=object),
        })

    return cover


def covering_sets(rows: DataFrame, m: int) -> DataFrame:
    """(target, rank, donor, covered, shared, foreign): greedy covering sets, one group per target."""
    return rows.groupBy("target").applyInPandas(cover_group(m), schema=COVER_SCHEMA)


def assemble(sample: DataFrame, picks: DataFrame, counts: DataFrame, docs: DataFrame, server: DataFrame,
             foreign: ForeignRule) -> DataFrame:
    """The covering_sets table: per sampled document its donors in pick order, with urls.

    foreign_contribution counts the popular shingles covered by foreign donors (null when the
    foreign rule is off); uncovered the popular shingles no donor holds (0 unless popular < 2).
    """
    names = docs.select("doc_key", "doc_id", "url")
    donors = (picks.join(names.withColumnRenamed("doc_key", "donor"), on="donor")
              .groupBy(F.col("target").alias("doc_key"))
              .agg(F.sort_array(F.collect_list(F.struct("rank", "doc_id", "url", "covered", "shared", "foreign")))
                   .alias("picks"),
                   F.sum("covered").alias("n_covered"),
                   F.sum(F.when(F.col("foreign"), F.col("covered")).otherwise(0)).alias("foreign_covered")))
    donor_list = F.transform("picks", lambda p: F.struct(
        p["doc_id"].alias("doc_id"), p["url"].alias("url"), p["covered"].alias("covered"),
        p["shared"].alias("shared"), p["foreign"].alias("foreign")))
    no_donors = F.array().cast("array<struct<doc_id:string,url:string,covered:int,shared:int,foreign:boolean>>")
    contribution = F.coalesce("foreign_covered", F.lit(0)) if foreign.on else F.lit(None)
    return (sample.join(counts, on="doc_key").join(names, on="doc_key").join(server, on="doc_key")
            .join(donors, on="doc_key", how="left")
            .select("doc_id", "url", "host", "server", "n_words", "n_popular",
                    F.when(F.col("picks").isNull(), 0).otherwise(F.size("picks")).cast("int").alias("cover_size"),
                    contribution.cast("int").alias("foreign_contribution"),
                    (F.col("n_popular") - F.coalesce("n_covered", F.lit(0))).cast("int").alias("uncovered"),
                    F.coalesce(donor_list, no_donors).alias("donors")))


def scatter_table(cover_table: DataFrame) -> DataFrame:
    """Figs. 3-7 as a table: (n_popular, cover_size, n_documents, mean_foreign_share)."""
    share = F.col("foreign_contribution") / F.when(F.col("n_popular") > 0, F.col("n_popular"))
    return (cover_table.groupBy("n_popular", "cover_size")
            .agg(F.count(F.lit(1)).alias("n_documents"), ordered_mean(share).alias("mean_foreign_share"))
            .orderBy("n_popular", "cover_size"))
