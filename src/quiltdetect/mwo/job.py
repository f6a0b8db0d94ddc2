"""``mwo index`` and ``mwo join``: document table -> TDW matrix (Parquet) -> near-duplicate pairs.

Outputs under ``cfg.output``: docs/ (the document table), terms/ (term, df, term_id: the
global order), records/ (canonical records), postings/ (the weighted-prefix inverted index
that ``mwo query`` loads), index.json (what a query needs to know), and for the join
pairs/ (doc_id_a, doc_id_b, mwo). Plus config.yaml and metrics.json.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.common.caching import SPILL, TEXT_CACHE, keep
from quiltdetect.lifecycle import Job, JobResult, JobRun
from quiltdetect.mwo.config import MwoConfig
from quiltdetect.mwo.join import block_pairs, block_rdd, prefix_blocks, survivors, verified_pairs
from quiltdetect.mwo.tdw import canonical_records, global_order, prefix_postings, weighted_records

log = logging.getLogger(__name__)
INDEX_META = "index.json"


def build_tdw(run: JobRun, docs: DataFrame, threshold: float) -> tuple[DataFrame, DataFrame]:
    """Rendering and canonicalisation; writes terms/, records/, postings/. Returns (records, postings)."""
    spark, cfg, metrics, out = run.spark, run.cfg, run.metrics, run.out
    with metrics.stage(spark, "render", "tags, tokens, stop words, stems, field weights, normalise") as counts:
        # On disk only, like the texts and the near-duplicate fingerprints: every page's terms and
        # weights, per-page arrays like the fingerprints, whose in-memory cache ran the heap out
        # at a million pages (docs/performance.md, "Memory and defaults at a million pages").
        records = keep(weighted_records(docs, cfg.min_weight_ratio), TEXT_CACHE)
        row = records.agg(F.count(F.lit(1)), F.sum(F.size("terms"))).first()
        counts["records"] = int(row[0])
        counts["record_terms"] = int(row[1] or 0)
        counts["documents_without_terms"] = docs.count() - counts["records"]
    with metrics.stage(spark, "order", "document frequency per term, global order, write terms/") as counts:
        order, counts["terms"] = out.write_rows(global_order(spark, records), "terms")
    with metrics.stage(spark, "canonicalise", "sort records by the global order, write records/") as counts:
        terms = metrics.stages["order"]["terms"]
        broadcast = 0 < cfg.broadcast_order_terms and terms <= cfg.broadcast_order_terms
        counts["lookup"] = "broadcast" if broadcast else "shuffle"
        canon = canonical_records(spark, records, order, broadcast=broadcast)
        canon, counts["records"] = out.write_rows(canon.sortWithinPartitions("doc_key"), "records")
        records.unpersist()
    with metrics.stage(spark, "postings", f"weighted prefixes at t >= {threshold}, write postings/") as counts:
        # In record order, not sorted by term: `mwo query` sorts the postings it loads. A global
        # sort shuffled every posting and ran the prefixes twice (its range sampling); even a sort
        # within each file took longer and wrote more bytes (docs/performance.md, "Tried and did
        # not help"): a record's postings together compress well (one doc_key, consecutive
        # positions).
        postings, counts["postings"] = out.write_rows(prefix_postings(canon, threshold), "postings")
    meta = {"index_threshold": threshold, "min_weight_ratio": cfg.min_weight_ratio,
            "records": metrics.stages["canonicalise"]["records"], "terms": metrics.stages["order"]["terms"]}
    out.write_text(INDEX_META, json.dumps(meta, indent=2))
    return canon, postings


def self_join(run: JobRun, canon: DataFrame) -> None:
    """All pairs with MWO >= t: l-prefix and positional filters block by block, verification; writes pairs/."""
    spark, cfg, metrics = run.spark, run.cfg, run.metrics
    t, ell = cfg.t, cfg.shared_prefix_terms
    with metrics.stage(spark, "prefix", f"blocks of {cfg.block_size} records, pairs sharing min(l_a, l_b) "
                                        f"extended-prefix terms (l={ell}), positional bound at t={t}") as counts:
        n = metrics.stages["canonicalise"]["records"]
        counts["all_pairs"] = n * (n - 1) // 2
        counts["shared_prefix_terms"] = ell
        blocks = keep(prefix_blocks(canon, t, ell, cfg.block_size), SPILL)
        row = blocks.agg(F.count(F.lit(1)), F.sum("postings")).first()
        counts["blocks"], counts["prefix_postings"] = int(row[0]), int(row[1] or 0)
        rdd = keep(block_rdd(spark, blocks, counts["blocks"]), SPILL)
        met = keep(block_pairs(spark, rdd, t, metrics.stages["order"]["terms"]), SPILL)
        row = met.agg(F.count(F.lit(1)), F.sum("sharing"), F.sum("candidates"), F.sum(F.size("key_a"))).first()
        counts["block_pairs"] = int(row[0])
        counts["sharing_a_term"] = int(row[1] or 0)
        counts["candidates"] = int(row[2] or 0)
        counts["positional"] = int(row[3] or 0)
        rdd.unpersist()
        blocks.unpersist()
    with metrics.stage(spark, "verify", f"exact MWO >= {t}, write pairs/") as counts:
        pairs = keep(verified_pairs(survivors(met), canon, t), SPILL)  # verified once, not again by the sort's sampling
        _, counts["pairs"] = run.out.write_rows(pairs.orderBy("doc_id_a", "doc_id_b"), "pairs")
        pairs.unpersist()
        met.unpersist()


class MwoIndexJob(Job[MwoConfig]):
    """``quiltdetect mwo index``: every page's weighted record and the prefix index that
    ``mwo query`` loads."""

    name = "mwo index"
    state_name = "mwo"
    config_class = MwoConfig
    tables = ("terms", "records", "postings")
    join = False

    def key(self) -> Any:
        return {"join": self.join}

    def threshold(self) -> float:
        """The smallest t the index answers: the join's t when it is smaller."""
        return min(self.cfg.t, self.cfg.index_threshold) if self.join else self.cfg.index_threshold

    def compute(self, run: JobRun) -> dict[str, Any]:
        canon, _ = build_tdw(run, run.docs(), self.threshold())
        if self.join:
            self_join(run, canon)
        return {"parameters": {"index_threshold": self.threshold()}}

    def headline(self, result: JobResult) -> str:
        return f"mwo index (queries at t >= {self.cfg.index_threshold})"


