"""The corpus generator's command line: generate a corpus and write it with its ground truth.

Run as ``python bench/corpus.py --help`` (``bench/corpus.py`` calls ``main``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .pages import generate
from .pool import VOCABULARIES
from .prose import find_shared_data, load_prose
from .writers import write_corpus_table, write_truth, write_warc

__all__ = ["main"]


def _default_truth(out: Path, fmt: str) -> Path:
    name = out.name
    for suffix in (".warc.gz", ".warc", ".jsonl", ".parquet"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return out.parent / f"{name}.truth.jsonl"


def main(argv: list[str] | None = None) -> int:
    """Command line: generate a corpus and write it with its ground truth."""
    ap = argparse.ArgumentParser(
        prog="python bench/corpus.py",
        description="Generate a synthetic web corpus with planted quilts from real prose.",
    )
    ap.add_argument(
        "--shared-data", type=Path, default=None, help="shared data dir (default: found from CWD)"
    )
    ap.add_argument("--pages", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--format", choices=["warc", "parquet", "jsonl"], default="warc")
    ap.add_argument("--vocabulary", choices=VOCABULARIES, default="prose",
                    help="what remix passes draw words from: the prose's words (every third word "
                         "replaced) or an open Zipf vocabulary that grows with the corpus (every word)")
    ap.add_argument(
        "--out", type=Path, required=True, help="file (warc, jsonl) or directory (parquet)"
    )
    ap.add_argument("--truth", type=Path, default=None, help="truth JSONL (default: beside --out)")
    args = ap.parse_args(argv)

    shared = args.shared_data or find_shared_data()
    if shared is None or not Path(shared).is_dir():
        print("error: shared data not found; pass --shared-data", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    prose = load_prose(Path(shared))
    corpus = generate(prose, args.pages, args.seed, args.vocabulary)
    if args.format == "warc":
        write_warc(corpus, args.out)
    else:
        write_corpus_table(corpus, args.out, args.format)
    truth = args.truth or _default_truth(args.out, args.format)
    write_truth(corpus, truth)
    print(f"{corpus.summary()} -> {args.out} (truth {truth}) in {time.perf_counter() - t0:.1f}s")
    return 0
