"""The quilt job: WARC/WET/tables -> document table -> quilts with their sources (definitions §1).

``find_quilts`` reads as the paper's figure 5, one timed and named stage per step.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, DataType, StructType

from quiltdetect.common.arrow import ARRAY_WRITE_OPTIONS
from quiltdetect.common.caching import SPILL, keep
from quiltdetect.common.folder import OutputFolder
from quiltdetect.common.layout import work_table
from quiltdetect.common.runstate import RunState, fingerprint
from quiltdetect.documents.table import DOCS_WRITE_OPTIONS
from quiltdetect.lifecycle import Job, JobResult, JobRun
from quiltdetect.previous import doc_ranks, union_documents
from quiltdetect.quilts.arrays import bucket_count
from quiltdetect.quilts.config import QuiltConfig
from quiltdetect.quilts.cover import cover_sources
from quiltdetect.quilts.gram_table import (
    GRAM_BUCKETS_DDL,
    GramTable,
    gram_bucket_counts,
    gram_buckets,
)
from quiltdetect.quilts.increment import (
    GRAM_STATE,
    Restriction,
    gram_table_name,
    merged_gram_table,
    previous_grams,
    restriction,
)
from quiltdetect.quilts.patch_grams import doc_buckets, patch_counts
from quiltdetect.quilts.patchfrac import fractions_of, patchy_docs
from quiltdetect.quilts.sources import assemble_quilts, cover_sizes, keep_contributing


def gram_sets_stage(run: JobRun, docs: DataFrame) -> GramTable:
    """The gram-bucket table of the documents (see ``gram_table``).

    Independent of m, c and θ: written once per k and reused by a rerun with other parameters.
    Written as a Spark bucketed table (``spark_buckets``), so that an update adds the new
    documents' pairs as a layer of files beside it instead of rewriting it (``increment``).
    """
    spark, cfg, out = run.spark, run.cfg, run.out
    name = gram_table_name(cfg)
    table = work_table(name)

    def build(counts: dict) -> GramTable:
        partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
        n = bucket_count(partitions)
        buckets = out.write_bucketed_table(gram_buckets(docs, cfg.k, n, with_counts=cfg.count_occurrences), table,
                                           "bucket", partitions, ARRAY_WRITE_OPTIONS)
        counts["documents_with_grams"], counts["doc_grams"] = gram_bucket_counts(buckets, n)
        counts["gram_buckets"] = n
        counts["spark_buckets"] = partitions
        counts["layers"] = 1
        return GramTable(buckets, n)

    return run.stage("grams", f"{cfg.k}-gram sets per document, as gram buckets", build,
                     key=gram_stage_key(run.state, cfg), marker=name, tables=[table], needs=["gram_buckets"],
                     reuse=lambda done: GramTable(out.read_table(table, GRAM_BUCKETS_DDL), int(done["gram_buckets"])))


def gram_stage_key(state: RunState, cfg: QuiltConfig) -> str:
    """The grams stage's key: the gram sets depend on the inputs (and the previous run an
    update extends: in ``inputs_key``), k, the counting mode and which documents are kept."""
    return fingerprint([state.inputs_key, cfg.k, cfg.count_occurrences, cfg.collapse_near_duplicates, "buckets-v1"])


def find_quilts(run: JobRun, docs: DataFrame, grams_table: GramTable | None = None,
                restrict: Restriction | None = None, ranks: DataFrame | None = None) -> None:
    """Figure 5 on a document table with doc_keys; writes quilts/ and doc_stats/.

    ``grams_table``: the gram-bucket table when the caller made it (an update); else the grams
    stage computes it from ``docs``. ``restrict`` (an update with the previous run's settings):
    compute only the documents the new ones may change, and take the others' rows from the
    previous run's quilts/ and doc_stats/. ``ranks`` (an update): (doc_key, rank in doc_id
    order) for the cover's tie-break, keys no longer ordering like doc_ids.
    """
    spark, cfg, metrics, out = run.spark, run.cfg, run.metrics, run.out
    with_counts = cfg.count_occurrences
    gram_table = grams_table or gram_sets_stage(run, docs)
    if ranks is not None:  # read by the doc buckets and again to name the covers' sources by key
        ranks = keep(ranks, SPILL)
    grams, n_gram = gram_table.frame, gram_table.buckets
    n_docs = bucket_count(int(spark.conf.get("spark.sql.shuffle.partitions")))

    with metrics.stage(spark, "patch_grams", f"documents per gram, keep 1 < df <= {cfg.m}") as counts:
        doc_table = keep(doc_buckets(grams, docs, cfg.m, n_gram, n_docs, with_counts=with_counts, foreign=cfg.foreign_rule,
                                     first_new_key=restrict.first_new_key if restrict else None, theta=cfg.theta,
                                     ranks=ranks, layered=gram_table.layered), SPILL)
        counts["distinct_grams"], counts["patch_grams"], counts["doc_patch_grams"] = patch_counts(doc_table)

    with metrics.stage(spark, "patchfrac", f"patch fraction per document, keep >= {cfg.theta}") as counts:
        fractions = keep(fractions_of(doc_table), SPILL)
        counts["patchy_documents"] = patchy_docs(fractions, cfg.theta).count()
        if restrict is not None:
            counts.update(restrict.recomputed(fractions))
        grams.unpersist()

    phi_note = f", drop sources covering < {cfg.phi} of pgrams" if cfg.phi > 0 else ""
    with metrics.stage(spark, "sources", f"(target, gram, source) triples, greedy cover per target{phi_note}") as counts:
        picked = cover_sources(doc_table, cfg.theta, n_gram, n_docs, ranks=ranks)
        covers = keep(keep_contributing(picked, fractions, cfg.phi), SPILL)
        sizes = keep(cover_sizes(covers), SPILL)
        row = sizes.agg(F.count(F.lit(1)), F.sum("n_pairs"), F.sum("n_sources")).first()
        counts["covered_targets"] = int(row[0])
        counts["triples"] = int(row[1] or 0)
        counts["sources_picked"] = int(row[2] or 0)
        doc_table.unpersist()

    with metrics.stage(spark, "quilts", f"keep documents with >= {cfg.c} sources, write quilts/") as counts:
        quilts = assemble_quilts(fractions, covers, docs, cfg.c, exclude_attributed=cfg.exclude_attributed)
        stats = (
            fractions.join(sizes.select("doc_key", "n_sources"), on="doc_key", how="left")
            .join(docs.select("doc_key", "doc_id", "url"), on="doc_key")
            .select("doc_id", "url", "n_grams", "n_patch_grams", "patchfrac",
                    F.coalesce("n_sources", F.lit(0)).cast("int").alias("n_sources"))
        )
        # Written with every field nullable, as Parquet reads them back: an update, which adds the
        # previous run's rows, then writes the same bytes as a fresh run.
        quilts, stats = as_nullable(quilts), as_nullable(stats)
        recomputed: list[DataFrame] = []
        if restrict is not None:
            # the recomputed rows, computed once: the anti-joins with the previous rows and the
            # unions read them (else every use ran the joins with docs/ again:
            # docs/performance.md, "Figures behind choices in the code")
            recomputed = [keep(quilts, SPILL), keep(stats, SPILL)]
            quilts, stats = restrict.with_previous(spark, *recomputed)
        _, row = out.write_counted(quilts.orderBy("doc_id"), "quilts", {
            "rows": F.count(F.lit(1)), "sources": F.avg(F.size("sources")),
            "attributed": F.sum(F.col("attributed").cast("long"))})
        out.write_table(stats.orderBy("doc_id"), "doc_stats")
        counts["quilts"] = int(row["rows"])
        if counts["quilts"]:
            counts["avg_sources"] = round(float(row["sources"]), 2)
            counts["attributed"] = int(row["attributed"] or 0)
        for frame in (fractions, covers, sizes, *recomputed, *([] if ranks is None else [ranks])):
            frame.unpersist()


def as_nullable(frame: DataFrame) -> DataFrame:
    """``frame`` with every column, array element and struct field nullable, as Spark reads
    any Parquet table back; values unchanged. (A ``when`` on the non-null doc_id, which the
    optimizer cannot drop: casts and ``DataFrame.to`` keep non-null fields non-null.)"""
    known = F.col("doc_id").isNotNull()

    def loose(value: Column, kind: DataType) -> Column:
        if isinstance(kind, StructType):
            value = F.struct(*[loose(value[f.name], f.dataType).alias(f.name) for f in kind.fields])
        elif isinstance(kind, ArrayType):
            value = F.transform(value, lambda element: loose(element, kind.elementType))
        return F.when(known, value)

    return frame.select(*[loose(F.col(f.name), f.dataType).alias(f.name) for f in frame.schema.fields])


def top_quilts(out: OutputFolder, n: int) -> list[dict[str, Any]]:
    """The n quilts with the highest patch fraction (then most sources, then doc_id)."""
    if n <= 0:
        return []
    quilts = out.read_table("quilts")
    rows = (
        quilts.orderBy(F.desc("patchfrac"), F.desc(F.size("sources")), F.asc("doc_id"))
        .limit(n)
        .collect()
    )
    return [r.asDict(recursive=True) for r in rows]


def write_actions(run: JobRun, docs: DataFrame) -> None:
    """annotated/ (each document with n_grams, n_patch_grams, patchfrac, n_sources, is_quilt) and
    filtered/ (the document table without the quilts), as the configuration asks."""
    cfg, out = run.cfg, run.out
    if not (cfg.write_annotated or cfg.write_filtered):
        return
    with run.metrics.stage(run.spark, "act", "documents annotated with their quilt figures / without quilts") as counts:
        quilted = out.read_table("quilts").select("doc_id", F.lit(True).alias("is_quilt"))
        if cfg.write_annotated:
            stats = out.read_table("doc_stats").select("doc_id", "n_grams", "n_patch_grams", "patchfrac", "n_sources")
            annotated = (docs.join(stats, on="doc_id", how="left").join(quilted, on="doc_id", how="left")
                         .select(*docs.columns, "n_grams", "n_patch_grams", "patchfrac",
                                 F.coalesce("n_sources", F.lit(0)).alias("n_sources"),
                                 F.coalesce("is_quilt", F.lit(False)).alias("is_quilt")))
            _, counts["annotated"] = out.write_rows(annotated.orderBy("doc_id"), "annotated", DOCS_WRITE_OPTIONS)
        if cfg.write_filtered:
            filtered = docs.join(quilted, on="doc_id", how="left_anti").select(*docs.columns)
            _, counts["filtered"] = out.write_rows(filtered.orderBy("doc_id"), "filtered", DOCS_WRITE_OPTIONS)


class QuiltsJob(Job[QuiltConfig]):
    """``quiltdetect quilts``: (k, m, c, θ)-quilted pages and their sources (Najork 2012)."""

    name = state_name = "quilts"
    config_class = QuiltConfig
    tables = ("quilts", "doc_stats")

    update_settings = GRAM_STATE
    update_settings_why = f"the stored gram sets' settings ({', '.join(GRAM_STATE)})"
    update_state_what = "gram"

    def update_state(self) -> tuple[str, ...]:
        return (gram_table_name(self.cfg),)

    def compute(self, run: JobRun) -> None:
        """Figure 5 over the document table: a fresh run's, or an update's union of the previous
        documents and the new ones, with the previous gram table extended and the work
        restricted to the documents the new ones touch (``quilts/increment.py``)."""
        grams, restrict, ranks = None, None, None
        if run.previous is None:
            docs = run.docs()
            if self.cfg.collapse_near_duplicates:
                from quiltdetect.neardup.collapse import collapse_near_duplicates

                docs = collapse_near_duplicates(run, docs)
        else:
            previous = previous_grams(run.previous, self.cfg)
            docs, new, n_old = union_documents(run)
            grams = merged_gram_table(run, previous, new, gram_stage_key(run.state, self.cfg))
            restrict, ranks = restriction(self.cfg, previous, n_old), doc_ranks(docs)
        find_quilts(run, docs, grams, restrict, ranks)
        write_actions(run, docs)

    def outputs(self) -> tuple[str, ...]:
        return (*super().outputs(), *(("annotated",) if self.cfg.write_annotated else ()),
                *(("filtered",) if self.cfg.write_filtered else ()))

    def report(self, run: JobRun) -> dict[str, Any]:
        return {"top_quilts": top_quilts(run.out, self.cfg.top), "no_server": self.without_server(run)}

    def without_server(self, run: JobRun) -> tuple[int, int] | None:
        """(documents without a server under the foreign rule, documents), when the rule is on
        and some have none: all of them count as one server (``""``), so none of them can be
        another's source, which a table without urls would otherwise make silent."""
        foreign = self.cfg.foreign_rule
        if not foreign.on or not run.out.exists("docs"):
            return None
        server = foreign.server_column()
        row = run.out.read_table("docs").agg(
            F.count(F.lit(1)), F.sum(F.when(server.isin("", "domain:"), 1).otherwise(0))).first()
        return (int(row[1] or 0), int(row[0])) if row[1] else None

    def headline(self, result: JobResult) -> str:
        cfg = self.cfg
        return f"quilts (k={cfg.k}, m={cfg.m}, c={cfg.c}, theta={cfg.theta}, foreign={cfg.foreign})"

    def details(self, result: JobResult) -> list[str]:
        """The top quilts with their sources in pick order."""
        top = result.report["top_quilts"]
        lines = []
        if result.report.get("no_server"):
            missing, n = result.report["no_server"]
            foreign = self.cfg.foreign_rule
            lines.append(f"note: {missing:,} of {n:,} documents have no {foreign.server_kind} "
                         f"(no url{' or ip' if foreign.name == 'ip' else ''}): "
                         f"--foreign {foreign.name} counts them as one server, so none of them is another's source")
        if not top:
            return [*lines, "no quilted pages found"] if self.cfg.top > 0 else lines
        return lines + self._top_lines(top)

    @staticmethod
    def _top_lines(top: list[dict]) -> list[str]:
        """The top quilts with their sources in pick order."""
        lines = [f"top {len(top)} quilts (patch fraction, url, then its sources in pick order):"]
        for i, q in enumerate(top, 1):
            credit = f", {q['n_attributed_sources']} attributed" if q.get("attributed") else ""
            lines.append(f"{i:>3}. {q['patchfrac']:.3f}  {q['url']}  ({q['n_patch_grams']}/{q['n_grams']} patch grams,"
                         f" {len(q['sources'])} sources{credit})")
            for s in q["sources"][:8]:
                lines.append(f"        <- {s['url']}  covered {s['covered']}, shared {s['shared']}")
            if len(q["sources"]) > 8:
                lines.append(f"        ... {len(q['sources']) - 8} more sources")
        return lines
