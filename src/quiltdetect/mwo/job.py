"""``mwo index`` and ``mwo join``: document table -> TDW matrix (Parquet) -> near-duplicate pairs.

Outputs under ``cfg.output``: docs/ (the document table), terms/ (term, df, term_id: the
global order), records/ (canonical records), postings/ (the weighted-prefix inverted index
that ``mwo query`` loads), index.json (what a query needs to know), and for the join
pairs/ (doc_id_a, doc_id_b, mwo). Plus config.yaml and metrics.json.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from quiltdetect import lifecycle
from quiltdetect.common import fs
from quiltdetect.common.metrics import RunMetrics
from quiltdetect.ingest.table import SPILL
from quiltdetect.lifecycle import JobRun
from quiltdetect.mwo.config import MwoConfig
from quiltdetect.mwo.join import positional_candidates, prefix_candidates, verified_pairs
from quiltdetect.mwo.tdw import canonical_records, global_order, prefix_postings, weighted_records

log = logging.getLogger(__name__)
INDEX_META = "index.json"


@dataclass
class MwoRun:
    """What a finished run leaves behind: where it wrote, its metrics and the top pairs."""

    output: str
    metrics: RunMetrics
    top_pairs: list[dict[str, Any]]


def build_tdw(job: JobRun, docs: DataFrame, threshold: float) -> tuple[DataFrame, DataFrame]:
    """Rendering and canonicalisation; writes terms/, records/, postings/. Returns (records, postings)."""
    spark, cfg, metrics, out = job.spark, job.cfg, job.metrics, job.cfg.output
    with metrics.stage(spark, "render", "tags, tokens, stop words, stems, field weights, normalise") as counts:
        records = weighted_records(docs, cfg.min_weight_ratio).persist(SPILL)
        row = records.agg(F.count(F.lit(1)), F.sum(F.size("terms"))).first()
        counts["records"] = int(row[0])
        counts["record_terms"] = int(row[1] or 0)
        counts["documents_without_terms"] = docs.count() - counts["records"]
    with metrics.stage(spark, "order", "document frequency per term, global order, write terms/") as counts:
        order = job.write(global_order(spark, records), "terms")
        counts["terms"] = order.count()
    with metrics.stage(spark, "canonicalise", "sort records by the global order, write records/") as counts:
        canon = job.write(canonical_records(records, order, docs).orderBy("doc_key"), "records")
        counts["records"] = canon.count()
        records.unpersist()
    with metrics.stage(spark, "postings", f"weighted prefixes at t >= {threshold}, write postings/") as counts:
        postings = job.write(prefix_postings(canon, threshold).orderBy("term_id", "doc_key"), "postings")
        counts["postings"] = postings.count()
    meta = {"index_threshold": threshold, "min_weight_ratio": cfg.min_weight_ratio,
            "records": metrics.stages["canonicalise"]["records"], "terms": metrics.stages["order"]["terms"]}
    fs.write_text(spark, fs.join(out, INDEX_META), json.dumps(meta, indent=2))
    return canon, postings


def self_join(job: JobRun, canon: DataFrame, postings: DataFrame) -> None:
    """All pairs with MWO >= t: prefix filter, positional filter, verification; writes pairs/."""
    spark, cfg, metrics = job.spark, job.cfg, job.metrics
    t = cfg.t
    with metrics.stage(spark, "prefix", f"pairs sharing a weighted-prefix term at t={t}") as counts:
        n = metrics.stages["canonicalise"]["records"]
        counts["all_pairs"] = n * (n - 1) // 2
        candidates = prefix_candidates(postings, t).persist(SPILL)
        counts["candidates"] = candidates.count()
    with metrics.stage(spark, "positional", "weight bound at the first shared term") as counts:
        survivors = positional_candidates(candidates, t).persist(SPILL)
        counts["candidates"] = survivors.count()
        candidates.unpersist()
    with metrics.stage(spark, "verify", f"exact MWO >= {t}, write pairs/") as counts:
        pairs = verified_pairs(survivors, canon, t)
        counts["pairs"] = job.write(pairs.orderBy("doc_id_a", "doc_id_b"), "pairs").count()
        survivors.unpersist()


def run(spark: SparkSession, cfg: MwoConfig, *, join: bool) -> MwoRun:
    """``mwo index`` (join=False) or ``mwo join`` (join=True); the join's output is also an index."""
    cfg.validate()
    job = lifecycle.start(spark, cfg, "mwo", extra_key={"join": join})
    if not job.complete_already:
        docs = job.docs()
        threshold = min(cfg.t, cfg.index_threshold) if join else cfg.index_threshold
        canon, postings = build_tdw(job, docs, threshold)
        if join:
            self_join(job, canon, postings)
        params = {"t": cfg.t, "min_weight_ratio": cfg.min_weight_ratio, "index_threshold": threshold}
        job.publish({"parameters": params})
    top: list[dict[str, Any]] = []
    if join and cfg.top:
        pairs = spark.read.parquet(fs.join(cfg.output, "pairs"))
        urls = spark.read.parquet(fs.join(cfg.output, "records")).select("doc_id", "url")
        ranked = (pairs.join(urls.withColumnRenamed("doc_id", "doc_id_a").withColumnRenamed("url", "url_a"),
                             on="doc_id_a")
                  .join(urls.withColumnRenamed("doc_id", "doc_id_b").withColumnRenamed("url", "url_b"),
                        on="doc_id_b")
                  .orderBy(F.desc("mwo"), "doc_id_a", "doc_id_b").limit(cfg.top).collect())
        top = [r.asDict() for r in ranked]
    return MwoRun(cfg.output, job.metrics, top)


def format_summary(result: MwoRun, cfg: MwoConfig, *, join: bool) -> str:
    """The end-of-run summary: counts per stage, then the closest pairs."""
    what = f"join (t={cfg.t})" if join else f"index (queries at t >= {cfg.index_threshold})"
    lines = [f"quiltdetect mwo {what} -> {result.output}", "stages:", *result.metrics.summary_lines()]
    if join:
        if result.top_pairs:
            lines.append(f"top {len(result.top_pairs)} pairs by MWO:")
            for i, p in enumerate(result.top_pairs, 1):
                lines.append(f"{i:>3}. {p['mwo']:.4f}  {p['url_a'] or p['doc_id_a']}  ~  {p['url_b'] or p['doc_id_b']}")
        else:
            lines.append("no near-duplicate pairs found")
    return "\n".join(lines)
