"""The phrase job: document table -> sampled shingles -> popular phrases, covering sets and
host statistics (definitions §3, Fetterly, Manasse, Najork 2005).

``PhrasesJob.compute`` reads as the paper's section 3: sample (§3.2), suppress near-duplicates and
count popular shingles (§3.3), covering sets (§3.4), monsters (§3.5); one named stage each.
"""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame, Observation, Window
from pyspark.sql import functions as F

from quiltdetect.common.caching import SPILL, cut, keep
from quiltdetect.common.folder import OutputFolder
from quiltdetect.common.layout import work_table
from quiltdetect.common.runstate import fingerprint
from quiltdetect.lifecycle import Job, JobResult, JobRun
from quiltdetect.phrases import plots
from quiltdetect.phrases.config import PhrasesConfig
from quiltdetect.phrases.covering_sets import (
    assemble,
    cover_sample,
    covering_sets,
    donor_rows,
    scatter_table,
    servers,
)
from quiltdetect.phrases.monsters import host_stats, monster_sites
from quiltdetect.phrases.popular import (
    popular_counts_per_document,
    popular_phrases,
    popular_shingles,
    ranked,
    recover_phrase_texts,
    sampled_shingles,
    shingle_triples,
    suppress_near_duplicates,
)

log = logging.getLogger(__name__)
PLOT_HOSTS = 20_000  # hosts drawn in Figs. 8-9 at most (those with the most pages)


def samples_stage(run: JobRun, docs: DataFrame) -> DataFrame:
    """Sampled shingles of every document (§3.2); written once per (inputs, k, m) and reused."""
    cfg, out = run.cfg, run.out
    table = work_table(f"samples-k{cfg.k}-m{cfg.shingles}")

    def build(counts: dict) -> DataFrame:
        samples, row = out.write_counted(sampled_shingles(docs, cfg.k, cfg.shingles), table,
                                         {"rows": F.count(F.lit(1)), "words": F.sum("n_words")})
        counts["documents_sampled"] = int(row["rows"])
        counts["documents_without_words"] = int(run.metrics.stages["ingest"]["documents"]) - int(row["rows"])
        counts["words"] = int(row["words"] or 0)
        return samples

    return run.stage("sample", f"{cfg.shingles} min-hash selectors over circular {cfg.k}-word phrases", build,
                     key=fingerprint([run.state.inputs_key, cfg.k, cfg.shingles]), marker=f"samples-k{cfg.k}-m{cfg.shingles}",
                     tables=[table], reuse=lambda done: out.read_table(table))


def collapse_stage(run: JobRun, samples: DataFrame) -> DataFrame:
    """One document per near-duplicate cluster (§3.3), persisted."""
    cfg = run.cfg
    if not cfg.collapse_near_duplicates:
        return keep(samples, SPILL)

    def build(counts: dict) -> DataFrame:
        kept, clusters, pairs = suppress_near_duplicates(samples, cfg.near_duplicate_b, counts)
        kept = keep(kept, SPILL)
        row = clusters.agg(F.count(F.lit(1)), F.countDistinct("cluster_key")).first()
        counts["clusters"] = int(row[1])
        counts["clustered_documents"] = int(row[0])
        counts["documents_kept"] = kept.count()
        pairs.unpersist()
        counts["documents_dropped"] = int(row[0]) - int(row[1])
        return kept

    return run.stage("collapse", f"near-duplicates: >= {cfg.near_duplicate_b} of 6 supershingles, "
                                 "transitive closure, keep the smallest doc_id", build)


