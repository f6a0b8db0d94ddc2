"""``quiltdetect reuse discover|detect|mutate-eval`` (and ``spark-submit jobs/content_reuse.py``)."""

from __future__ import annotations

import argparse
from typing import Any

from quiltdetect.common.config import show_defaults
from quiltdetect.options import add_config_options, add_io_options, config_from_args, run_job
from quiltdetect.reuse.config import ReuseConfig


def _options(p: argparse.ArgumentParser, step: str) -> None:
    """The options of ``reuse <step>``: those ReuseConfig's declarations offer it (reuse/config.py)."""
    add_io_options(p)
    add_config_options(p, ReuseConfig, f"reuse {step}")
    show_defaults(p, ReuseConfig)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``reuse`` command with its three subcommands."""
    reuse = subparsers.add_parser("reuse", help="content reuse: chunk hashing, discovery, bad neighborhoods "
                                                "(Ardi & Heidemann 2014)")
    sub = reuse.add_subparsers(dest="reuse_command", required=True, metavar="STEP")
    discover = sub.add_parser("discover", help="blind discovery: the labeled set of frequent files and chunks")
    _options(discover, "discover")
    detect = sub.add_parser("detect", help="pages and bad neighborhoods that contain a labeled set")
    _options(detect, "detect")
    mutate = sub.add_parser("mutate-eval", help="robustness of detection to mutated pages (§5.3-5.4)")
    _options(mutate, "mutate-eval")
    return reuse


def reuse_config(args: argparse.Namespace) -> ReuseConfig:
    cfg = config_from_args(ReuseConfig, args)
    return cfg.validate(need_site=args.reuse_command == "mutate-eval")


def run(args: argparse.Namespace, *, local: bool) -> int:
    """Build the session, run the chosen step, print the summary."""
    from quiltdetect.reuse.job import REUSE_JOBS

    return run_job(REUSE_JOBS[args.reuse_command], reuse_config(args), local=local)
