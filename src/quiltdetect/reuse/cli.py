"""``quiltdetect reuse discover|detect|mutate-eval`` (and ``spark-submit jobs/content_reuse.py``)."""

from __future__ import annotations

import argparse
from typing import Any

from quiltdetect.common.config import INPUT_FORMATS, show_defaults
from quiltdetect.options import add_io_options, config_from_args, run_job
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
    from quiltdetect.reuse.job import REUSE_JOBS

    return run_job(REUSE_JOBS[args.reuse_command], reuse_config(args), local=local)
