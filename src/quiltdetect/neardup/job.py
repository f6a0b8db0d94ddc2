"""The near-duplicate job: document table -> fingerprints -> pairs -> clusters (definitions §2)."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.common.caching import release
from quiltdetect.common.folder import OutputFolder
from quiltdetect.lifecycle import Job, JobResult, JobRun
from quiltdetect.neardup.chain import (
    STORED_SETTINGS,
    clustered_pages,
    clusters_stage,
    fingerprints_stage,
    kept_stage,
    kept_state,
    pairs_stage,
    start_chain,
    write_pair_state,
)
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.neardup.pairs import in_order, pair_columns, small


def write_outputs(run: JobRun, docs: DataFrame, pairs: DataFrame, clusters: DataFrame,
                  algorithm: str) -> tuple[DataFrame, int]:
    """pairs/ and clusters/ with doc_id strings (the edges of the dataflow use doc_keys), and
    both on doc_keys as the run's state. Returns the pages of the clusters it read for their
    doc_ids, persisted, and how many (``clustered_pages``: the keep rule reads them too; the
    caller releases them). The pairs stage counted the pairs (``in_order`` sorts by it)."""
    with run.metrics.stage(run.spark, "write", "pairs/ and clusters/ with doc_ids") as counts:
        write_pair_state(run, pairs, clusters, algorithm)
        pages, n = clustered_pages(docs, clusters)  # every page of a pair
        ids = small(pages.select("doc_key", "doc_id"), n)
        named = (pairs.join(ids.withColumnRenamed("doc_key", "a").withColumnRenamed("doc_id", "doc_id_a"), on="a")
                 .join(ids.withColumnRenamed("doc_key", "b").withColumnRenamed("doc_id", "doc_id_b"), on="b")
                 .select("doc_id_a", "doc_id_b", *pair_columns(algorithm)))
        n_pairs = int(run.metrics.stages["pairs"]["pairs"])
        _, counts["pairs"] = run.out.write_rows(in_order(named, n_pairs, "doc_id_a", "doc_id_b"), "pairs")
        sizes = clusters.groupBy("cluster_key").agg(F.count(F.lit(1)).cast("int").alias("cluster_size"))
        table = (clusters.join(sizes, on="cluster_key").join(ids, on="doc_key")
                 .join(ids.withColumnRenamed("doc_key", "cluster_key").withColumnRenamed("doc_id", "cluster_id"),
                       on="cluster_key")
                 .select("doc_id", "cluster_id", "cluster_size"))
        _, counts["clustered_documents"] = run.out.write_rows(in_order(table, n, "cluster_id", "doc_id"), "clusters")
    return pages, n


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

    update_settings = STORED_SETTINGS
    update_settings_why = "the previous run's near-duplicate settings (its pairs were decided with them)"
    update_state_what = "near-duplicate"

    def update_state(self) -> tuple[str, ...]:
        return kept_state(self.cfg.algorithm)

    def compute(self, run: JobRun) -> None:
        """One pipeline for a fresh run and an update (``neardup/chain.py``): the chain's
        documents, fingerprints, pairs, clusters, the tables named by doc_id, and kept/."""
        cfg = self.cfg
        chain = start_chain(run)
        fps, rows = fingerprints_stage(run, chain, cfg)
        pairs, gone, chain = pairs_stage(run, fps, rows, chain, cfg)
        clusters = clusters_stage(run, pairs, gone, chain, cfg)
        clustered = write_outputs(run, chain.docs, pairs, clusters, cfg.algorithm)
        kept_stage(run, chain, pairs, clusters, cfg.algorithm, clustered)
        for frame in (pairs, gone, clusters, clustered[0]):
            release(frame)
        chain.release()

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
