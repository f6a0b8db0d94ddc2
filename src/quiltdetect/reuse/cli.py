"""``quiltdetect reuse discover|detect|mutate-eval`` (and ``spark-submit jobs/content_reuse.py``)."""

from __future__ import annotations

import argparse
from typing import Any

from quiltdetect.common.config import INPUT_FORMATS, show_defaults
from quiltdetect.options import add_io_options, config_from_args, start_job
from quiltdetect.reuse.config import ReuseConfig

COMMON = ("stop_chunks", "builtin_stop_chunks", "max_component_repeats", "max_prefix_depth", "top")
DISCOVER = ("chunk_threshold", "file_threshold", "top_objects")
DETECT = ("labeled", "labeled_format", "min_chunk_chars", "partial_threshold", "badness_threshold")
MUTATE = ("site", "mutations", "max_mutations_cpp", "runs", "seed")
OPTIONS = {"discover": COMMON + DISCOVER, "detect": COMMON + DISCOVER + DETECT,
           "mutate-eval": COMMON + DISCOVER + DETECT + MUTATE}


def _common(p: argparse.ArgumentParser) -> None:
    add_io_options(p)
    p.add_argument("--stop-chunks", action="append", metavar="FILE",
                   help="extra stop-chunk file (one chunk per line, see reuse/data/stop_chunks.txt); repeatable")
    p.add_argument("--no-builtin-stop-chunks", dest="builtin_stop_chunks", action="store_false", default=None,
                   help="do not use the stop-chunk list shipped with quiltdetect")
    p.add_argument("--max-component-repeats", type=int,
                   help="a URL whose path repeats a component more often is a recursion error")
    p.add_argument("--max-prefix-depth", type=int,
                   help="a URL whose neighborhood is deeper (host = 1) is a recursion error")
    p.add_argument("--top", type=int, help="rows shown in the summary")
    p.add_argument("--chunk-threshold", type=int,
                   help="blind discovery labels chunks occurring more often than this")
    p.add_argument("--file-threshold", type=int,
                   help="blind discovery labels files occurring more often than this")
    p.add_argument("--top-objects", type=int,
                   help="most frequent files/chunks written with an example text")


def _detect(p: argparse.ArgumentParser) -> None:
    p.add_argument("--labeled", metavar="PATH",
                   help="a discovery output directory, or a corpus whose content is sought (informed); "
                        "default: blind discovery on the input")
    p.add_argument("--labeled-format", choices=INPUT_FORMATS, help="input format of a labeled corpus")
    p.add_argument("--min-chunk-chars", type=int,
                   help="labeled-corpus chunks shorter than this many characters are left out")
    p.add_argument("--partial-threshold", type=float,
                   help="contains above this makes a partial target (default: mean + std over pages)")
    p.add_argument("--badness-threshold", type=float,
                   help="badness above this makes a bad neighborhood (default: mean + std over neighborhoods)")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``reuse`` command with its three subcommands."""
    reuse = subparsers.add_parser("reuse", help="content reuse: chunk hashing, discovery, bad neighborhoods "
                                                "(Ardi & Heidemann 2014)")
    sub = reuse.add_subparsers(dest="reuse_command", required=True, metavar="STEP")
    discover = sub.add_parser("discover", help="blind discovery: the labeled set of frequent files and chunks")
    _common(discover)
    detect = sub.add_parser("detect", help="pages and bad neighborhoods that contain a labeled set")
    _common(detect)
    _detect(detect)
    mutate = sub.add_parser("mutate-eval", help="robustness of detection to mutated pages (§5.3-5.4)")
    _common(mutate)
    _detect(mutate)
    mutate.add_argument("--site", help="the neighborhood to mutate, e.g. copies.example.org/")
    mutate.add_argument("--mutations", help="comma-separated: add,delete,modify")
    mutate.add_argument("--max-mutations-cpp", type=float,
                        help="x axis up to this many times the average chunks per page")
    mutate.add_argument("--runs", type=int, help="runs averaged per point")
    mutate.add_argument("--seed", type=int, help="random seed of the mutations")
    for parser in (discover, detect, mutate):
        show_defaults(parser, ReuseConfig)
    return reuse


def reuse_config(args: argparse.Namespace) -> ReuseConfig:
    cfg = config_from_args(ReuseConfig, args, OPTIONS[args.reuse_command])
    return cfg.validate(need_site=args.reuse_command == "mutate-eval")


def run(args: argparse.Namespace, *, local: bool) -> int:
    """Build the session, run the chosen step, print the summary."""
    from quiltdetect.reuse import job

    cfg = reuse_config(args)
    command = args.reuse_command
    spark = start_job(f"quiltdetect-reuse-{command}", cfg, local=local)
    runner = {"discover": job.run_discover, "detect": job.run_detect, "mutate-eval": job.run_mutate_eval}[command]
    result = runner(spark, cfg)
    print(format_summary(result, cfg), flush=True)
    return 0


def _short(text: Any, n: int = 70) -> str:
    s = str(text).replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "…"


def format_summary(result: Any, cfg: ReuseConfig) -> str:
    """The end-of-run summary: counts per stage, then the top rows of the step's tables."""
    report = result.report
    lines = [f"quiltdetect reuse {result.command} -> {result.output}", "stages:", *result.metrics.summary_lines()]
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
    return "\n".join(lines)
