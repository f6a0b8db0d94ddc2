"""The content-reuse job (definitions §4): discover, detect and mutate-eval, one timed stage per step.

Step 0 removes recursion-error URLs; steps 1-2 hash files and chunks; discovery (3b) labels
the frequent objects, or (3a) a named corpus is labeled; detection matches objects (4), scores
pages (5) and neighborhoods (6). Every table is written as Parquet under the output directory,
the small reports as TSV/TXT and the figures as PNG beside them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.common import fs
from quiltdetect.common.caching import SPILL, keep
from quiltdetect.common.config import ConfigError
from quiltdetect.common.csvsafe import tsv_text
from quiltdetect.common.folder import OutputFolder, read_parquet
from quiltdetect.documents.table import document_table
from quiltdetect.lifecycle import Job, JobResult, JobRun
from quiltdetect.reuse import discovery, plots
from quiltdetect.reuse.chunks import stop_hashes
from quiltdetect.reuse.config import ReuseConfig
from quiltdetect.reuse.detection import (
    BADNESS_BINS,
    badness_histogram,
    match_chunks,
    match_files,
    mean_plus_std,
    neighborhood_badness,
    neighborhood_members,
    page_contains,
)
from quiltdetect.reuse.hashing import chunk_at, chunk_rows, document_hashes, page_paths
from quiltdetect.reuse.mutation import mutation_grid, run_experiment

log = logging.getLogger(__name__)
EXAMPLE_CHARS = 300  # example text shown per frequent object


@dataclass
class Corpus:
    """A hashed corpus: the document table, its paths, per-document hashes and chunk rows."""

    docs: DataFrame
    paths: DataFrame
    hashes: DataFrame
    chunks: DataFrame

    def unpersist(self) -> None:
        for frame in (self.paths, self.hashes, self.chunks):
            frame.unpersist()


def write_tsv(out: OutputFolder, name: str, frame: pd.DataFrame) -> None:
    """A table for people and spreadsheets: text cells that would run as formulas get a leading '."""
    out.write_text(name, tsv_text(frame))


def hash_corpus(run: JobRun, stop: frozenset[bytes]) -> Corpus:
    """Steps 0-2: the document table without recursion errors, hashed into files and chunks."""
    spark, metrics = run.spark, run.metrics
    docs = run.docs()
    with metrics.stage(spark, "clean", "recursion-error URLs, neighborhoods per page") as counts:
        paths = keep(page_paths(docs, run.cfg.max_component_repeats, run.cfg.max_prefix_depth), SPILL)
        errors = paths.where(F.col("recursion_error").isNotNull())
        # one pass for both counts: pages per reason, and pages without a host among the rest
        by_reason = {r[0]: (int(r[1]), int(r[2])) for r in paths.groupBy("recursion_error").agg(
            F.count(F.lit(1)), F.sum((F.size("prefixes") == 0).cast("long"))).collect()}
        run.out.write_table(errors.join(docs.select("doc_key", "doc_id", "url"), on="doc_key")
                  .select("doc_id", "url", F.col("recursion_error").alias("reason")).orderBy("doc_id"),
                  "recursion_errors")
        counts["removed"] = {reason: n for reason, (n, _) in sorted(by_reason.items(), key=lambda r: str(r[0]))
                             if reason is not None}
        counts["pages_without_host"] = by_reason.get(None, (0, 0))[1]
    with metrics.stage(spark, "hash", "SHA-1 of files and chunks, stop chunks removed") as counts:
        kept = docs.join(paths.where(F.col("recursion_error").isNull()).select("doc_key"), on="doc_key", how="left_semi")
        hashes = keep(document_hashes(kept, stop), SPILL)
        row = hashes.agg(F.count(F.lit(1)), F.sum(F.size("chunks")), F.sum("n_stop"),
                         F.sum(F.col("file_is_stop").cast("long")),
                         F.sum(((F.size("chunks") == 0)).cast("long"))).first()
        counts["documents"] = int(row[0])
        counts["chunks"] = int(row[1] or 0)
        counts["stop_chunks_removed"] = int(row[2] or 0)
        counts["stop_files"] = int(row[3] or 0)
        counts["documents_without_chunks"] = int(row[4] or 0)
        chunks = keep(chunk_rows(hashes), SPILL)
    return Corpus(docs, paths, hashes, chunks)


