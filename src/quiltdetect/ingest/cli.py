"""``quiltdetect ingest``: the argument parser and runner."""

from __future__ import annotations

import argparse

from quiltdetect.common.config import JobConfig, show_defaults
from quiltdetect.options import add_config_options, add_io_options, config_from_args, run_job


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("ingest", help="read a crawl once into the document table (docs/) that every job can read")
    add_io_options(parser)
    add_config_options(parser, JobConfig, "ingest")
    show_defaults(parser, JobConfig)  # ingest has the shared settings only (IngestConfig adds none)


def run(args: argparse.Namespace, *, local: bool) -> int:
    from quiltdetect.ingest.job import IngestConfig, IngestJob

    return run_job(IngestJob, config_from_args(IngestConfig, args).validate(), local=local)
