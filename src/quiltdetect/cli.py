"""The ``quiltdetect`` console command, built from the registry of commands below.

Each analysis owns its command in ``<analysis>/cli.py``: ``add_parser(subparsers)`` registers
its options (shared ones from ``options.py``, defaults read from its config class) and
``run(args, local=...)`` runs it. The same options work for ``quiltdetect <command> ...`` (local
mode, Spark started here) and for ``spark-submit jobs/<file>.py ...`` (master and resources from
spark-submit): each file of ``jobs/`` calls ``main([command, *argv], local=False)`` for the
command that ``JOB_FILES`` names.
"""

from __future__ import annotations

import logging
import sys
from types import ModuleType

from quiltdetect import __version__
from quiltdetect.common.config import ConfigError
from quiltdetect.doctable import cli as ingest_cli
from quiltdetect.mwo import cli as mwo_cli
from quiltdetect.neardup import cli as neardup_cli
from quiltdetect.phrases import cli as phrases_cli
from quiltdetect.quilts import cli as quilts_cli
from quiltdetect.reuse import cli as reuse_cli
from quiltdetect.review import cli as review_cli
from quiltdetect.sweep import cli as sweep_cli

log = logging.getLogger("quiltdetect")

# Every command of the console command and the module that owns it, in --help order.
COMMANDS: dict[str, ModuleType] = {
    "quilts": quilts_cli, "ingest": ingest_cli, "neardup": neardup_cli, "demo": quilts_cli,
    "reuse": reuse_cli, "mwo": mwo_cli, "sweep": sweep_cli, "phrases": phrases_cli, "review": review_cli,
}
# The spark-submit entry points: jobs/<file> runs ``quiltdetect <command> [action]`` on a cluster.
JOB_FILES: dict[str, tuple[str, ...]] = {
    "find_quilts.py": ("quilts",), "ingest.py": ("ingest",), "find_near_duplicates.py": ("neardup",),
    "find_popular_phrases.py": ("phrases",), "content_reuse.py": ("reuse",), "mwo_join.py": ("mwo", "join"),
    "sweep.py": ("sweep",),
}


def build_parser():
    """The argument parser of every command (each module registers its own once)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="quiltdetect",
        description="Find reused content in web crawls on Apache Spark: quilted pages and their sources.",
    )
    parser.add_argument("--version", action="version", version=f"quiltdetect {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress at INFO level")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in dict.fromkeys(COMMANDS.values()):
        module.add_parser(sub)
    return parser


def run_job_file(path: str, argv: list[str] | None = None) -> int:
    """What ``spark-submit jobs/<file>.py ARGS`` runs: the file's command (``JOB_FILES``) with ARGS,
    the master and resources coming from spark-submit."""
    import os

    name = os.path.basename(path)
    if name not in JOB_FILES:
        raise SystemExit(f"quiltdetect: {name} is not a job file; known: {', '.join(sorted(JOB_FILES))}")
    return main([*JOB_FILES[name], *(sys.argv[1:] if argv is None else argv)], local=False)


def main(argv: list[str] | None = None, *, local: bool = True) -> int:
    """Entry point of the console command (``local=True``) and of jobs/*.py (``local=False``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return COMMANDS[args.command].run(args, local=local)
    except ConfigError as exc:
        print(f"quiltdetect: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