def _with_examples(labeled: DataFrame, docs: DataFrame) -> DataFrame:
    names = docs.select(F.col("doc_key").alias("example_key"), F.col("doc_id").alias("example_doc_id"),
                        F.col("url").alias("example_url"))
    return labeled.join(names, on="example_key", how="left").select(
        "kind", F.lower(F.hex("sha1")).alias("sha1"), "occurrences", "n_docs", "example_doc_id", "example_url",
        "example_pos",
    )


def write_labeled(run: JobRun, labeled: DataFrame, docs: DataFrame, name: str = "labeled") -> DataFrame:
    """Write labeled/ (kind, sha1 hex, occurrences, n_docs, example) and read it back for detection."""
    return labeled_keys(run.out.write_table(_with_examples(labeled, docs).orderBy("kind", "sha1"), name))


def labeled_keys(table: DataFrame) -> DataFrame:
    """A labeled/ table as (kind, sha1 binary)."""
    return table.select("kind", F.unhex("sha1").alias("sha1"))


def _top_with_text(freq: DataFrame, docs: DataFrame, n: int, kind: str) -> pd.DataFrame:
    top = discovery.top_objects(freq, n)
    texts = docs.select(F.col("doc_key").alias("example_key"), "doc_id", "url", "text")
    joined = texts.join(F.broadcast(top), on="example_key")
    if kind == "chunk":
        text = chunk_at(F.col("text"), F.col("example_pos"))
    else:
        text = F.regexp_replace(F.substring("text", 1, EXAMPLE_CHARS), "\n", " \u23ce ")
    rows = joined.select("occurrences", "n_docs", F.lower(F.hex("sha1")).alias("sha1"),
                         F.col("url").alias("example_url"), text.alias("text")).collect()
    frame = pd.DataFrame([r.asDict() for r in rows], columns=["occurrences", "n_docs", "sha1", "example_url", "text"])
    frame = frame.sort_values(["occurrences", "sha1"], ascending=[False, True], kind="mergesort").reset_index(drop=True)
    frame.insert(0, "rank", np.arange(1, len(frame) + 1))
    frame["text"] = frame["text"].fillna("").str.slice(0, EXAMPLE_CHARS)
    return frame


def _stop_candidates(top_chunks: pd.DataFrame) -> str:
    lines = ["# Most frequent chunks left after stop-chunk removal, in the stop-chunk file format.",
             "# Keep the benign ones (templates, navigation) and pass the file with --stop-chunks FILE.", ""]
    for row in top_chunks.itertuples():
        text = str(row.text).replace("\\", "\\\\")
        if text.startswith("#"):
            text = "\\" + text
        lines.append(f"# rank {row.rank}: {row.occurrences} occurrences in {row.n_docs} documents")
        lines.append(text)
    return "\n".join(lines) + "\n"