class MwoJoinJob(MwoIndexJob):
    """``quiltdetect mwo join``: all pairs with MWO >= t; its output is also an index."""

    name = "mwo join"
    tables = (*MwoIndexJob.tables, "pairs")
    join = True

    def report(self, run: JobRun) -> dict[str, Any]:
        """The closest pairs with their URLs."""
        if not self.cfg.top:
            return {"top_pairs": []}
        pairs = run.out.read_table("pairs")
        urls = run.out.read_table("records").select("doc_id", "url")
        ranked = (pairs.join(urls.withColumnRenamed("doc_id", "doc_id_a").withColumnRenamed("url", "url_a"),
                             on="doc_id_a")
                  .join(urls.withColumnRenamed("doc_id", "doc_id_b").withColumnRenamed("url", "url_b"),
                        on="doc_id_b")
                  .orderBy(F.desc("mwo"), "doc_id_a", "doc_id_b").limit(self.cfg.top).collect())
        return {"top_pairs": [r.asDict() for r in ranked]}

    def headline(self, result: JobResult) -> str:
        return f"mwo join (t={self.cfg.t})"

    def details(self, result: JobResult) -> list[str]:
        top = result.report["top_pairs"]
        if not top:
            return ["no near-duplicate pairs found"] if self.cfg.top > 0 else []
        return [f"top {len(top)} pairs by MWO:",
                *(f"{i:>3}. {p['mwo']:.4f}  {p['url_a'] or p['doc_id_a']}  ~  {p['url_b'] or p['doc_id_b']}"
                  for i, p in enumerate(top, 1))]
