"""kept/ and duplicate_of/ of a near-duplicate run: the keep rule of ``neardup/keep.py`` on Spark.

The rule runs once per cluster (a connected component of ``pairs/``: no pair crosses two) over
the cluster's pages and pairs, many clusters to one Arrow batch (``mapInArrow`` over rows
partitioned and sorted by cluster); pages in no pair are kept without
one. Each dropped page gets the kept page it duplicates and the similarity its pair was
verified with (resemblance and containment for lsh; B- and C-similarity for Henzinger's
algorithms).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa
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
    empty = [F.lit(None).cast(t).alias(n) for n, t in sims]
    nodes = nodes.select("cluster_key", F.lit(False).alias("is_edge"), F.col("doc_key").alias("x"),
                         F.lit(None).cast("long").alias("y"), "crawl_time", "rank",
                         F.coalesce("state", F.lit(DECIDE)).cast("byte").alias("state"), *empty)
    edges = pairs.join(clusters.select(F.col("doc_key").alias("a"), "cluster_key"), on="a").select(
        "cluster_key", F.lit(True).alias("is_edge"), F.col("a").alias("x"), F.col("b").alias("y"),
        F.lit(None).cast("long").alias("crawl_time"), F.lit(None).cast("long").alias("rank"),
        F.lit(None).cast("byte").alias("state"), *names)
    rows = nodes.unionByName(edges).repartition("cluster_key").sortWithinPartitions("cluster_key", "is_edge")
    schema = ", ".join(["doc_key long", "keeper long", *(f"{n} {t}" for n, t in sims)])
    return rows.mapInArrow(_decide_partition(names), schema)


def _decide_partition(names: Sequence[str]) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The ``mapInArrow`` function: a partition's rows, sorted by cluster (its nodes, then its
    edges) -> the dropped pages of each cluster. A cluster may span two batches: the rows of the
    last cluster of a batch wait for the next. (Not a grouped UDF per cluster: its
    fixed cost per call outweighs a cluster of one pair, as most are; docs/neardup.md, "Which pages are kept".)"""
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        carry: pa.Table | None = None
        for batch in batches:
            table = pa.Table.from_batches([batch])
            if carry is not None:
                table = pa.concat_tables([carry, table])
            if table.num_rows == 0:
                continue
            keys = table.column("cluster_key").to_numpy()
            last = int(np.searchsorted(keys, keys[-1]))
            carry = table.slice(last)
            if last:
                yield _decide_rows(table.slice(0, last), names)
        if carry is not None and carry.num_rows:
            yield _decide_rows(carry, names)
    return run


def _decide_rows(table: pa.Table, names: Sequence[str]) -> pa.RecordBatch:
    """The dropped pages of whole clusters (rows sorted by cluster, nodes before edges)."""
    table = table.combine_chunks()
    # nulls (an edge row's node columns, a node row's y) as 0: as floats, NO_DATE would lose its bits
    def col(name: str) -> np.ndarray:
        column = table.column(name)
        if column.null_count:
            column = column.fill_null(pa.scalar(0, column.type))
        return column.to_numpy(zero_copy_only=False)

    cluster, is_edge, x, y = col("cluster_key"), col("is_edge"), col("x"), col("y")
    crawl, rank, state = col("crawl_time"), col("rank"), col("state")
    starts = np.flatnonzero(np.r_[True, cluster[1:] != cluster[:-1]])
    ends = np.r_[starts[1:], cluster.shape[0]]
    dropped, keeper, edge = [], [], []
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        n = s + int(np.count_nonzero(~is_edge[s:e].astype(bool)))
        keys = x[s:n].astype(np.int64)
        by_key = np.argsort(keys, kind="stable")
        a = by_key[np.searchsorted(keys, x[n:e].astype(np.int64), sorter=by_key)]
        b = by_key[np.searchsorted(keys, y[n:e].astype(np.int64), sorter=by_key)]
        got = decide(crawl[s:n].astype(np.int64), rank[s:n].astype(np.int64), a, b, state[s:n].astype(np.int8))
        dropped.append(keys[got.dropped])
        keeper.append(keys[got.keeper])
        edge.append(got.edge + n)
    cat = lambda parts: np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)  # noqa: E731
    at = cat(edge)
    arrays = [pa.array(cat(dropped), pa.int64()), pa.array(cat(keeper), pa.int64())]
    arrays += [table.column(name).take(pa.array(at, pa.int64())).combine_chunks() for name in names]
    return pa.RecordBatch.from_arrays(arrays, names=["doc_key", "keeper", *names])


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