def discover(run: JobRun, corpus: Corpus) -> tuple[DataFrame, dict]:
    """Step 3b: blind discovery; writes labeled/, frequency tables and plots, top objects."""
    spark, cfg, metrics = run.spark, run.cfg, run.metrics
    report: dict[str, Any] = {}
    with metrics.stage(spark, "discover", f"chunks > {cfg.chunk_threshold}, files > {cfg.file_threshold} duplicates") as counts:
        chunk_freq = keep(discovery.chunk_frequency(corpus.chunks), SPILL)
        file_freq = keep(discovery.file_frequency(corpus.hashes), SPILL)
        labeled = write_labeled(run, discovery.blind_labeled(chunk_freq, file_freq, cfg.chunk_threshold,
                                                             cfg.file_threshold), corpus.docs)
        dist = discovery.frequency_distribution(chunk_freq.unionByName(file_freq))
        table = pd.DataFrame([r.asDict() for r in run.out.write_table(dist.orderBy("kind", "occurrences"), "frequency").collect()],
                             columns=["kind", "occurrences", "n_objects"])
        write_tsv(run.out, "frequency.tsv", table)
        for kind, threshold in (("file", cfg.file_threshold), ("chunk", cfg.chunk_threshold)):
            part = table[table["kind"] == kind]
            counts[f"distinct_{kind}s"] = int(part["n_objects"].sum())
            counts[f"{kind}_occurrences"] = int((part["occurrences"] * part["n_objects"]).sum())
            above = part[part["occurrences"] > threshold]
            counts[f"labeled_{kind}s"] = int(above["n_objects"].sum())
            counts[f"labeled_{kind}_occurrences"] = int((above["occurrences"] * above["n_objects"]).sum())
            counts[f"unique_{kind}s"] = int(part.loc[part["occurrences"] == 1, "n_objects"].sum())
            if len(part):
                run.out.write_bytes(f"discovery_{kind}s.png", plots.frequency_plot(
                    part["occurrences"], part["n_objects"], threshold, kind,
                    f"{kind}-level discovery: {counts[f'distinct_{kind}s']:,} distinct {kind}s, "
                    f"{counts[f'labeled_{kind}s']:,} labeled (stop chunks removed)"))
        for kind, freq in (("chunk", chunk_freq), ("file", file_freq)):
            top = _top_with_text(freq, corpus.docs, cfg.top_objects, kind)
            write_tsv(run.out, f"top_{kind}s.tsv", top)
            report[f"top_{kind}s"] = top.head(cfg.top)
            if kind == "chunk":
                run.out.write_text("stop_chunk_candidates.txt", _stop_candidates(top))
        chunk_freq.unpersist()
        file_freq.unpersist()
    return labeled, report


def labeled_from_corpus(run: JobRun, stop: frozenset[bytes], name: str = "labeled") -> DataFrame:
    """Step 3a: the labeled set from a named corpus (its files and its chunks of >= min chars)."""
    spark, cfg, metrics = run.spark, run.cfg, run.metrics
    corpus = replace(cfg, inputs=[cfg.labeled], input_format=cfg.labeled_format,
                     output=fs.join(cfg.output, "labeled_corpus"))
    ldocs = run.stage("labeled_ingest", "read the labeled corpus, parse HTML, write labeled_corpus/docs/",
                      lambda counts: document_table(spark, corpus, run.out.sub("labeled_corpus"), counts))
    with metrics.stage(spark, "label", f"hash the labeled corpus, chunks >= {cfg.min_chunk_chars} chars") as counts:
        hashes = keep(document_hashes(ldocs, stop), SPILL)
        chunks = chunk_rows(hashes)
        labeled = write_labeled(run, discovery.corpus_labeled(hashes, chunks, cfg.min_chunk_chars), ldocs, name)
        for kind, n in labeled.groupBy("kind").count().collect():
            counts[f"labeled_{kind}s"] = int(n)
        counts["short_chunks_left_out"] = chunks.where(F.col("length") < cfg.min_chunk_chars).count()
        hashes.unpersist()
    return labeled


def resolve_labeled(run: JobRun, corpus: Corpus, stop: frozenset[bytes],
                    name: str = "labeled") -> tuple[DataFrame, str, dict]:
    """L for detection: a discovery output, a labeled corpus (informed) or blind discovery here;
    written to the output as ``name`` in every case, so that a run holds the L it used (a
    discovery output's labeled/ is copied: it is the small table of frequent objects)."""
    spark, cfg = run.spark, run.cfg
    if cfg.labeled is None:
        labeled, report = discover(run, corpus)
        return labeled, "blind discovery on the input", report
    if cfg.labeled.rstrip("/") == cfg.output.rstrip("/"):
        raise ConfigError("--labeled must not be the --output directory")
    if fs.exists(spark, fs.join(cfg.labeled, "labeled")):
        given = read_parquet(spark, fs.join(cfg.labeled, "labeled"))
        return labeled_keys(run.out.write_table(given.orderBy("kind", "sha1"), name)), f"labeled set of {cfg.labeled}", {}
    return labeled_from_corpus(run, stop, name), f"informed, from the corpus {cfg.labeled}", {}


