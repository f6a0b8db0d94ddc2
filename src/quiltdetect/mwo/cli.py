"""``quiltdetect mwo index|query|join``: the MWO near-duplicate commands (definitions §5)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict

from quiltdetect.common.config import show_defaults
from quiltdetect.common.paths import absolute, absolute_if_file
from quiltdetect.mwo.config import MwoConfig, MwoQueryConfig
from quiltdetect.options import add_config_options, add_io_options, config_from_args, run_job


def add_parser(subparsers) -> None:
    """Register ``mwo`` with its three actions."""
    mwo = subparsers.add_parser("mwo", help="near-duplicates by minimum weight overlap (Das, Mathew, Vijayaraghavan)")
    actions = mwo.add_subparsers(dest="mwo_command", required=True, metavar="ACTION")
    index = actions.add_parser("index", help="render every page into its weighted record and write the index")
    add_io_options(index)
    add_config_options(index, MwoConfig, "mwo index")
    join = actions.add_parser("join", help="all pairs with MWO >= t on Spark (the output is also an index)")
    add_io_options(join)
    add_config_options(join, MwoConfig, "mwo join")
    for parser in (index, join):
        show_defaults(parser, MwoConfig)
    query = actions.add_parser("query", help="the near-duplicates of one page in an index, ranked by MWO")
    query.add_argument("--index", required=True, metavar="DIR", type=absolute, help="an index written by `mwo index` (local)")
    query.add_argument("--page", action="append", default=[], metavar="FILE_OR_URL", type=absolute_if_file,
                       help="an HTML file, or a URL / doc_id in the index; repeatable; '-' reads one per line from stdin")
    query.add_argument("--url", default="", help="the URL of an HTML --page file (URL terms, same-site anchors)")
    query.add_argument("-t", type=float, default=0.5, help="near-duplicates have MWO >= t (default 0.5)")
    add_config_options(query, MwoQueryConfig, "mwo query")
    query.add_argument("--json", action="store_true", help="print one JSON object per query instead of text")
    show_defaults(query, MwoQueryConfig)


def _query(args: argparse.Namespace) -> int:
    from quiltdetect.mwo.query import MwoIndex, format_result

    top = config_from_args(MwoQueryConfig, args).top
    started = time.perf_counter()
    index = MwoIndex(args.index)
    loaded = time.perf_counter() - started
    if not args.json:
        print(f"index {args.index}: {len(index)} records, {len(index.post_term)} postings,"
              f" loaded in {loaded:.2f}s", flush=True)
    pages = [p for item in args.page for p in ([ln.strip() for ln in sys.stdin if ln.strip()] if item == "-" else [item])]
    if not pages:
        print("quiltdetect: error: give --page FILE_OR_URL (repeatable, '-' for stdin)", file=sys.stderr)
        return 2
    for page in pages:
        result = index.query(page, args.t, url=args.url)
        if args.json:
            print(json.dumps(asdict(result), ensure_ascii=False), flush=True)
        else:
            print(format_result(result, top), flush=True)
    return 0


def run(args: argparse.Namespace, *, local: bool) -> int:
    """Run ``mwo index``, ``mwo join`` or ``mwo query`` from parsed arguments."""
    if args.mwo_command == "query":
        return _query(args)
    from quiltdetect.mwo.job import MwoIndexJob, MwoJoinJob

    job = MwoJoinJob if args.mwo_command == "join" else MwoIndexJob
    return run_job(job, config_from_args(MwoConfig, args).validate(), local=local)
