"""The sweep job: one pass per (k, m), then every (θ, c, φ) from per-document outcomes.

Writes ``sweep.csv`` (every grid point), ``table1.csv`` (the lines through the pivot, the
paper's Table 1), ``outcomes/k=K/m=M/`` (per-document patchfrac and cover sizes), the four
plots of Fig. 3 and ``report.html``, plus config.yaml and metrics.json.
"""

from __future__ import annotations

import logging
from itertools import groupby
from typing import Any

import numpy as np
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.common.caching import ON_DISK, keep
from quiltdetect.common.csvsafe import safe_cell
from quiltdetect.lifecycle import Job, JobResult, JobRun
from quiltdetect.quilts.gram_table import gram_bucket_counts
from quiltdetect.quilts.patch_grams import patch_counts
from quiltdetect.sweep.config import SweepConfig
from quiltdetect.sweep.grid import grid_breaks, grid_counts
from quiltdetect.sweep.outcomes import (
    bucket_counts,
    cell_counts,
    doc_outcomes,
    gram_pass,
    pass_table,
    pass_tables,
    patch_pass,
    transition_counts,
    word_pass,
)

log = logging.getLogger(__name__)

COLUMNS = ["k", "m", "c", "theta", "phi", "quilted", "avg_sources", "attributed", "m_breaks"]


def grid_rows(
    k: int, m: int, cells: list, transitions: list | None, cfg: SweepConfig
) -> list[dict[str, Any]]:
    """The table rows of one (k, m) pass: every (c, θ, φ).

    ``quilted`` counts (k, m, c, θ)-quilted pages (minus attributed ones with
    ``exclude_attributed``); ``attributed`` the quilted pages that link to a source;
    ``m_breaks`` the pages quilted at the previous m of this k but not at this m (Theorem 3
    can fail under the greedy cover; None for the first m).
    """
    nt, nc = len(cfg.thetas), len(cfg.cs)
    rows = []
    for phi_i, phi in enumerate(cfg.phis):
        every = [(t, c, n, s) for p, t, c, _a, n, s in cells if p == phi_i]
        linked = [(t, c, n, s) for p, t, c, a, n, s in cells if p == phi_i and a]
        count, sources = grid_counts(every, nt, nc)
        n_att, s_att = grid_counts(linked, nt, nc)
        if cfg.exclude_attributed:
            count, sources = count - n_att, sources - s_att
        breaks = None
        if transitions is not None:
            breaks = grid_breaks([r[1:] for r in transitions if r[0] == phi_i], nt, nc)
        for ti, theta in enumerate(cfg.thetas):
            for ci, c in enumerate(cfg.cs):
                n = int(count[ti, ci])
                rows.append({
                    "k": k, "m": m, "c": c, "theta": theta, "phi": phi, "quilted": n,
                    "avg_sources": round(float(sources[ti, ci]) / n, 2) if n else None,
                    "attributed": int(n_att[ti, ci]),
                    "m_breaks": None if breaks is None else int(breaks[ti, ci]),
                })
    return rows


