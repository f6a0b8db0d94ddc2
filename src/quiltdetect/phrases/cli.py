"""``quiltdetect phrases``: popular phrases, covering sets and monster sites (Fetterly 2005)."""

from __future__ import annotations

import argparse
from typing import Any

from quiltdetect.common.config import show_defaults
from quiltdetect.options import add_io_options, config_from_args, run_job
from quiltdetect.phrases.config import COVER_SAMPLES, MONSTER_ORDERS, SERVERS, PhrasesConfig

OPTIONS = ("k", "shingles", "popular", "collapse_near_duplicates", "near_duplicate_b", "server", "cover_sample",
           "cover_sample_size", "cover_seed", "cover_min_popular", "cover_servers", "min_host_pages",
           "monster_min_mean", "monster_max_std", "monster_order", "top")


def add_parser(subparsers: Any) -> None:
    """Register ``phrases`` on the top-level subparsers."""
    p = subparsers.add_parser(
        "phrases", help="phrase-level duplication: popular phrases, covering sets, monster sites (Fetterly 2005)",
        description="Sample each page's circular k-word phrases with m min-hash selectors, collapse "
                    "near-duplicates, and report popular phrases (Table 1), their histograms (Figs. 1-2), greedy "
                    "covering sets (Figs. 3-7) and per-host statistics with monster candidates (Figs. 8-9). "
                    "Defaults: conf/phrases.yaml.")
    add_io_options(p)
    p.add_argument("-k", type=int, help="phrase length in words")
    p.add_argument("--shingles", type=int, metavar="M", help="sampled shingles (min-hash selectors) per page")
    p.add_argument("--popular", type=int, metavar="N", help="a shingle is popular in at least N documents")
    p.add_argument("--no-collapse", dest="collapse_near_duplicates", action="store_false", default=None,
                   help="do not collapse near-duplicates first (default: collapse)")
    p.add_argument("--near-duplicate-b", type=int, metavar="B",
                   help="near-duplicates agree in at least B of 6 supershingles")
    p.add_argument("--server", choices=SERVERS,
                   help="foreign preference of covering sets: donors on another host/domain/ip first")
    p.add_argument("--cover-sample", choices=COVER_SAMPLES,
                   help="uniform: N documents at random; per_count: N per popular count (Figs. 3-4); all")
    p.add_argument("--cover-sample-size", type=int, metavar="N", help="documents in the covering-set sample")
    p.add_argument("--cover-seed", type=int, help="seed of the covering-set sample")
    p.add_argument("--cover-min-popular", type=int, metavar="N",
                   help="sample documents with at least N popular shingles")
    p.add_argument("--cover-server", dest="cover_servers", action="append", metavar="SERVER",
                   help="sample only documents on this server (repeatable; Fig. 7)")
    p.add_argument("--min-host-pages", type=int, metavar="N", help="host statistics for hosts with >= N pages")
    p.add_argument("--monster-min-mean", type=float, help="monster candidates: mean popular shingles >= this")
    p.add_argument("--monster-max-std", type=float, help="monster candidates: standard deviation < this")
    p.add_argument("--monster-order", choices=MONSTER_ORDERS,
                   help="rank candidates by score = pages * (mean - std) / m, or by pages as the paper")
    p.add_argument("--top", type=int, help="rows of each output shown in the summary")
    show_defaults(p, PhrasesConfig)


def phrases_config(args: argparse.Namespace) -> PhrasesConfig:
    """Defaults <- --config <- options <- --set."""
    return config_from_args(PhrasesConfig, args, OPTIONS).validate()


def run(args: argparse.Namespace, *, local: bool) -> int:
    """Build the session, run the phrase job, print the summary."""
    from quiltdetect.phrases.job import PhrasesJob

    return run_job(PhrasesJob, phrases_config(args), local=local)
