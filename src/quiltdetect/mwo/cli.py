"""``quiltdetect mwo index|query|join``: the MWO near-duplicate commands (definitions §5)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict

from quiltdetect.common.config import show_defaults
from quiltdetect.common.paths import absolute, absolute_if_file
from quiltdetect.mwo.config import MwoConfig
from quiltdetect.options import add_io_options, config_from_args, run_job

MWO_OPTIONS = ("t", "min_weight_ratio", "index_threshold", "shared_prefix_terms", "block_size", "top")


def _add_job_options(parser: argparse.ArgumentParser) -> None:
    add_io_options(parser)
    parser.add_argument("--min-weight-ratio", type=float,
                        help="dynamic threshold: drop terms below this fraction of the mean term weight")
    parser.add_argument("--index-threshold", type=float,
                        help="keep prefix postings for queries with t >= this")
    parser.add_argument("--top", type=int, help="pairs shown in the summary")


def add_parser(subparsers) -> None:
    """Register ``mwo`` with its three actions."""
    mwo = subparsers.add_parser("mwo", help="near-duplicates by minimum weight overlap (Das, Mathew, Vijayaraghavan)")
    actions = mwo.add_subparsers(dest="mwo_command", required=True, metavar="ACTION")
    index = actions.add_parser("index", help="render every page into its weighted record and write the index")
    _add_job_options(index)
    join = actions.add_parser("join", help="all pairs with MWO >= t on Spark (the output is also an index)")
    _add_job_options(join)
    join.add_argument("-t", type=float, help="near-duplicates have MWO >= t")
    join.add_argument("--shared-prefix-terms", type=int, metavar="L",
                      help="l-prefix filter: candidates share L terms of their extended prefixes (1 = plain prefix;"
                           " lossless for every L, larger L: longer prefixes, fewer candidates)")
    join.add_argument("--block-size", type=int, metavar="N",
                      help="records per block of the self-join (two blocks meet in one task; memory grows with N^2)")
    for parser in (index, join):
        show_defaults(parser, MwoConfig)
    query = actions.add_parser("query", help="the near-duplicates of one page in an index, ranked by MWO")
    query.add_argument("--index", required=True, metavar="DIR", type=absolute, help="an index written by `mwo index` (local)")
    query.add_argument("--page", action="append", default=[], metavar="FILE_OR_URL", type=absolute_if_file,
                       help="an HTML file, or a URL / doc_id in the index; repeatable; '-' reads one per line from stdin")
    query.add_argument("--url", default="", help="the URL of an HTML --page file (URL terms, same-site anchors)")
    query.add_argument("-t", type=float, default=0.5, help="near-duplicates have MWO >= t (default 0.5)")
    query.add_argument("--top", type=int, default=20, help="matches shown per page (default 20, 0 = all)")
    query.add_argument("--json", action="store_true", help="print one JSON object per query instead of text")


def _query(args: argparse.Namespace) -> int:
    from quiltdetect.mwo.query import MwoIndex, format_result

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
            print(format_result(result, args.top), flush=True)
    return 0


def run(args: argparse.Namespace, *, local: bool) -> int:
    """Run ``mwo index``, ``mwo join`` or ``mwo query`` from parsed arguments."""
    if args.mwo_command == "query":
        return _query(args)
    from quiltdetect.mwo.job import MwoIndexJob, MwoJoinJob

    job = MwoJoinJob if args.mwo_command == "join" else MwoIndexJob
    return run_job(job, config_from_args(MwoConfig, args, MWO_OPTIONS).validate(), local=local)