def score_pages(labeled: DataFrame, corpus: Corpus, cfg: ReuseConfig, counts: dict) -> tuple[DataFrame, DataFrame, DataFrame]:
    """Steps 4-5: chunk and file matches and contains per page (not yet thresholded)."""
    sizes = {r[0]: int(r[1]) for r in labeled.groupBy("kind").count().collect()}
    broadcast = 0 < cfg.broadcast_labeled_rows and sum(sizes.values()) <= cfg.broadcast_labeled_rows
    counts["labeled_chunks"] = sizes.get("chunk", 0)
    counts["labeled_files"] = sizes.get("file", 0)
    counts["join"] = "broadcast" if broadcast else "shuffle"
    chunk_matches = match_chunks(corpus.chunks, labeled.where(F.col("kind") == "chunk"), broadcast=broadcast)
    file_matches = match_files(corpus.hashes, labeled.where(F.col("kind") == "file"), broadcast=broadcast)
    return chunk_matches, file_matches, page_contains(corpus.hashes, chunk_matches, file_matches)


def _threshold(given: float | None, stats: tuple[float | None, float | None, int, int]) -> float:
    if given is not None:
        return given
    mean, std, *_ = stats
    return (mean or 0.0) + (std or 0.0)


def detect(run: JobRun, corpus: Corpus, labeled: DataFrame) -> dict:
    """Steps 4-6: writes chunk_matches/, file_matches/, pages/, neighborhoods/, the badness figure."""
    spark, cfg, metrics = run.spark, run.cfg, run.metrics
    report: dict[str, Any] = {}
    names = corpus.docs.select("doc_key", "doc_id", "url")
    with metrics.stage(spark, "match", "exact file and chunk matches against L") as counts:
        chunk_matches, file_matches, pages = score_pages(labeled, corpus, cfg, counts)
        _, counts["chunk_matches"] = run.out.write_rows(
            chunk_matches.join(names, on="doc_key").select("doc_id", "url", "pos", F.lower(F.hex("sha1")).alias("sha1"))
            .orderBy("doc_id", "pos"), "chunk_matches")
        _, counts["file_matches"] = run.out.write_rows(
            file_matches.join(names, on="doc_key").select("doc_id", "url", F.lower(F.hex("sha1")).alias("sha1"))
            .orderBy("doc_id"), "file_matches")

    with metrics.stage(spark, "pages", "contains(L, f) per page, partial targets") as counts:
        pages = keep(pages, SPILL)
        stats = mean_plus_std(pages, "contains")
        page_thr = _threshold(cfg.partial_threshold, stats)
        report["page_threshold"] = page_thr
        counts["pages_scored"] = stats[2]
        counts["pages_without_chunks"] = stats[3]
        counts["contains_mean"] = round(stats[0] or 0.0, 6)
        counts["contains_std"] = round(stats[1] or 0.0, 6)
        counts["partial_threshold"] = round(page_thr, 6)
        written, row = run.out.write_counted(
            pages.join(corpus.docs.select("doc_key", "doc_id", "url", "host"), on="doc_key")
            .select("doc_id", "url", "host", "n_chunks", "n_stop", "n_labeled_chunks", "contains", "file_match",
                    F.coalesce(F.col("contains") > page_thr, F.lit(False)).alias("partial_target"))
            .orderBy("doc_id"), "pages", {"partial": F.sum(F.col("partial_target").cast("long"))})
        counts["partial_targets"] = int(row["partial"] or 0)
        report["top_pages"] = [r.asDict() for r in written.where("partial_target").orderBy(
            F.desc("contains"), F.desc("n_labeled_chunks"), "doc_id").limit(cfg.top).collect()]

    with metrics.stage(spark, "neighborhoods", "badness per URL-path prefix, bad neighborhoods") as counts:
        hoods = keep(neighborhood_badness(pages, corpus.paths), SPILL)
        stats = mean_plus_std(hoods, "badness")
        nb_thr = _threshold(cfg.badness_threshold, stats)
        report["badness_threshold"] = nb_thr
        counts["neighborhoods"] = stats[2]
        counts["badness_mean"] = round(stats[0] or 0.0, 6)
        counts["badness_std"] = round(stats[1] or 0.0, 6)
        counts["badness_threshold"] = round(nb_thr, 6)
        written, row = run.out.write_counted(hoods.withColumn("bad", F.col("badness") > nb_thr).orderBy("neighborhood"),
                                             "neighborhoods", {"bad": F.sum(F.col("bad").cast("long"))})
        counts["bad_neighborhoods"] = int(row["bad"] or 0)
        members = neighborhood_members(pages, corpus.paths).join(
            written.where("bad").select("neighborhood"), on="neighborhood", how="left_semi")
        run.out.write_table(members.join(names, on="doc_key")
                  .select("neighborhood", "doc_id", "url", "n_chunks", "n_labeled_chunks", "contains")
                  .orderBy("neighborhood", "doc_id"), "bad_neighborhood_pages")
        report["top_neighborhoods"] = [r.asDict() for r in written.where("bad").orderBy(
            F.desc("bad_chunks"), F.desc("badness"), "neighborhood").limit(cfg.top).collect()]
        hist = pd.DataFrame([r.asDict() for r in badness_histogram(written).collect()], columns=["bin", "n_neighborhoods"])
        hist["badness_from"] = hist["bin"] / BADNESS_BINS
        hist["badness_to"] = (hist["bin"] + 1) / BADNESS_BINS
        hist["cdf"] = hist["n_neighborhoods"].cumsum() / max(int(hist["n_neighborhoods"].sum()), 1)
        write_tsv(run.out, "badness_histogram.tsv", hist)
        if len(hist):
            run.out.write_bytes("badness.png", plots.badness_plot(
                hist["bin"], hist["n_neighborhoods"], BADNESS_BINS, nb_thr,
                f"badness of {stats[2]:,} neighborhoods: {counts['bad_neighborhoods']:,} bad (> {nb_thr:.3f})"))
        hoods.unpersist()
        pages.unpersist()
    return report