def find_phrases(run: JobRun, docs: DataFrame, kept: DataFrame) -> None:
    """§3.3-3.5 on the kept documents' samples: every result table and figure."""
    spark, cfg, metrics, write_table = run.spark, run.cfg, run.metrics, run.out.write_table
    foreign = cfg.foreign_rule
    server = keep(servers(docs, foreign), SPILL)
    triples = shingle_triples(kept)

    with metrics.stage(spark, "popular", f"(selector, shingle) groups, popular at >= {cfg.popular} documents") as counts:
        # the (selector, shingle) groups are counted by sorting each group bucket's shingles
        # (nearly every group is a singleton, so a hash aggregation only spills); only the
        # popular ones are kept, with one row per bucket giving its number of groups, and
        # checkpointed first, so that the joins below see their real size and broadcast them
        # when small (no shuffle of triples). Not cached: the later stages re-ran the count
        # of a cached one (docs/history/performance-log.md, "Popular shingles counted by sorting (stop 45)")
        groups = Observation("shingle_groups")
        counted = popular_shingles(kept, cfg.shingles, cfg.popular).observe(
            groups, F.sum(F.when(F.col("selector") < 0, F.col("n_documents"))).alias("n"))
        popular = cut(counted.where(F.col("selector") >= 0))
        n_popular = popular.count()
        counts["distinct_shingles"] = int(groups.get["n"] or 0)
        counts["popular_shingles"] = n_popular
        doc_n = keep(popular_counts_per_document(kept, triples, popular), SPILL)
        per_doc = (doc_n
                   .join(docs.select("doc_key", "doc_id", "url"), on="doc_key").join(server, on="doc_key"))
        doc_counts = write_table(per_doc.select("doc_id", "url", "host", "server", "n_words", "n_popular")
                                 .orderBy("doc_id"), "doc_popular_counts")
        occurrences = write_table(popular.groupBy("n_documents").agg(F.count(F.lit(1)).alias("n_shingles"))
                                  .orderBy("n_documents"), "shingle_occurrences")
        histogram = (doc_counts.groupBy("n_popular").agg(F.count(F.lit(1)).alias("n_documents"))
                     .withColumn("fraction", F.col("n_documents") / F.sum("n_documents").over(Window.partitionBy()))
                     .orderBy("n_popular"))
        hist = write_table(histogram, "popular_per_document").toPandas()
        counts.update(histogram_counts(hist, cfg.shingles))

    with metrics.stage(spark, "phrases", "popular phrases ranked, texts read back from their documents") as counts:
        phrases = popular_phrases(triples, popular)
        texts = recover_phrase_texts(phrases, docs, cfg.k)
        table = (phrases.join(texts, on="shingle", how="left")
                 .join(docs.select(F.col("doc_key").alias("example_key"), F.col("url").alias("example_url")),
                       on="example_key")
                 .select("phrase", "n_documents", "n_samples", "n_popular_selectors", "example_url",
                         F.col("shingle").alias("fingerprint")))
        table = ranked(table, F.desc("n_documents"), F.desc("n_samples"), F.asc("phrase"), F.asc("fingerprint"))
        _, row = run.out.write_counted(table, "popular_phrases", {
            "rows": F.count(F.lit(1)), "without_text": F.sum(F.col("phrase").isNull().cast("long"))})
        counts["popular_phrases"] = int(row["rows"])
        counts["without_text"] = int(row["without_text"] or 0)

    with metrics.stage(spark, "covering_sets", f"greedy covering sets ({cfg.cover_sample} sample, "
                                               f"foreign preference: {foreign.name})") as counts:
        sample = keep(cover_sample(doc_n, docs, server, cfg), SPILL)  # read twice: donors, then the table
        rows = donor_rows(sample, triples, popular, server, foreign)
        picks = covering_sets(rows, cfg.shingles)
        covers, row = run.out.write_counted(
            assemble(sample, picks, doc_n, docs, server, foreign).orderBy("doc_id"), "covering_sets",
            {"cover_size": F.sum("cover_size"), "n_popular": F.sum("n_popular"),
             "foreign": F.sum("foreign_contribution"), "uncovered": F.sum("uncovered"), "rows": F.count(F.lit(1))})
        scatter = write_table(scatter_table(covers), "cover_scatter")
        counts["sampled_documents"] = int(row["rows"])
        counts["donors_picked"] = int(row["cover_size"] or 0)
        counts["popular_shingles_covered"] = int((row["n_popular"] or 0) - (row["uncovered"] or 0))
        if foreign.on:
            counts["foreign_contribution"] = int(row["foreign"] or 0)

    with metrics.stage(spark, "hosts", f"hosts with >= {cfg.min_host_pages} pages, monster candidates") as counts:
        stats = host_stats(doc_counts, covers, cfg.min_host_pages, cfg.shingles)
        hosts, counts["hosts"] = run.out.write_rows(stats.orderBy(F.desc("n_pages"), "host"), "host_stats")
        monsters, counts["monster_candidates"] = run.out.write_rows(
            monster_sites(hosts, cfg.monster_min_mean, cfg.monster_max_std, cfg.monster_order), "monster_sites")
        for frame in (popular, server, doc_n):
            frame.unpersist()

    with metrics.stage(spark, "plots", "Figs. 1, 2, 3-7 and 8-9 as PNG") as counts:
        figures = {
            "fig1_shingle_occurrences.png": plots.occurrences_plot(
                occurrences.toPandas(), cfg.popular, "Fig. 1: occurrences of popular shingles"),
            "fig2_popular_per_document.png": plots.per_document_plot(
                hist, cfg.shingles, "Fig. 2: popular shingles per document"),
            "fig3_covering_sets.png": plots.covering_plot(
                scatter.toPandas(), cfg.shingles, f"Figs. 3-7: covering sets ({cfg.cover_sample} sample, "
                f"popular >= {cfg.cover_min_popular}, foreign = other {foreign.name})"),
            "fig8_host_stats.png": plots.host_plot(
                hosts.orderBy(F.desc("n_pages"), "host").limit(PLOT_HOSTS).toPandas(),
                monsters.orderBy("rank").limit(PLOT_HOSTS).toPandas(), cfg.shingles, cfg.monster_min_mean,
                cfg.monster_max_std, 10,
                f"Figs. 8-9: hosts with >= {cfg.min_host_pages} pages"),
        }
        for name, png in figures.items():
            run.out.write_bytes(name, png)
        counts["figures"] = len(figures)


