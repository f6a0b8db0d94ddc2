"""Throughput of the near-duplicate fingerprinting kernel, in documents per second per core.

    python bench/corpus.py --pages 10000 --format parquet --out /tmp/neardup10k
    PYTHONPATH=src python bench/neardup_throughput.py /tmp/neardup10k [--algorithm combined --k 5]

Runs the batch functions of the Spark stage in one process on one core, over every page's
visible text, a batch of pages at a time as the stage's Arrow batches come: for lsh (the
default) terms, the shingle sets and their bands' min-hashes (``lsh_batch``), then the packed
sets and band keys it returns; for Henzinger's algorithms terms, shingles, 84 min-hashes,
supershingles, 384-bit simhash and its pieces, then its list columns. The pages are parsed first (not timed) with the ingest HTML extractor when the
table has raw HTML, so the figure is the fingerprint step alone.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pyarrow.parquet as pq

from quiltdetect.common.config import local_spark_defaults
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.neardup.fingerprints import fingerprint_batch_arrays, lsh_batch
from quiltdetect.neardup.pairs import long_lists, packed_sets
from quiltdetect.neardup.simhash import n_pieces
from quiltdetect.neardup.tokens import batch_page_term_hashes, batch_term_hashes


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
    batch = int(local_spark_defaults()["spark.sql.execution.arrow.maxRecordsPerBatch"])
    t0 = time.process_time()
    for start in range(0, len(texts), batch):
        page = (texts[start:start + batch], urls[start:start + batch], images[start:start + batch])
        if args.algorithm == "lsh":
            sets, keys = lsh_batch(*batch_term_hashes(*page), args.k, False, bands, rows)
            packed_sets(sets.values, sets.sizes, sets.present)
            n_terms += int(sets.n_terms.sum())
            continue
        out = fingerprint_batch_arrays(batch_page_term_hashes(*page), args.k, False, pieces)
        n_terms += sum(row[0] for row in out)
        for column in list(zip(*out, strict=True))[1:]:
            long_lists(list(column))
    seconds = time.process_time() - t0
    what = f"{bands} x {rows} bands" if args.algorithm == "lsh" else f"{pieces} simhash pieces"
    print(f"{len(texts):,} pages, {n_terms:,} terms, {args.algorithm}, k={args.k}, {what}: "
          f"{seconds:.2f} CPU s -> {len(texts) / seconds:,.0f} pages/s/core, {n_terms / seconds:,.0f} terms/s/core")


if __name__ == "__main__":
    main()