def site_flags(corpus: Corpus, labeled: DataFrame, site: str, max_pages: int) -> list[np.ndarray]:
    """Per page of the site (doc_id order): is each non-stop chunk in L? (bool arrays)."""
    pages = corpus.paths.where(F.array_contains("prefixes", site)).select("doc_key")
    chunks = corpus.chunks.join(pages, on="doc_key", how="left_semi")
    flagged = chunks.join(F.broadcast(labeled.where(F.col("kind") == "chunk").select("sha1").distinct()
                                      .withColumn("in_l", F.lit(True))), on="sha1", how="left")
    per_page = flagged.groupBy("doc_key").agg(
        F.sort_array(F.collect_list(F.struct("pos", F.coalesce("in_l", F.lit(False)).alias("in_l")))).alias("c"))
    n = per_page.count()
    if n > max_pages:
        raise ConfigError(f"--site {site} has {n:,} pages with chunks, more than --set max_site_pages={max_pages:,}")
    rows = per_page.orderBy("doc_key").collect()
    return [np.asarray([c["in_l"] for c in r["c"]], dtype=bool) for r in rows]


def mutate_eval(run: JobRun, stop: frozenset[bytes]) -> dict[str, Any]:
    """§5.3-5.4: mutate the site's pages and follow page and neighborhood badness (Figs. 4-10)."""
    spark, cfg, metrics = run.spark, run.cfg, run.metrics
    corpus = hash_corpus(run, stop)
    sets: dict[str, DataFrame] = {}
    blind, report = discover(run, corpus)
    with metrics.stage(spark, "labeled_sets", "L_expert = the site's own chunks; L_blind; L from --labeled") as counts:
        site_pages = corpus.paths.where(F.array_contains("prefixes", cfg.site)).select("doc_key")
        expert = keep(corpus.chunks.join(site_pages, on="doc_key", how="left_semi").select("sha1").distinct()
                      .select(F.lit("chunk").alias("kind"), "sha1"), SPILL)
        counts["site_pages"] = site_pages.count()
        if counts["site_pages"] == 0:
            raise ConfigError(f"--site {cfg.site}: no page of the input lies in this neighborhood "
                              "(give it as host/ or host/a/, without scheme)")
        sets["expert"] = expert
        sets["blind"] = blind
        if cfg.labeled is not None:
            sets["labeled"], _, _ = resolve_labeled(run, corpus, stop, "labeled_informed")
        for name, frame in sets.items():
            counts[f"L_{name}_chunks"] = frame.where(F.col("kind") == "chunk").count()
    thresholds: dict[str, tuple[float, float]] = {}
    frames = []
    cpp = 0.0  # average chunks per page of the site; the same for every labeled set
    for name, labeled in sets.items():
        with metrics.stage(spark, f"mutate_{name}", f"thresholds on the corpus and mutations with L_{name}") as counts:
            _, _, pages = score_pages(labeled, corpus, cfg, counts)
            pages = keep(pages, SPILL)
            page_thr = _threshold(cfg.partial_threshold, mean_plus_std(pages, "contains"))
            nb_thr = _threshold(cfg.badness_threshold, mean_plus_std(neighborhood_badness(pages, corpus.paths), "badness"))
            pages.unpersist()
            thresholds[name] = (page_thr, nb_thr)
            counts["page_threshold"] = round(page_thr, 6)
            counts["badness_threshold"] = round(nb_thr, 6)
            flags = site_flags(corpus, labeled, cfg.site, cfg.max_site_pages)
            cpp = float(np.mean([len(f) for f in flags])) if flags else 0.0
            counts["cpp"] = round(cpp, 3)
            grid = mutation_grid(cpp, cfg.max_mutations_cpp, cfg.mutation_steps)
            for op in cfg.mutations:
                frame = run_experiment(flags, op, grid, cfg.runs, cfg.seed, page_thr)
                frame.insert(0, "labeled_set", name)
                frame["mutations_per_cpp"] = frame["mutations"] / cpp if cpp else 0.0
                frame["page_threshold"] = page_thr
                frame["badness_threshold"] = nb_thr
                frame["page_detected"] = frame["page_badness"] > page_thr
                frame["neighborhood_detected"] = frame["neighborhood_badness"] > nb_thr
                frames.append(frame)
    results = pd.concat(frames, ignore_index=True)
    write_tsv(run.out, "mutate_eval.tsv", results)
    for op in cfg.mutations:
        run.out.write_bytes(f"mutate_{op}.png", plots.mutation_plot(results, op, thresholds, cpp, cfg.site))
    report["tolerance"] = tolerance(results)
    report["thresholds"] = thresholds
    report["cpp"] = cpp
    expert.unpersist()
    corpus.unpersist()
    return report


