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

One module a step; this package re-exports the entry points, the types and the writers.
Each module imports only modules listed above it, so the imports go one way (no cycle):

* ``prose``    find ``shared/data``, load the prose, split it into sentences, drop repeated
  sentences;
* ``model``    Site, Page, TruthRecord, Corpus;
* ``render``   a page's visible text and its HTML;
* ``pool``     the sentence pool (never the same sentence twice; remix passes);
* ``sites``    sites with skewed sizes, domains, IPs, sections, footers, nav bars;
* ``pages``    the pages: originals, mirrors and near-copies, quilts and controls,
  visible text, crawl order; ``generate``;
* ``writers``  the WARC, table (JSON Lines, Parquet) and ground-truth writers;
* ``cli``      the command line, ``python bench/corpus.py --help``;
* ``phrases``  another crawl from the same prose: planted slice-and-dice sites
  (``python bench/phrases_corpus.py --help``).

Test and benchmark support code, not part of the installed package: it needs the real prose
of ``../shared/data``.
"""

from .cli import main
from .model import Corpus, Page, Site, TruthRecord
from .pages import generate
from .prose import ProseDoc, find_shared_data, load_prose
from .writers import write_corpus_table, write_truth, write_warc

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
