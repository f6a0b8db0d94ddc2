"""``quiltdetect ingest``: the argument parser and runner."""

from __future__ import annotations

import argparse

from quiltdetect.common.config import JobConfig, show_defaults
from quiltdetect.options import add_io_options, config_from_args, run_job


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("ingest", help="read a crawl once into the document table (docs/) that every job can read")
    add_io_options(parser)
    parser.add_argument("--write-rejects", action="store_true", default=None,
                        help="also write skipped records with their reason to <output>/rejects/")
    show_defaults(parser, JobConfig)  # ingest has the shared settings only (IngestConfig adds none)


def run(args: argparse.Namespace, *, local: bool) -> int:
    from quiltdetect.doctable.job import IngestConfig, IngestJob

    return run_job(IngestJob, config_from_args(IngestConfig, args, ("write_rejects",)).validate(), local=local)