def sweep(run: JobRun, docs: DataFrame) -> list[dict[str, Any]]:
    """Every pass of the sweep; writes outcomes/ and returns the table rows."""
    spark, cfg, metrics = run.spark, run.cfg, run.metrics
    rows: list[dict[str, Any]] = []
    n = bucket_counts(docs)
    with metrics.stage(spark, "words", "word hashes per document, shared by every k") as counts:
        words = word_pass(docs)
        row = words.agg(F.count(F.lit(1)), F.sum(F.length("hashes"))).first()
        counts["documents"], counts["words"] = int(row[0]), int(row[1] or 0) // 8
    for k, group in groupby(cfg.passes(), key=lambda km: km[0]):
        ms = [m for _, m in group]
        with metrics.stage(spark, f"grams_k{k}", f"{k}-gram sets per document, as gram buckets") as counts:
            grams = gram_pass(words, k, cfg, n)
            counts["documents_with_grams"], counts["doc_grams"] = gram_bucket_counts(grams, n)
        shared = None
        if len(ms) > 1:  # the patch pairs of every m of this k, found once
            largest = max(ms)
            with metrics.stage(spark, f"patch_k{k}", f"patch pairs at m={largest} with their dfs, "
                                                     f"for every m of k={k}") as counts:
                shared = keep(patch_pass(docs, grams, n, largest, cfg, with_df=True), ON_DISK)
                counts["distinct_grams"], counts["patch_grams"], counts["doc_patch_grams"] = patch_counts(shared)
            grams.unpersist()
        previous = None
        for m in ms:
            with metrics.stage(spark, f"pass_k{k}_m{m}", f"patchfrac and greedy covers, k={k} m={m}") as counts:
                if shared is None:
                    doc_table = keep(patch_pass(docs, grams, n, m, cfg), ON_DISK)
                else:
                    doc_table = pass_table(shared, m, largest)
                fractions, covers = pass_tables(doc_table, n, cfg)
                outcomes, written = run.out.write_counted(
                    doc_outcomes(docs, fractions, covers, cfg).orderBy("doc_id"), f"outcomes/k={k}/m={m}",
                    {"covered": F.sum((F.col("n_sources")[0] > 0).cast("long"))})
                for frame in (fractions, covers) if shared is not None else (doc_table, fractions, covers):
                    frame.unpersist()
                cells = cell_counts(outcomes, cfg)
                transitions = transition_counts(previous, outcomes, cfg) if previous is not None else None
                new = grid_rows(k, m, cells, transitions, cfg)
                rows += new
                counts["covered_documents"] = int(written["covered"] or 0)
                pivot = [r for r in new if r["c"] == cfg.pivot[2] and r["theta"] == cfg.pivot[3]]
                counts["quilted_at_pivot_c_theta"] = pivot[0]["quilted"] if pivot else None
                previous = outcomes
        grams.unpersist()
        if shared is not None:
            shared.unpersist()
    words.unpersist()
    return rows


def table1(rows: list[dict[str, Any]], cfg: SweepConfig) -> dict[str, list[dict[str, Any]]]:
    """The four lines through the pivot (φ = smallest φ): the paper's Table 1 and Fig. 3."""
    pk, pm, pc, pt = cfg.pivot
    phi = cfg.phis[0]
    at = {(r["k"], r["m"], r["c"], r["theta"]): r for r in rows if r["phi"] == phi}
    lines = {
        "k": [at[(k, pm, pc, pt)] for k in cfg.ks if (k, pm, pc, pt) in at],
        "m": [at[(pk, m, pc, pt)] for m in cfg.ms if (pk, m, pc, pt) in at],
        "c": [at[(pk, pm, c, pt)] for c in cfg.cs if (pk, pm, c, pt) in at],
        "theta": [at[(pk, pm, pc, t)] for t in cfg.thetas if (pk, pm, pc, t) in at],
    }
    return lines


def csv_text(rows: list[dict[str, Any]], columns: list[str] = COLUMNS) -> str:
    """Rows as CSV (empty cells for None). The cells are numbers and parameter names; a text
    cell a spreadsheet would run would still get a leading ' (common/csvsafe.py)."""
    out = [",".join(columns)]  # read back by rows_from_csv
    for r in rows:
        out.append(",".join("" if r[c] is None else str(safe_cell(r[c])) for c in columns))
    return "\n".join(out) + "\n"


def rows_from_csv(text: str) -> list[dict[str, Any]]:
    """The rows of a sweep.csv written by ``csv_text`` (ints stay ints, empty cells are None)."""
    header, *lines = text.strip().split("\n")
    columns = header.split(",")
    floats = {"theta", "phi", "avg_sources"}
    rows = []
    for line in lines:
        row: dict[str, Any] = {}
        for name, cell in zip(columns, line.split(","), strict=True):
            row[name] = None if cell == "" else (float(cell) if name in floats else int(cell))
        rows.append(row)
    return rows


