"""The near-duplicate job: document table -> fingerprints -> pairs -> clusters (definitions §2)."""

from __future__ import annotations

import logging
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from quiltdetect.common.caching import keep
from quiltdetect.common.folder import OutputFolder
from quiltdetect.common.metrics import RunMetrics
from quiltdetect.ingest.read import TEXT_CACHE
from quiltdetect.ingest.table import DOCS_WRITE_OPTIONS, SPILL
from quiltdetect.lifecycle import Job, JobResult, JobRun
from quiltdetect.neardup.clusters import connected_components
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.neardup.pairs import fingerprints, near_duplicate_pairs, pair_columns

log = logging.getLogger(__name__)


def near_duplicate_clusters(spark: SparkSession, docs: DataFrame, cfg: NearDupConfig,
                            metrics: RunMetrics) -> tuple[DataFrame, DataFrame]:
    """(pairs on doc_keys, clusters as (doc_key, cluster_key)) of a document table; both persisted."""
    what = (f"terms, {cfg.k}-shingles, {cfg.lsh_bands} bands of {cfg.lsh_rows} min-hashes" if cfg.algorithm == "lsh"
            else f"terms, {cfg.k}-shingles, supershingles, simhash")
    with metrics.stage(spark, "fingerprints", what) as counts:
        # On disk only, like the texts (ingest/read.py: TEXT_CACHE): every page's shingle set and
        # band keys, ~5 KB a page. Kept in memory (MEMORY_AND_DISK), the cached batches of
        # 1,000,000 pages filled the 4 GB heap: OutOfMemoryError while caching them.
        fps = keep(fingerprints(docs, cfg), TEXT_CACHE)
        row = fps.agg(F.count(F.lit(1)), F.sum((F.col("n_terms") == 0).cast("long")), F.sum("n_terms")).first()
        counts["documents"] = int(row[0])
        counts["without_terms"] = int(row[1] or 0)
        counts["terms"] = int(row[2] or 0)
    with metrics.stage(spark, "pairs", f"{cfg.algorithm}: candidates from buckets, verified exactly") as counts:
        pairs = near_duplicate_pairs(fps, cfg, counts)
    with metrics.stage(spark, "clusters", "connected components (large-star / small-star)") as counts:
        clusters = keep(connected_components(pairs.select("a", "b"), checkpoint_every=cfg.cc_checkpoint_every,
                                             max_rounds=cfg.cc_max_rounds), SPILL)
        row = clusters.agg(F.count(F.lit(1)), F.countDistinct("cluster_key")).first()
        counts["clustered_documents"] = int(row[0])
        counts["clusters"] = int(row[1])
    fps.unpersist()
    return pairs, clusters


def representatives(docs: DataFrame, clusters: DataFrame) -> DataFrame:
    """The documents minus every cluster member that is not its cluster's smallest doc_id."""
    dropped = clusters.where(F.col("doc_key") != F.col("cluster_key")).select("doc_key")
    return docs.join(dropped, on="doc_key", how="left_anti")


def collapse_near_duplicates(spark: SparkSession, docs: DataFrame, metrics: RunMetrics,
                             cfg: NearDupConfig | None = None) -> DataFrame:
    """The document table with one representative (the smallest doc_id) per near-duplicate cluster.

    Fetterly 2005's pre-processing before phrase-level analysis; default settings unless ``cfg``.
    """
    cfg = cfg or NearDupConfig()
    pairs, clusters = near_duplicate_clusters(spark, docs, cfg, metrics)
    with metrics.stage(spark, "collapse", "keep one document per near-duplicate cluster") as counts:
        kept = keep(representatives(docs, clusters), SPILL)
        counts["documents_kept"] = kept.count()
        counts["documents_dropped"] = int(clusters.where(F.col("doc_key") != F.col("cluster_key")).count())
    pairs.unpersist()
    clusters.unpersist()
    return kept


