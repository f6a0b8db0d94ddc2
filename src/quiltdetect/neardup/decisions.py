"""kept/ and duplicate_of/ of a near-duplicate run: the keep rule of ``neardup/keep.py`` on Spark.

The rule runs once per cluster (a connected component of ``pairs/``: no pair crosses two) in a
grouped pandas UDF that sees the cluster's pages and pairs; pages in no pair are kept without
one. Each dropped page gets the kept page it duplicates and the similarity its pair was
verified with (resemblance and containment for lsh; B- and C-similarity for Henzinger's
algorithms).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from quiltdetect.neardup.keep import DECIDE, NO_DATE, decide

# The similarity a duplicate_of/ row carries, per algorithm: the measure its pair passed.
SIMILARITY = {"lsh": (("resemblance", "double"), ("containment", "double"))}
HENZINGER_SIMILARITY = (("b_similarity", "int"), ("c_similarity", "int"))


def similarity_columns(algorithm: str) -> tuple[tuple[str, str], ...]:
    """(name, Spark type) of the verified similarity of this algorithm's pairs."""
    return SIMILARITY.get(algorithm, HENZINGER_SIMILARITY)


def crawl_time(warc_date: Column) -> Column:
    """Microseconds since the epoch of a WARC-Date (ISO 8601, UTC); NO_DATE when the page has
    none or it does not parse (a table without dates: every page, so doc_id alone orders them)."""
    return F.coalesce(F.unix_micros(warc_date.try_cast("timestamp")), F.lit(int(NO_DATE)).cast("long"))


def crawl_order(docs: DataFrame, ranks: DataFrame | None = None) -> DataFrame:
    """(doc_key, crawl_time, rank) of every document: the order of the keep rule. ``rank`` is the
    doc_id's rank over the whole table: the doc_key of a fresh run, ``ranks`` after an update
    (whose new documents are keyed after the old ones)."""
    order = docs.select("doc_key", crawl_time(F.col("warc_date")).alias("crawl_time"))
    if ranks is None:
        return order.withColumn("rank", F.col("doc_key"))
    return order.join(ranks, on="doc_key")


def dropped_pages(pairs: DataFrame, clusters: DataFrame, order: DataFrame, algorithm: str,
                  state: DataFrame | None = None) -> DataFrame:
    """(doc_key, keeper, similarity…) of every page the keep rule drops. ``pairs`` (a, b,
    similarity…) and ``clusters`` (doc_key, cluster_key) on doc_keys; ``state`` (doc_key, state):
    pages fixed by an earlier run (KEPT or DROPPED), the others decided here."""
    sims = similarity_columns(algorithm)
    names = [name for name, _ in sims]
    nodes = clusters.join(order, on="doc_key")
    if state is not None:
        nodes = nodes.join(state, on="doc_key", how="left")
    else:
        nodes = nodes.withColumn("state", F.lit(DECIDE))
    nodes = nodes.select("cluster_key", "doc_key", "crawl_time", "rank",
                         F.coalesce("state", F.lit(DECIDE)).cast("byte").alias("state"))
    # the edges' cluster under a name of its own: both sides derive from ``clusters``
    edges = pairs.join(clusters.select(F.col("doc_key").alias("a"), F.col("cluster_key").alias("edge_cluster")),
                       on="a").select("edge_cluster", "a", "b", *names)
    schema = ", ".join(["doc_key long", "keeper long", *(f"{n} {t}" for n, t in sims)])
    return nodes.groupBy("cluster_key").cogroup(edges.groupBy("edge_cluster")).applyInPandas(
        _decide_cluster(names), schema)


def _decide_cluster(names: Sequence[str]):
    """The grouped-UDF function: one cluster's nodes and edges -> its dropped pages."""
    def run(nodes: pd.DataFrame, edges: pd.DataFrame) -> pd.DataFrame:
        keys = nodes["doc_key"].to_numpy(dtype=np.int64)
        by_key = np.argsort(keys, kind="stable")
        index = lambda col: by_key[np.searchsorted(keys, edges[col].to_numpy(dtype=np.int64), sorter=by_key)]  # noqa: E731
        got = decide(nodes["crawl_time"].to_numpy(dtype=np.int64), nodes["rank"].to_numpy(dtype=np.int64),
                     index("a"), index("b"), nodes["state"].to_numpy(dtype=np.int8))
        out = {"doc_key": keys[got.dropped], "keeper": keys[got.keeper]}
        for name in names:
            out[name] = edges[name].to_numpy()[got.edge]
        return pd.DataFrame(out)
    return run


def kept_table(docs: DataFrame, dropped: DataFrame) -> DataFrame:
    """The document table without the dropped pages, in doc_key order."""
    return docs.join(dropped.select("doc_key"), on="doc_key", how="left_anti").select(*docs.columns)


def duplicate_of_table(docs: DataFrame, dropped: DataFrame, algorithm: str, kept_run: Column) -> DataFrame:
    """duplicate_of/: doc_id, duplicate_of (the kept page's doc_id), kept_url, kept_run (the run
    it was kept in: ``kept_run`` of its doc_key, column ``keeper``) and the pair's similarity."""
    ids = docs.select("doc_key", "doc_id")
    keepers = docs.select(F.col("doc_key").alias("keeper"), F.col("doc_id").alias("duplicate_of"),
                          F.col("url").alias("kept_url"))
    names = [name for name, _ in similarity_columns(algorithm)]
    return (dropped.join(ids, on="doc_key").join(keepers, on="keeper")
            .select("doc_id", "duplicate_of", "kept_url", kept_run.alias("kept_run"), *names))