def _decreases(rows: list[dict[str, Any]], along: str, fixed: tuple[str, ...], rising: bool) -> int:
    """Adjacent grid points along one parameter where the count rises (or falls)."""
    series: dict[tuple, list[tuple[float, int]]] = {}
    for r in rows:
        series.setdefault(tuple(r[f] for f in fixed), []).append((r[along], r["quilted"]))
    bad = 0
    for points in series.values():
        points.sort()
        bad += sum(1 for (_, a), (_, b) in zip(points, points[1:], strict=False) if (b > a if rising else b < a))
    return bad


def monotonicity_summary(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Adjacent grid points where a count rises with θ or c (never, by Theorems 1-2) or falls
    with m, and the pages behind Theorem 3's breaks (greedy covers can shrink as m grows)."""
    breaks = [r["m_breaks"] for r in rows if r["m_breaks"]]
    return {
        "theta_violations": _decreases(rows, "theta", ("k", "m", "c", "phi"), rising=True),
        "c_violations": _decreases(rows, "c", ("k", "m", "theta", "phi"), rising=True),
        "m_count_decreases": _decreases(rows, "m", ("k", "c", "theta", "phi"), rising=False),
        "m_break_points": len(breaks),
        "m_break_pages_max": int(np.max(breaks)) if breaks else 0,
    }


class SweepJob(Job[SweepConfig]):
    """``quiltdetect sweep``: every (k, m, c, θ, φ) of a grid in one pass per (k, m)."""

    name = state_name = "sweep"
    config_class = SweepConfig
    tables = ("outcomes",)
    rows: list[dict[str, Any]] | None = None

    def compute(self, run: JobRun) -> dict[str, Any]:
        from quiltdetect.sweep import report

        cfg = self.cfg
        self.rows = rows = sweep(run, run.docs())
        lines = table1(rows, cfg)
        run.out.write_text("sweep.csv", csv_text(rows))
        run.out.write_text("table1.csv", csv_text([dict(r, vary=name) for name, line in lines.items() for r in line],
                                                  ["vary", *COLUMNS]))
        checks = monotonicity_summary(rows)
        with run.metrics.stage(run.spark, "report", "Fig. 3 plots and report.html") as counts:
            counts["files"] = report.write_report(run.out, cfg, lines, checks)
        return {"parameters": {"passes": cfg.passes()}, "monotonicity": checks}

    def report(self, run: JobRun) -> dict[str, Any]:
        """Every grid point (from sweep.csv when the run had completed before)."""
        return {"rows": self.rows if self.rows is not None else rows_from_csv(run.out.read_text("sweep.csv") or "")}

    def headline(self, result: JobResult) -> str:
        return (f"sweep (pivot k,m,c,theta = {self.cfg.pivot}, {len(self.cfg.passes())} passes, "
                f"{len(result.report['rows'])} grid points)")

    def details(self, result: JobResult) -> list[str]:
        """Table 1 (the lines through the pivot) and the monotonicity checks."""
        rows = result.report["rows"]
        lines = ["Table 1 (one parameter varied around the pivot):",
                 f"  {'vary':<6}{'k':>4}{'m':>5}{'c':>4}{'theta':>7}{'quilted':>10}{'avg src':>9}{'attrib':>8}{'m brk':>7}"]
        for name, line in table1(rows, self.cfg).items():
            for r in line:
                avg = "" if r["avg_sources"] is None else f"{r['avg_sources']:.2f}"
                brk = "" if r["m_breaks"] is None else str(r["m_breaks"])
                lines.append(f"  {name:<6}{r['k']:>4}{r['m']:>5}{r['c']:>4}{r['theta']:>7.2f}{r['quilted']:>10}"
                             f"{avg:>9}{r['attributed']:>8}{brk:>7}")
        lines.append("monotonicity: " + ", ".join(f"{k}={v}" for k, v in monotonicity_summary(rows).items()))
        return lines
