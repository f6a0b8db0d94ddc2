"""``quiltdetect phrases``: popular phrases, covering sets and monster sites (Fetterly 2005)."""

from __future__ import annotations

import argparse
from typing import Any

from quiltdetect.common.config import show_defaults
from quiltdetect.options import add_config_options, add_io_options, config_from_args, run_job
from quiltdetect.phrases.config import PhrasesConfig


def add_parser(subparsers: Any) -> None:
    """Register ``phrases`` on the top-level subparsers."""
    p = subparsers.add_parser(
        "phrases", help="phrase-level duplication: popular phrases, covering sets, monster sites (Fetterly 2005)",
        description="Sample each page's circular k-word phrases with m min-hash selectors, collapse "
                    "near-duplicates, and report popular phrases (Table 1), their histograms (Figs. 1-2), greedy "
                    "covering sets (Figs. 3-7) and per-host statistics with monster candidates (Figs. 8-9). "
                    "Defaults: conf/phrases.yaml.")
    add_io_options(p)
    add_config_options(p, PhrasesConfig, "phrases")
    show_defaults(p, PhrasesConfig)


def phrases_config(args: argparse.Namespace) -> PhrasesConfig:
    """Defaults <- --config <- options <- --set."""
    return config_from_args(PhrasesConfig, args).validate()


def run(args: argparse.Namespace, *, local: bool) -> int:
    """Build the session, run the phrase job, print the summary."""
    from quiltdetect.phrases.job import PhrasesJob

    return run_job(PhrasesJob, phrases_config(args), local=local)