def write_outputs(run: JobRun, docs: DataFrame, pairs: DataFrame, clusters: DataFrame, algorithm: str) -> None:
    """pairs/ and clusters/ with doc_id strings (the edges of the dataflow use doc_keys)."""
    with run.metrics.stage(run.spark, "write", "pairs/ and clusters/ with doc_ids") as counts:
        ids = docs.select("doc_key", "doc_id")
        named = (pairs.join(ids.withColumnRenamed("doc_key", "a").withColumnRenamed("doc_id", "doc_id_a"), on="a")
                 .join(ids.withColumnRenamed("doc_key", "b").withColumnRenamed("doc_id", "doc_id_b"), on="b")
                 .select("doc_id_a", "doc_id_b", *pair_columns(algorithm)))
        _, counts["pairs"] = run.out.write_rows(named.orderBy("doc_id_a", "doc_id_b"), "pairs")
        sizes = clusters.groupBy("cluster_key").agg(F.count(F.lit(1)).cast("int").alias("cluster_size"))
        table = (clusters.join(sizes, on="cluster_key").join(ids, on="doc_key")
                 .join(ids.withColumnRenamed("doc_key", "cluster_key").withColumnRenamed("doc_id", "cluster_id"),
                       on="cluster_key")
                 .select("doc_id", "cluster_id", "cluster_size"))
        _, counts["clustered_documents"] = run.out.write_rows(table.orderBy("cluster_id", "doc_id"), "clusters")


def write_kept(run: JobRun, docs: DataFrame, clusters: DataFrame) -> None:
    """kept/ (the document table with one document per cluster, its smallest doc_id, and every
    unclustered document) and duplicate_of/ (doc_id, duplicate_of) for each document dropped:
    together they name every document once, so a corpus can be deduplicated or flagged."""
    with run.metrics.stage(run.spark, "kept", "one document per cluster; duplicate_of for the others") as counts:
        _, counts["documents_kept"] = run.out.write_rows(
            representatives(docs, clusters).select(*docs.columns).orderBy("doc_key"), "kept", DOCS_WRITE_OPTIONS)
        ids = docs.select("doc_key", "doc_id")
        dropped = (clusters.where(F.col("doc_key") != F.col("cluster_key")).join(ids, on="doc_key")
                   .join(ids.select(F.col("doc_key").alias("cluster_key"), F.col("doc_id").alias("duplicate_of")),
                         on="cluster_key")
                   .select("doc_id", "duplicate_of"))
        _, counts["documents_dropped"] = run.out.write_rows(dropped.orderBy("doc_id"), "duplicate_of")


def top_clusters(out: OutputFolder, n: int) -> list[dict[str, Any]]:
    """The n largest clusters (then smallest cluster_id) with their size."""
    if n <= 0:
        return []
    clusters = out.read_table("clusters")
    rows = (clusters.groupBy("cluster_id").agg(F.first("cluster_size").alias("cluster_size"))
            .orderBy(F.desc("cluster_size"), F.asc("cluster_id")).limit(n).collect())
    return [r.asDict() for r in rows]


class NearDupJob(Job[NearDupConfig]):
    """``quiltdetect neardup``: near-duplicate pairs and clusters (Broder, Charikar, Henzinger 2006)."""

    name = state_name = "neardup"
    config_class = NearDupConfig
    tables = ("pairs", "clusters", "kept", "duplicate_of")

    def compute(self, run: JobRun) -> None:
        docs = run.docs()
        pairs, clusters = near_duplicate_clusters(run.spark, docs, self.cfg, run.metrics)
        write_outputs(run, docs, pairs, clusters, self.cfg.algorithm)
        write_kept(run, docs, clusters)
        pairs.unpersist()
        clusters.unpersist()

    def report(self, run: JobRun) -> dict[str, Any]:
        return {"top_clusters": top_clusters(run.out, self.cfg.top)}

    def headline(self, result: JobResult) -> str:
        cfg = self.cfg
        if cfg.algorithm == "lsh":
            return (f"neardup (algorithm=lsh, k={cfg.k}, resemblance>={cfg.resemblance_threshold} or containment>="
                    f"{cfg.containment_threshold}, {cfg.lsh_bands} bands x {cfg.lsh_rows} rows)")
        return (f"neardup (algorithm={cfg.algorithm}, k={cfg.k}, b>={cfg.b_threshold}, c>={cfg.c_threshold},"
                f" combined c>={cfg.combined_c_threshold})")

    def details(self, result: JobResult) -> list[str]:
        """The largest clusters."""
        top = result.report["top_clusters"]
        if not top:
            return ["no near-duplicate pairs found"] if self.cfg.top > 0 else []
        return [f"largest {len(top)} clusters (size, cluster_id = smallest doc_id):",
                *(f"{i:>3}. {c['cluster_size']:>6}  {c['cluster_id']}" for i, c in enumerate(top, 1))]
