"""``quiltdetect quilts`` (and ``spark-submit jobs/find_quilts.py``): quilted pages and their
sources (definitions §1), and ``quiltdetect demo``, the same job on the bundled sample."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from quiltdetect.common.config import ConfigError, merge_settings, show_defaults
from quiltdetect.common.ownfiles import sample_dir
from quiltdetect.common.paths import absolute
from quiltdetect.options import add_config_options, add_io_options, config_from_args, run_job
from quiltdetect.quilts.config import QuiltConfig


def add_quilt_options(parser: argparse.ArgumentParser) -> None:
    """The quilt parameters (k, m, c, θ), the foreign rule and the rest of QuiltConfig's options."""
    add_config_options(parser, QuiltConfig, "quilts")


# The demo looks for sources on other hosts: the cross-site quilts a newcomer should see first,
# not pages stitched from their own site's templates.
DEMO_SETTINGS = {"foreign": "host"}
LANGUAGES = ("languages: pages in every script are read (the sample holds English, Japanese, Chinese "
             "and Russian); a word is a Chinese or Japanese character, a unit of about five Thai, Lao, Khmer or "
             "Myanmar letters, "
             "else a run of letters with their marks; -k {k} suits mixed crawls, -k 8 a crawl of "
             "Chinese or Japanese alone (docs/definitions.md §0)")


def add_parser(sub: Any) -> None:
    """Register ``quilts`` and ``demo``."""
    quilts = sub.add_parser("quilts", help="find (k, m, c, θ)-quilted pages and their sources (Najork 2012)")
    add_io_options(quilts)
    add_quilt_options(quilts)
    show_defaults(quilts, QuiltConfig)
    demo = sub.add_parser("demo", help="run the quilt job on the bundled sample data (sources on other hosts: "
                                       "--foreign host) and print a summary")
    demo.add_argument("--output", default="quiltdetect-demo", metavar="DIR",
                      help="where to write (default ./quiltdetect-demo, replaced if present)")
    demo.add_argument("--sample", metavar="DIR", type=absolute, help="sample directory (default: the bundled data/sample)")
    demo.set_defaults(overwrite=True)  # it replaces its output: an interrupted demo starts over (cli.interrupted)


def quilt_config(args: argparse.Namespace) -> QuiltConfig:
    """The quilt job's configuration from its command line."""
    return config_from_args(QuiltConfig, args).validate()


def bundled_sample() -> Path:
    """The sample data directory: quiltdetect/data/sample of an installed wheel (setup.py copies
    it in), else data/sample of the source checkout (``pip install -e .`` or PYTHONPATH=src)."""
    sample = sample_dir()
    if sample is None:
        raise ConfigError("the bundled sample data was not found; give --sample DIR (data/sample of the repository)")
    return sample


def run_quilts(cfg: QuiltConfig, *, local: bool) -> int:
    """Build the session, run the quilt job, print the summary."""
    from quiltdetect.quilts.job import QuiltsJob

    return run_job(QuiltsJob, cfg, local=local)


def run(args: argparse.Namespace, *, local: bool) -> int:
    """``quilts`` from its options; ``demo`` on the bundled sample, replacing its output."""
    if args.command == "demo":
        sample = Path(args.sample) if args.sample else bundled_sample()
        cfg = merge_settings(QuiltConfig, {"inputs": [str(sample)], "output": args.output, "overwrite": True,
                                           **DEMO_SETTINGS})
        status = run_quilts(cfg.validate(), local=local)
        print(LANGUAGES.format(k=cfg.k), flush=True)
        print(f"judge these quilts in your browser: quiltdetect review --run {args.output}", flush=True)
        return status
    return run_quilts(quilt_config(args), local=local)
