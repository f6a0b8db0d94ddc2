"""The near-duplicate job: document table -> fingerprints -> pairs -> clusters (definitions §2)."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.common.caching import SPILL, cut, keep, release
from quiltdetect.common.folder import OutputFolder
from quiltdetect.common.layout import work_table
from quiltdetect.documents.table import DOCS_WRITE_OPTIONS
from quiltdetect.lifecycle import Job, JobResult, JobRun
from quiltdetect.neardup.collapse import fingerprint_stage, pair_and_cluster_stages
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.neardup.decisions import crawl_order, dropped_pages, duplicate_of_table, kept_table
from quiltdetect.neardup.increment import (
    CAPPED,
    DROPPED_PAGES,
    FINGERPRINTS,
    STORED_SETTINGS,
    PreviousNearDup,
    Union,
    clustered_pages,
    kept_state,
    new_fingerprints,
    previous_near_dup,
    small,
    store_bucket_rows,
    update_clusters,
    update_decisions,
    update_pairs,
    write_pair_state,
    write_state,
)
from quiltdetect.neardup.pairs import pair_columns
from quiltdetect.previous import doc_ranks, union_documents


def write_outputs(run: JobRun, docs: DataFrame, pairs: DataFrame, clusters: DataFrame, algorithm: str) -> None:
    """pairs/ and clusters/ with doc_id strings (the edges of the dataflow use doc_keys), and
    both on doc_keys as the run's state."""
    with run.metrics.stage(run.spark, "write", "pairs/ and clusters/ with doc_ids") as counts:
        write_pair_state(run, pairs, clusters, algorithm)
        pages, n = clustered_pages(docs, clusters)  # every page of a pair
        ids = small(pages.select("doc_key", "doc_id"), n)
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
        release(pages)


def write_kept(run: JobRun, docs: DataFrame, pairs: DataFrame, clusters: DataFrame, algorithm: str) -> None:
    """kept/ (the document table without the pages the keep rule drops) and duplicate_of/ (each
    dropped page, the kept page it duplicates and why): together they name every document once,
    so a corpus can be deduplicated or flagged (definitions §2, neardup/keep.py)."""
    with run.metrics.stage(run.spark, "kept", "pages in crawl order: dropped when a near-duplicate of a kept one") \
            as counts:
        pages, n = clustered_pages(docs, clusters)  # every page the rule may drop or keep for another
        dropped = keep(dropped_pages(pairs, clusters, crawl_order(small(pages, n)), algorithm), SPILL)
        _, counts["documents_kept"] = run.out.write_rows(kept_table(docs, dropped).orderBy("doc_key"), "kept",
                                                         DOCS_WRITE_OPTIONS)
        table = duplicate_of_table(small(pages, n), dropped, algorithm, F.lit(run.state.run_id))
        _, counts["documents_dropped"] = run.out.write_rows(table.orderBy("doc_id"), "duplicate_of")
        run.out.write_table(dropped.select("doc_key"), work_table(DROPPED_PAGES))
        dropped.unpersist()
        release(pages)


def update(run: JobRun, cfg: NearDupConfig, previous: PreviousNearDup) -> None:
    """An update (``--previous``): the union's pairs/ and clusters/ as a fresh run's, the new
    pages decided against every page kept so far (``neardup/increment.py``)."""
    docs, new, n_old = union_documents(run)
    union = Union(docs, cut(doc_ranks(docs), SPILL), n_old)
    fps, rows = new_fingerprints(run, new, previous, cfg)
    pairs, gone = update_pairs(run, fps, rows, previous, union, cfg)
    clusters = update_clusters(run, previous, union, pairs, gone, cfg)
    write_outputs(run, docs, pairs, clusters, cfg.algorithm)
    update_decisions(run, previous, union, new, pairs, clusters, cfg.algorithm)
    for frame in (pairs, gone, clusters, union.ranks):
        release(frame)


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
        cfg = self.cfg
        if run.previous is not None:
            update(run, cfg, previous_near_dup(run.previous))
            return
        docs = run.docs()
        fps = fingerprint_stage(run, docs, cfg, table=work_table(FINGERPRINTS))
        spark_buckets = int(run.spark.conf.get("spark.sql.shuffle.partitions"))
        pairs, clusters = pair_and_cluster_stages(run, fps, cfg,
                                                  capped=lambda over: run.out.write_table(over, work_table(CAPPED)),
                                                  stored=store_bucket_rows(run, spark_buckets))
        write_state(run, [[0, run.state.run_id]], spark_buckets)
        write_outputs(run, docs, pairs, clusters, cfg.algorithm)
        write_kept(run, docs, pairs, clusters, cfg.algorithm)
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
