"""Near-duplicate clusters of a document table and one representative per cluster
(definitions §2): the neardup job's stages, and the pre-processing that the quilt job
(``--collapse-near-duplicates``) and the phrases job (§3.3) share with it. "Kept" is the keep
rule's word (``neardup/keep.py``); here a cluster has a representative."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.common.caching import SPILL, TEXT_CACHE, keep
from quiltdetect.lifecycle import JobRun
from quiltdetect.neardup.clusters import connected_components
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.neardup.pairs import fingerprints, near_duplicate_pairs


def near_duplicate_clusters(run: JobRun, docs: DataFrame, cfg: NearDupConfig) -> tuple[DataFrame, DataFrame]:
    """(pairs on doc_keys, clusters as (doc_key, cluster_key)) of a document table; both persisted."""
    fps = fingerprint_stage(run, docs, cfg)
    pairs, clusters = pair_and_cluster_stages(run, fps, cfg)
    fps.unpersist()
    return pairs, clusters


def fingerprint_stage(run: JobRun, docs: DataFrame, cfg: NearDupConfig) -> DataFrame:
    """Every page's fingerprints (``pairs.fingerprints``), kept on disk only, like the texts
    (common/caching.py: TEXT_CACHE): kept in memory, a million pages' batches fill the shipped
    heap (docs/performance.md, "Memory and defaults at a million pages"). The neardup job keeps
    them as its state instead (``chain.fingerprints_stage``)."""
    what = (f"terms, {cfg.k}-shingles, {cfg.lsh_bands} bands of {cfg.lsh_rows} min-hashes" if cfg.algorithm == "lsh"
            else f"terms, {cfg.k}-shingles, supershingles, simhash")
    with run.metrics.stage(run.spark, "fingerprints", what) as counts:
        fps = keep(fingerprints(docs, cfg), TEXT_CACHE)
        row = fps.agg(F.count(F.lit(1)), F.sum((F.col("n_terms") == 0).cast("long")), F.sum("n_terms")).first()
        counts["documents"] = int(row[0])
        counts["without_terms"] = int(row[1] or 0)
        counts["terms"] = int(row[2] or 0)
    return fps


def pair_and_cluster_stages(run: JobRun, fps: DataFrame, cfg: NearDupConfig) -> tuple[DataFrame, DataFrame]:
    """(pairs on doc_keys, clusters as (doc_key, cluster_key)) from the fingerprints; both
    persisted."""
    spark, metrics = run.spark, run.metrics
    with metrics.stage(spark, "pairs", f"{cfg.algorithm}: candidates from buckets, verified exactly") as counts:
        pairs = near_duplicate_pairs(fps, cfg, counts)
    with metrics.stage(spark, "clusters", "connected components (one task up to 4 M edges, else large-star / small-star)") as counts:
        clusters = keep(connected_components(pairs.select("a", "b"), checkpoint_every=cfg.cc_checkpoint_every,
                                             max_rounds=cfg.cc_max_rounds), SPILL)
        row = clusters.agg(F.count(F.lit(1)), F.countDistinct("cluster_key")).first()
        counts["clustered_documents"] = int(row[0])
        counts["clusters"] = int(row[1])
    return pairs, clusters


def cluster_representatives(docs: DataFrame, clusters: DataFrame) -> DataFrame:
    """The documents minus every cluster member that is not its cluster's smallest doc_id: one
    **representative** per cluster, the pre-processing of Fetterly 2005 (the quilt job's
    ``--collapse-near-duplicates``, the phrases job). Not the neardup job's **kept** pages
    (``neardup/keep.py``: crawl order, a page dropped only for a kept near-duplicate of it)."""
    dropped = clusters.where(F.col("doc_key") != F.col("cluster_key")).select("doc_key")
    return docs.join(dropped, on="doc_key", how="left_anti")


def collapse_near_duplicates(run: JobRun, docs: DataFrame, cfg: NearDupConfig | None = None) -> DataFrame:
    """The document table with one representative (the smallest doc_id) per near-duplicate cluster.

    Fetterly 2005's pre-processing before phrase-level analysis; default settings unless ``cfg``.
    """
    cfg = cfg or NearDupConfig()
    pairs, clusters = near_duplicate_clusters(run, docs, cfg)
    spark, metrics = run.spark, run.metrics
    with metrics.stage(spark, "collapse", "keep one document per near-duplicate cluster") as counts:
        kept = keep(cluster_representatives(docs, clusters), SPILL)
        counts["documents_kept"] = kept.count()
        counts["documents_dropped"] = int(clusters.where(F.col("doc_key") != F.col("cluster_key")).count())
    pairs.unpersist()
    clusters.unpersist()
    return kept
