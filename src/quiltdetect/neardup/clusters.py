"""Clusters: connected components of the near-duplicate relation, on Spark (definitions §2).

Large-star / small-star (Kiveris et al., "Connected Components in MapReduce and Beyond",
SoCC 2014): edges are kept as (v, u) with v > u; large-star links every node's larger
neighbours to its smallest neighbour, small-star links a node and its smaller neighbours to
the smallest of them. Alternating them converges to one star per component whose centre is
the component's smallest doc_key, in O(log^2 n) rounds; every round is a few shuffles of the
edge table, nothing is collected. The lineage is cut every few rounds by a local checkpoint.
Because doc_key is monotone in doc_id, the centre is also the smallest doc_id: the cluster_id.

A graph of at most ``ONE_TASK_EDGES`` edges (most runs': near-duplicates are a few percent of
a crawl) is solved in one task instead, in numpy (``kernel.components.components_of``): the
rounds cost a few Spark jobs each, more than such a graph costs one Python worker.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.common.caching import cut, keep
from quiltdetect.kernel.components import components_of

log = logging.getLogger(__name__)

# Up to this many edges a graph's components are found in one task (16 bytes an edge there).
ONE_TASK_EDGES = 4_000_000


def _both_ways(edges: DataFrame) -> DataFrame:
    return edges.select("v", "u").unionByName(edges.select(F.col("u").alias("v"), F.col("v").alias("u")))


def large_star(edges: DataFrame) -> DataFrame:
    """For every node u: each neighbour v > u is linked to m(u), u's smallest neighbour or u."""
    both = _both_ways(edges)
    smallest = both.groupBy("v").agg(F.min("u").alias("m")).select(
        F.col("v").alias("node"), F.least("node", "m").alias("m"))
    return (both.join(smallest, both.v == smallest.node).where(F.col("u") > F.col("v"))
            .select(F.col("u").alias("v"), F.col("m").alias("u")).distinct())


def small_star(edges: DataFrame) -> DataFrame:
    """For every node v: v and its smaller neighbours are linked to the smallest of them."""
    smallest = edges.groupBy("v").agg(F.min("u").alias("m"))
    linked = edges.join(smallest, on="v")
    return (linked.where(F.col("u") != F.col("m")).select(F.col("u").alias("v"), F.col("m").alias("u"))
            .unionByName(smallest.select("v", F.col("m").alias("u"))).distinct())


def is_star_forest(edges: DataFrame) -> bool:
    """True when every component is a star around its smallest node: each v has one edge, and
    no centre u is also a leaf. Then large-star and small-star change nothing (converged)."""
    roles = (edges.select(F.col("v").alias("node"), F.lit(1).alias("leaf_edges"), F.lit(0).alias("centre"))
             .unionByName(edges.select(F.col("u").alias("node"), F.lit(0).alias("leaf_edges"), F.lit(1).alias("centre"))))
    bad = (roles.groupBy("node").agg(F.sum("leaf_edges").alias("leaf_edges"), F.max("centre").alias("centre"))
           .where((F.col("leaf_edges") > 1) | ((F.col("leaf_edges") == 1) & (F.col("centre") == 1))))
    return bad.isEmpty()


def connected_components(pairs: DataFrame, *, checkpoint_every: int = 1, max_rounds: int = 100,
                         one_task_edges: int = ONE_TASK_EDGES) -> DataFrame:
    """(doc_key, cluster_key) for every node of the undirected graph ``pairs`` (columns a, b).

    cluster_key = the smallest doc_key of the node's component; isolated nodes do not appear.
    Up to ``one_task_edges`` distinct edges, in one task (``components_of``); above, by rounds
    of large-star and small-star, after checking whether the graph is a star forest already
    (pairs, groups of copies: most near-duplicate graphs).
    """
    edges = (pairs.where(F.col("a") != F.col("b"))
             .select(F.greatest("a", "b").alias("v"), F.least("a", "b").alias("u")).distinct())
    edges = cut(edges)
    if edges.count() <= one_task_edges:
        return edges.repartition(1).mapInArrow(_components_batches, "doc_key long, cluster_key long")
    rounds = 0
    while not is_star_forest(edges):
        rounds += 1
        if rounds > max_rounds:
            raise RuntimeError(f"connected components did not converge in {max_rounds} rounds")
        new = small_star(large_star(edges))
        new = cut(new) if rounds % checkpoint_every == 0 else keep(new)
        edges.unpersist()
        edges = new
    log.info("connected components: a star forest after %d rounds", rounds)
    # a star per component: every non-centre node v has exactly the edge (v, centre)
    members = edges.select(F.col("v").alias("doc_key"), F.col("u").alias("cluster_key"))
    centres = edges.select(F.col("u").alias("doc_key"), F.col("u").alias("cluster_key")).distinct()
    return members.unionByName(centres)


def _components_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The one task's rows: every edge of the graph in, (doc_key, cluster_key) of every node out."""
    received = [b for b in batches if b.num_rows]
    if not received:
        return
    edges = pa.Table.from_batches(received)
    nodes, centres = components_of(edges.column("v").to_numpy(), edges.column("u").to_numpy())
    yield pa.RecordBatch.from_arrays([pa.array(nodes), pa.array(centres)], names=["doc_key", "cluster_key"])