def tolerance(results: pd.DataFrame) -> pd.DataFrame:
    """Per (labeled set, mutation): the largest mutations/cpp up to which every point is detected.

    None when even the unmutated site is not detected; the paper's "handles k x cpp mutations".
    """
    rows = []
    for (name, op), group in results.groupby(["labeled_set", "mutation"], sort=True):
        group = group.sort_values("mutations")

        def until(col: str, group: pd.DataFrame = group) -> float | None:
            ok = group[col].to_numpy(bool)
            n = len(ok) if ok.all() else int(np.argmin(ok))
            return None if n == 0 else float(group["mutations_per_cpp"].iloc[n - 1])

        rows.append({"labeled_set": name, "mutation": op, "page_tolerates_cpp": until("page_detected"),
                     "neighborhood_tolerates_cpp": until("neighborhood_detected")})
    return pd.DataFrame(rows)



def _short(text: Any, n: int = 70) -> str:
    s = str(text).replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "…"


def summary_lines(report: dict[str, Any], cfg: ReuseConfig) -> list[str]:
    """The summary after the stages: the top rows of the step's tables."""
    lines: list[str] = []
    for kind in ("chunk", "file"):
        top = report.get(f"top_{kind}s")
        if top is not None and len(top):
            lines.append(f"most frequent {kind}s (occurrences, documents, example):")
            for row in top.itertuples():
                lines.append(f"  {row.rank:>4}. {row.occurrences:>8,} {row.n_docs:>7,}  {_short(row.text)!r}")
    if "labeled_source" in report:
        lines.append(f"labeled set: {report['labeled_source']}")
    if report.get("top_pages") is not None:
        lines.append(f"top partial targets (contains > {report['page_threshold']:.3f}):")
        for r in report["top_pages"]:
            lines.append(f"  {r['contains']:.3f}  {r['n_labeled_chunks']:>4}/{r['n_chunks']:<4}  {r['url']}")
        if not report["top_pages"]:
            lines.append(" ")
    if report.get("top_neighborhoods") is not None:
        lines.append(f"top bad neighborhoods by bad chunks (badness > {report['badness_threshold']:.3f}):")
        for r in report["top_neighborhoods"]:
            lines.append(f"  {r['badness']:.3f}  {r['bad_chunks']:>6,} bad chunks  {r['n_pages']:>5,} pages  "
                         f"{r['neighborhood']}")
        if not report["top_neighborhoods"]:
            lines.append(" ")
    if report.get("tolerance") is not None:
        lines.append(f"mutations tolerated on {cfg.site} (mutations per page / cpp, cpp = {report['cpp']:.1f}):")
        for r in report["tolerance"].itertuples():
            page = "-" if r.page_tolerates_cpp is None else f"{r.page_tolerates_cpp:.2f}"
            hood = "-" if r.neighborhood_tolerates_cpp is None else f"{r.neighborhood_tolerates_cpp:.2f}"
            lines.append(f"  L_{r.labeled_set:<8} {r.mutation:<7} page {page:>6}  neighborhood {hood:>6}")
    return lines


