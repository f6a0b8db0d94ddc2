"""The near-duplicate job: document table -> fingerprints -> pairs -> clusters (definitions §2)."""

from __future__ import annotations

import logging
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.common.folder import OutputFolder
from quiltdetect.ingest.table import DOCS_WRITE_OPTIONS
from quiltdetect.lifecycle import Job, JobResult, JobRun
from quiltdetect.neardup.collapse import near_duplicate_clusters, representatives
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.neardup.pairs import pair_columns

log = logging.getLogger(__name__)


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
        pairs, clusters = near_duplicate_clusters(run, docs, self.cfg)
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