def histogram_counts(hist: pd.DataFrame, m: int) -> dict[str, Any]:
    """The paper's §4 (6) figures from the Fig. 2 table: documents with a popular shingle, with
    at least half of their shingles popular, and the mean popular count."""
    total = int(hist["n_documents"].sum())
    return {
        "documents": total,
        "with_a_popular_shingle": int(hist.loc[hist["n_popular"] > 0, "n_documents"].sum()),
        "at_least_half_popular": int(hist.loc[hist["n_popular"] * 2 >= m, "n_documents"].sum()),
        "mean_popular": round(float((hist["n_popular"] * hist["n_documents"]).sum()) / max(total, 1), 3),
    }


def top_rows(out: OutputFolder, cfg: PhrasesConfig) -> dict[str, list[dict[str, Any]]]:
    """The first ``top`` rows of the ranked outputs, for the summary."""
    if cfg.top <= 0:
        return {}
    read = out.read_table

    covers = (read("covering_sets").orderBy(F.desc("n_popular"), F.desc("cover_size"), "doc_id").limit(cfg.top)
              .collect())
    return {
        "popular_phrases": [r.asDict() for r in read("popular_phrases").orderBy("rank").limit(cfg.top).collect()],
        "monster_sites": [r.asDict() for r in read("monster_sites").orderBy("rank").limit(cfg.top).collect()],
        "popular_per_document": [r.asDict() for r in read("popular_per_document").orderBy("n_popular").collect()],
        "covering_sets": [r.asDict(recursive=True) for r in covers],
    }


def summary_lines(top: dict[str, list[dict[str, Any]]], cfg: PhrasesConfig) -> list[str]:
    """The summary after the stages: the top of each output."""
    lines: list[str] = []
    if top.get("popular_phrases"):
        lines.append(f"top {len(top['popular_phrases'])} popular phrases (documents, phrase, example):")
        lines += [f"{p['rank']:>4}. {p['n_documents']:>7}  {p['phrase']!s:<40}  {p['example_url']}"
                  for p in top["popular_phrases"]]
    else:
        lines.append("no popular phrases")
    if top.get("popular_per_document"):
        h = histogram_counts(pd.DataFrame(top["popular_per_document"]), cfg.shingles)
        total = max(h["documents"], 1)
        lines.append(f"documents: {h['documents']:,}; with a popular shingle {h['with_a_popular_shingle'] / total:.1%}; "
                     f"at least half popular {h['at_least_half_popular'] / total:.1%}; "
                     f"mean popular {h['mean_popular']:.1f} of {cfg.shingles}")
    if top.get("monster_sites"):
        lines.append(f"monster candidates by {cfg.monster_order} (rank, score, pages, mean ± std popular shingles, "
                     "mean covering-set size of sampled pages, host):")
        for m in top["monster_sites"]:
            cover = "-" if m["mean_cover_size"] is None else f"{m['mean_cover_size']:.1f}"
            lines.append(f"{m['rank']:>4}. {m['monster_score']:8.1f} {m['n_pages']:>7}  {m['mean_popular']:5.1f} ± "
                         f"{m['std_popular']:4.1f}  {cover:>5}  {m['host']}")
    else:
        lines.append(f"no monster candidates (hosts with >= {cfg.min_host_pages} pages, mean >= "
                     f"{cfg.monster_min_mean:g}, std < {cfg.monster_max_std:g})")
    if top.get("covering_sets"):
        lines.append("covering sets with the most popular shingles (popular, donors, foreign, url):")
        for c in top["covering_sets"][:5]:
            foreign = "-" if c["foreign_contribution"] is None else c["foreign_contribution"]
            lines.append(f"      {c['n_popular']:>3} {c['cover_size']:>4} {foreign!s:>4}  {c['url']}")
            lines += [f"            <- {d['url']}  covered {d['covered']}" for d in c["donors"][:4]]
    return lines


class PhrasesJob(Job[PhrasesConfig]):
    """``quiltdetect phrases``: popular phrases, covering sets and monster sites (Fetterly 2005)."""

    name = state_name = "phrases"
    config_class = PhrasesConfig
    tables = ("doc_popular_counts", "shingle_occurrences", "popular_per_document", "popular_phrases",
              "covering_sets", "cover_scatter", "host_stats", "monster_sites")

    def compute(self, run: JobRun) -> None:
        """Sample (§3.2), collapse near-duplicates (§3.3), then phrases, covers, hosts (§3.3-3.5)."""
        docs = run.docs()
        samples = samples_stage(run, docs)
        kept = collapse_stage(run, samples)
        find_phrases(run, docs, kept)
        kept.unpersist()

    def report(self, run: JobRun) -> dict[str, Any]:
        return top_rows(run.out, self.cfg)

    def headline(self, result: JobResult) -> str:
        cfg = self.cfg
        return f"phrases (k={cfg.k}, shingles={cfg.shingles}, popular>={cfg.popular}, foreign={cfg.foreign})"

    def details(self, result: JobResult) -> list[str]:
        return summary_lines(result.report, self.cfg)