class ReuseJob(Job[ReuseConfig]):
    """The steps of ``quiltdetect reuse``; each subclass is one step. Their summaries come from
    what the run computed (thresholds, top objects), so a rerun recomputes (docs/ is reused)."""

    state_name = "reuse"
    config_class = ReuseConfig
    report_complete = False
    step: str

    def validate(self, *, need_inputs: bool = True) -> None:
        self.cfg.validate(need_io=need_inputs)
        try:
            self.stop = frozenset(stop_hashes(self.cfg.stop_chunks, builtin=self.cfg.builtin_stop_chunks))
        except OSError as exc:
            raise ConfigError(f"--stop-chunks: cannot read {exc.filename}: {exc.strerror}") from exc

    def key(self) -> Any:
        return {"command": self.step, "stop": sorted(self.stop)}

    def begin(self, run: JobRun) -> None:
        run.metrics.stages["stop_chunks"] = {"stop_hashes": len(self.stop), "seconds": 0.0}

    def report(self, run: JobRun) -> dict[str, Any]:
        return self.found

    def details(self, result: JobResult) -> list[str]:
        return summary_lines(result.report, self.cfg)


class DiscoverJob(ReuseJob):
    """``reuse discover``: blind discovery only: recursion_errors/, labeled/, frequency tables,
    plots and the top objects."""

    name = "reuse discover"
    step = "discover"
    tables = ("recursion_errors", "labeled", "frequency")

    def compute(self, run: JobRun) -> None:
        corpus = hash_corpus(run, self.stop)
        _, self.found = discover(run, corpus)
        corpus.unpersist()


class DetectJob(ReuseJob):
    """``reuse detect``: pages and bad neighborhoods that contain a given, informed or blind
    labeled set."""

    name = "reuse detect"
    step = "detect"
    tables = ("recursion_errors", "labeled", "chunk_matches", "file_matches", "pages", "neighborhoods",
              "bad_neighborhood_pages")

    def compute(self, run: JobRun) -> dict[str, Any]:
        corpus = hash_corpus(run, self.stop)
        labeled, source, self.found = resolve_labeled(run, corpus, self.stop)
        self.found["labeled_source"] = source
        self.found.update(detect(run, corpus, labeled))
        corpus.unpersist()
        return {"parameters": {"labeled": source, "partial_threshold": self.found["page_threshold"],
                               "badness_threshold": self.found["badness_threshold"]}}


class MutateEvalJob(ReuseJob):
    """``reuse mutate-eval``: how detection of one site holds up as its pages are mutated."""

    name = "reuse mutate-eval"
    step = "mutate-eval"
    tables = ("recursion_errors", "labeled", "frequency")

    def validate(self, *, need_inputs: bool = True) -> None:
        self.cfg.validate(need_io=need_inputs, need_site=True)
        super().validate(need_inputs=need_inputs)

    def compute(self, run: JobRun) -> None:
        self.found = mutate_eval(run, self.stop)


REUSE_JOBS: dict[str, type[ReuseJob]] = {job.step: job for job in (DiscoverJob, DetectJob, MutateEvalJob)}
