"""Throughput of the near-duplicate fingerprinting kernel, in documents per second per core.

    python bench/corpus.py --pages 10000 --format parquet --out /tmp/neardup10k
    PYTHONPATH=src python bench/neardup_throughput.py /tmp/neardup10k [--algorithm combined --k 5]

Runs the exact per-page function of the Spark stage in one process on one core, over every
page's visible text: for lsh (the default) terms, the shingle set and its bands' min-hashes; for
Henzinger's algorithms terms, shingles, 84 min-hashes, supershingles, 384-bit simhash and its
pieces; then, as the stage does per Arrow batch of 10,000 pages, the list columns it returns. The pages are parsed first (not timed) with the ingest HTML extractor when the
table has raw HTML, so the figure is the fingerprint step alone.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pyarrow.parquet as pq

from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.neardup.fingerprints import fingerprint_arrays, lsh_arrays
from quiltdetect.neardup.pairs import long_lists
from quiltdetect.neardup.simhash import n_pieces


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", help="a Parquet file or directory of the corpus generator")
    defaults = NearDupConfig()
    parser.add_argument("--algorithm", choices=("lsh", "combined"), default=defaults.algorithm)
    parser.add_argument("--k", type=int, default=defaults.k)
    parser.add_argument("--c-threshold", type=int, default=defaults.c_threshold)
    args = parser.parse_args()
    path = Path(args.corpus)
    files = sorted(path.rglob("*.parquet")) if path.is_dir() else [path]
    table = pq.read_table(files[0]) if len(files) == 1 else pq.ParquetDataset([str(f) for f in files]).read()
    columns = table.column_names
    texts = table.column("text").to_pylist()
    urls = table.column("url").to_pylist() if "url" in columns else [None] * len(texts)
    if any(t and "<" in t and "</" in t for t in texts[:50]):  # raw HTML: extract visible text first
        from quiltdetect.documents.html import extract

        fields = [extract(t or "", u or "") for t, u in zip(texts, urls, strict=True)]
        texts = [f.text for f in fields]
        images = [list(f.images) for f in fields]
    else:
        images = [None] * len(texts)
    pieces = n_pieces(args.c_threshold)
    bands, rows = defaults.lsh_bands, defaults.lsh_rows
    n_terms = 0
    batch = 10_000  # spark.sql.execution.arrow.maxRecordsPerBatch
    t0 = time.process_time()
    for start in range(0, len(texts), batch):
        page = zip(texts[start:start + batch], urls[start:start + batch], images[start:start + batch], strict=True)
        if args.algorithm == "lsh":
            out = [lsh_arrays(text, url, imgs, args.k, False, bands, rows) for text, url, imgs in page]
        else:
            out = [fingerprint_arrays(text, url, imgs, args.k, False, pieces) for text, url, imgs in page]
        n_terms += sum(row[0] for row in out)
        for column in list(zip(*out, strict=True))[1:]:
            long_lists(list(column))
    seconds = time.process_time() - t0
    what = f"{bands} x {rows} bands" if args.algorithm == "lsh" else f"{pieces} simhash pieces"
    print(f"{len(texts):,} pages, {n_terms:,} terms, {args.algorithm}, k={args.k}, {what}: "
          f"{seconds:.2f} CPU s -> {len(texts) / seconds:,.0f} pages/s/core, {n_terms / seconds:,.0f} terms/s/core")


if __name__ == "__main__":
    main()
