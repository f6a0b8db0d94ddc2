"""The ``quiltdetect`` console command and the shared argument handling of jobs/*.py.

The same options work for ``quiltdetect quilts ...`` (local mode, Spark started here) and for
``spark-submit jobs/find_quilts.py ...`` (master and resources from spark-submit).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import TypeVar

from quiltdetect import __version__
from quiltdetect.common.config import (
    ConfigError,
    merge_settings,
    show_defaults,
)
from quiltdetect.ingest import cli as ingest_cli
from quiltdetect.mwo import cli as mwo_cli
from quiltdetect.neardup import cli as neardup_cli
from quiltdetect.options import (  # noqa: F401
    IO_OPTIONS,
    add_io_options,
    config_files,
    config_from_args,
    start_job,
)
from quiltdetect.phrases import cli as phrases_cli
from quiltdetect.quilts.config import FOREIGN_CHOICES, QuiltConfig
from quiltdetect.reuse import cli as reuse_cli
from quiltdetect.review import cli as review_cli
from quiltdetect.sweep import cli as sweep_cli

log = logging.getLogger("quiltdetect")
T = TypeVar("T")


def add_quilt_options(parser: argparse.ArgumentParser) -> None:
    """The quilt parameters (k, m, c, θ) and the foreign rule."""
    parser.add_argument("-k", type=int, help="gram length in words")
    parser.add_argument("-m", type=int, help="a patch gram occurs in at most m documents")
    parser.add_argument("-c", type=int, help="a quilt has at least c source documents")
    parser.add_argument("--theta", type=float, help="a quilt's patch fraction is at least theta")
    parser.add_argument("--foreign", choices=FOREIGN_CHOICES,
                        help="sources must live on another host / registered domain / IP")
    parser.add_argument("--count-occurrences", action="store_true", default=None,
                        help="patch fraction over gram occurrences, as the paper's figure 5 (default: sets)")
    parser.add_argument("--phi", type=float,
                        help="keep only sources that covered >= phi * |pgrams(d)| grams when picked, then re-judge c")
    parser.add_argument("--exclude-attributed", action="store_true", default=None,
                        help="drop quilts that link to one of their sources (aggregators crediting them)")
    parser.add_argument("--top", type=int, help="quilts shown in the summary")
    parser.add_argument("--collapse-near-duplicates", action="store_true", default=None,
                        help="keep one page per near-duplicate cluster first, as Fetterly 2005")


def quilt_config(args: argparse.Namespace) -> QuiltConfig:
    """The quilt job's configuration from its command line."""
    options = ("k", "m", "c", "theta", "foreign", "count_occurrences", "phi", "exclude_attributed", "top",
               "collapse_near_duplicates")
    return config_from_args(QuiltConfig, args, options).validate()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quiltdetect",
        description="Find reused content in web crawls on Apache Spark: quilted pages and their sources.",
    )
    parser.add_argument("--version", action="version", version=f"quiltdetect {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress at INFO level")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    quilts = sub.add_parser("quilts", help="find (k, m, c, θ)-quilted pages and their sources (Najork 2012)")
    add_io_options(quilts)
    add_quilt_options(quilts)
    show_defaults(quilts, QuiltConfig)

    ingest_cli.add_parser(sub)
    neardup_cli.add_parser(sub)

    demo = sub.add_parser("demo", help="run the quilt job on the bundled sample data and print a summary")
    demo.add_argument("--output", default="quiltdetect-demo", metavar="DIR",
                      help="where to write (default ./quiltdetect-demo, replaced if present)")
    demo.add_argument("--sample", metavar="DIR", help="sample directory (default: the bundled data/sample)")

    reuse_cli.add_parser(sub)
    mwo_cli.add_parser(sub)
    sweep_cli.add_parser(sub)
    phrases_cli.add_parser(sub)
    review_cli.add_parser(sub)

    return parser


def bundled_sample() -> Path:
    """The sample data directory: data/sample of the source checkout or the installed package."""
    here = Path(__file__).resolve()
    for candidate in (here.parents[2] / "data" / "sample", here.parent / "data" / "sample"):
        if candidate.is_dir():
            return candidate
    raise ConfigError("the bundled sample data was not found; give --sample DIR (data/sample of the repository)")


def run_quilts(cfg: QuiltConfig, *, local: bool) -> int:
    """Build the session, run the quilt job, print the summary."""
    from quiltdetect.quilts import job

    spark = start_job("quiltdetect-quilts", cfg, local=local)
    result = job.run(spark, cfg)
    print(job.format_summary(result, cfg), flush=True)
    return 0


def main(argv: list[str] | None = None, *, local: bool = True) -> int:
    """Entry point of the console command (``local=True``) and of jobs/*.py (``local=False``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        if args.command == "quilts":
            return run_quilts(quilt_config(args), local=local)
        if args.command == "ingest":
            return ingest_cli.run(args, local=local)
        if args.command == "neardup":
            return neardup_cli.run(args, local=local)
        if args.command == "reuse":
            return reuse_cli.run(args, local=local)
        if args.command == "mwo":
            return mwo_cli.run(args, local=local)
        if args.command == "phrases":
            return phrases_cli.run(args, local=local)
        if args.command in ("sweep", "review"):
            return {"sweep": sweep_cli, "review": review_cli}[args.command].run(args, local=local)
        if args.command == "demo":
            sample = Path(args.sample) if args.sample else bundled_sample()
            cfg = merge_settings(QuiltConfig, {"inputs": [str(sample)], "output": args.output, "overwrite": True})
            return run_quilts(cfg.validate(), local=local)
    except ConfigError as exc:
        print(f"quiltdetect: error: {exc}", file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":
    sys.exit(main())
