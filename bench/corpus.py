"""Reproducible synthetic web corpus with planted quilts, built from real prose.

Pages are made of sentences from public prose collections (State of the Union and
inaugural addresses, Wikipedia articles, the Lee news corpus, news article bodies),
arranged the way a crawl looks: sites on distinct registered domains with skewed
sizes, per-site boilerplate, exact mirrors and near-copies on other domains, and
planted quilts (definitions §1) with ground truth, plus "one or two borrowed patches"
controls that are *not* quilts.

Guarantees (checked by ``tests/test_corpus_generate.py``):

* the same ``(prose, n_pages, seed)`` gives the same corpus, byte for byte;
* every sentence used as original text appears in exactly one original page
  (mirrors and near-copies copy it, quilts and controls borrow it at most once);
* each planted quilt has 4–8 patches (2–5 consecutive sentences, ≥ 25 words) from
  originals on pairwise different domains, none on its own domain, and a patch
  fraction ≥ 0.55 by a conservative count, so it is (5, 50, 4, 0.5)-quilted;
* controls borrow ≤ 25 % of their words.

The real prose (~1.2 M words) covers about 2,000 pages. Beyond that the pool is
reused in *remix passes*: every third word of each sentence (random phase) is
replaced by a random word of the prose vocabulary, so no 5-gram of an earlier
pass survives while sentence shapes, punctuation and word statistics stay real.

The steps live beside this file, one module each; this one holds the entry points
(``generate``, the command line) and re-exports the types and writers:

* ``corpus_prose``  load the prose, split it into sentences, drop repeated sentences;
* ``corpus_pool``   the sentence pool (never the same sentence twice; remix passes);
* ``corpus_sites``  sites with skewed sizes, domains, IPs, sections, footers, nav bars;
* ``corpus_pages``  the pages: originals, mirrors and near-copies, quilts and controls,
  visible text, crawl order;
* ``corpus_html``   a page's visible text and its HTML;
* ``corpus_write``  the WARC, table (JSON Lines, Parquet) and ground-truth writers;
* ``corpus_types``  Site, Page, TruthRecord, Corpus.

Run ``python bench/corpus.py --help`` (test and benchmark support code, not part of the
installed package: it needs the real prose of ``../shared/data``).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from corpus_pages import build_corpus
from corpus_pool import VOCABULARIES
from corpus_prose import ProseDoc, load_prose
from corpus_types import Corpus, Page, Site, TruthRecord
from corpus_write import write_corpus_table, write_truth, write_warc

__all__ = [
    "Corpus",
    "Page",
    "ProseDoc",
    "Site",
    "TruthRecord",
    "find_shared_data",
    "generate",
    "load_prose",
    "main",
    "write_corpus_table",
    "write_truth",
    "write_warc",
]


def generate(prose: Sequence[ProseDoc], n_pages: int, seed: int, vocabulary: str = "prose") -> Corpus:
    """Generate ``n_pages`` pages deterministically for ``seed`` (see module doc); ``vocabulary``
    "open" makes remix passes draw every word from an open Zipf vocabulary (``corpus_pool``)."""
    if n_pages < 1:
        raise ValueError("n_pages must be >= 1")
    # millions of small, long-lived strings: the cyclic GC would rescan them over and over
    enabled = gc.isenabled()
    gc.disable()
    try:
        return build_corpus(prose, n_pages, seed, vocabulary)
    finally:
        if enabled:
            gc.enable()


# --------------------------------------------------------------------------- CLI


def find_shared_data(start: Path | None = None) -> Path | None:
    """The ``shared/data`` directory: ./shared/data, ../shared/data or ../../shared/data from
    ``start`` (default: the working directory, then this checkout)."""
    starts = (
        [Path(start)] if start is not None else [Path.cwd(), Path(__file__).resolve().parents[1]]
    )
    for begin in starts:
        for up in (begin, begin.parent, begin.parent.parent):
            cand = up / "shared" / "data"
            if (cand / "text_corpora").is_dir():
                return cand
    return None


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


if __name__ == "__main__":
    sys.exit(main())
