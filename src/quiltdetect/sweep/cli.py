"""``quiltdetect sweep``: lists or ranges of k, m, c, θ (and φ) -> Table 1, Fig. 3, report."""

from __future__ import annotations

import argparse

from quiltdetect.common.config import show_defaults
from quiltdetect.options import add_config_options, add_io_options, config_from_args, run_job
from quiltdetect.sweep.config import SweepConfig


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``sweep`` with its options."""
    p = subparsers.add_parser("sweep", help="sweep (k, m, c, θ) in one pass per (k, m): Table 1, Fig. 3, report")
    add_io_options(p)
    add_config_options(p, SweepConfig, "sweep")
    show_defaults(p, SweepConfig)
    return p


def sweep_config(args: argparse.Namespace) -> SweepConfig:
    """The sweep's configuration from its command line."""
    return config_from_args(SweepConfig, args).validate()


def run(args: argparse.Namespace, *, local: bool) -> int:
    """Build the session, run the sweep, print Table 1."""
    from quiltdetect.sweep.job import SweepJob

    return run_job(SweepJob, sweep_config(args), local=local)
