"""Clusters: connected components of the near-duplicate relation, on Spark (SPEC §2).

Large-star / small-star (Kiveris et al., "Connected Components in MapReduce and Beyond",
SoCC 2014): edges are kept as (v, u) with v > u; large-star links every node's larger
neighbours to its smallest neighbour, small-star links a node and its smaller neighbours to
the smallest of them. Alternating them converges to one star per component whose centre is
the component's smallest doc_key, in O(log^2 n) rounds; every round is a few shuffles of the
edge table, nothing is collected. The lineage is cut every few rounds by a local checkpoint.
Because doc_key is monotone in doc_id, the centre is also the smallest doc_id: the cluster_id.
"""

from __future__ import annotations

import logging

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

log = logging.getLogger(__name__)


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


def connected_components(pairs: DataFrame, *, checkpoint_every: int = 4, max_rounds: int = 100) -> DataFrame:
    """(doc_key, cluster_key) for every node of the undirected graph ``pairs`` (columns a, b).

    cluster_key = the smallest doc_key of the node's component; isolated nodes do not appear.
    """
    edges = (pairs.where(F.col("a") != F.col("b"))
             .select(F.greatest("a", "b").alias("v"), F.least("a", "b").alias("u")).distinct())
    edges = edges.localCheckpoint(eager=True)
    n_edges = edges.count()
    for round_no in range(1, max_rounds + 1):
        new = small_star(large_star(edges))
        if round_no % checkpoint_every == 0:
            new = new.localCheckpoint(eager=True)
        else:
            new = new.persist()
        n_new = new.count()
        # converged when the edge set is unchanged: same size and no edge of new missing in old
        if n_new == n_edges and new.join(edges, on=["v", "u"], how="left_anti").isEmpty():
            log.info("connected components converged after %d rounds", round_no)
            edges = new
            break
        edges.unpersist()
        edges, n_edges = new, n_new
    else:
        raise RuntimeError(f"connected components did not converge in {max_rounds} rounds")
    # a star per component: every non-centre node v has exactly the edge (v, centre)
    members = edges.select(F.col("v").alias("doc_key"), F.col("u").alias("cluster_key"))
    centres = edges.select(F.col("u").alias("doc_key"), F.col("u").alias("cluster_key")).distinct()
    # min() is a no-op at a true fixed point; it guards the output's one-row-per-node contract
    return members.unionByName(centres).groupBy("doc_key").agg(F.min("cluster_key").alias("cluster_key"))
