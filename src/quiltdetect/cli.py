"""The ``quiltdetect`` console command, built from the registry of commands below.

Each analysis owns its command in ``<analysis>/cli.py``: ``add_parser(subparsers)`` registers
its options (shared ones from ``options.py``, defaults read from its config class) and
``run(args, local=...)`` runs it. The same options work for ``quiltdetect <command> ...`` (local
mode, Spark started here) and for ``spark-submit jobs/<file>.py ...`` (master and resources from
spark-submit): each file of ``jobs/`` calls ``main([command, *argv], local=False)`` for the
command that ``JOB_FILES`` names.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import traceback
from types import ModuleType

from quiltdetect import __version__
from quiltdetect.common import failures, interrupts, jvmlog
from quiltdetect.common.config import ConfigError
from quiltdetect.ingest import cli as ingest_cli
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
    parser = argparse.ArgumentParser(
        prog="quiltdetect",
        description="Find reused content in web crawls on Apache Spark: quilted pages and their sources.",
    )
    parser.add_argument("--version", action="version", version=f"quiltdetect {__version__}")
    add_console_options(parser, default=False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in dict.fromkeys(COMMANDS.values()):
        module.add_parser(sub)
    for command in _command_parsers(sub):
        # also after the command (`quiltdetect quilts ... -v`); unset there, they keep the value before it
        add_console_options(command, default=argparse.SUPPRESS)
    return parser


def add_console_options(parser, *, default: object) -> None:
    """-v/--verbose and -q/--quiet: how much the run says on stderr besides warnings and errors."""
    parser.add_argument("-v", "--verbose", action="store_true", default=default,
                        help="also log at INFO level, with times")
    parser.add_argument("-q", "--quiet", action="store_true", default=default,
                        help="only warnings, errors and the final summary: no stage lines, no Spark UI address")


def _command_parsers(sub) -> list:
    """The parser of every command and subcommand under ``sub`` (e.g. reuse and reuse detect)."""
    found = []
    for parser in dict.fromkeys(sub.choices.values()):
        found.append(parser)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                found += _command_parsers(action)
    return found


def configure_console(verbose: bool, quiet: bool) -> None:
    """Logging for one run: warnings and errors always; INFO with -v; and the progress lines
    (each stage as it starts, the Spark UI address) as plain lines on stderr, unless --quiet."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    progress = logging.getLogger("quiltdetect.progress")  # common/metrics.py's
    for handler in [h for h in progress.handlers if isinstance(h, _Lines)]:
        progress.removeHandler(handler)
    progress.setLevel(logging.WARNING if quiet else logging.INFO)
    progress.propagate = verbose  # with -v they go with the other log lines, with times
    jvmlog.show_all = verbose  # the JVM's start-up lines too (common/jvmlog.py)
    interrupts.verbose = verbose  # and what breaks as an interrupted run stops
    if not verbose:
        progress.addHandler(_Lines())


class _Lines(logging.StreamHandler):
    """Each message as a plain line on stderr (the current ``sys.stderr``, should it be replaced)."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


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
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.verbose and args.quiet:
        parser.error("-v/--verbose and -q/--quiet: give one of them")
    configure_console(args.verbose, args.quiet)
    with interrupts.handled():
        try:
            if not local:
                from quiltdetect.common.session import check_submitted_arguments

                check_submitted_arguments(argv)
            return COMMANDS[args.command].run(args, local=local)
        except BaseException as exc:  # an interrupted run can end with any error
            if interrupts.received() is None and not isinstance(exc, KeyboardInterrupt):
                status = failed(args, exc)
                if status is None:
                    raise
                return status
            return interrupted(args, exc)


def failed(args: argparse.Namespace, exc: BaseException) -> int | None:
    """The exit status of a run that failed with ``exc``, after one line on stderr (and the
    traceback with -v); None for an error that is not the run's failure (raised as it is)."""
    output = getattr(args, "output", None)
    if isinstance(exc, ConfigError):
        print(f"quiltdetect: error: {exc}", file=sys.stderr)
        return 2
    if isinstance(exc, OSError):  # a file of ours that could not be written (a full disk) or read
        message = failures.describe_os_error(exc, output)
    elif isinstance(exc, Exception) and failures.is_spark_failure(exc):
        message = failures.describe(exc, output)
    else:
        return None
    if args.verbose:
        traceback.print_exc()
    print(f"quiltdetect: error: {message}", file=sys.stderr)
    return 1


def interrupted(args: argparse.Namespace, exc: BaseException) -> int:
    """Ctrl-C or SIGTERM (common/interrupts.py): one line, and 128 + the signal's number."""
    if args.verbose:
        traceback.print_exc()
    line = failures.describe_interrupt(exc, getattr(args, "output", None), overwrite=bool(getattr(args, "overwrite", False)))
    print(f"quiltdetect: {line}", file=sys.stderr, flush=True)
    return 128 + (interrupts.received() or signal.SIGINT)


if __name__ == "__main__":
    sys.exit(main())
