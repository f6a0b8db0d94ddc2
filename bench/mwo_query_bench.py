"""Median latency of ``mwo query`` on a built index, with the candidate-set sizes of the filters.

For a seeded sample of indexed pages (each queried by doc_id, so it is not its own match)
it reports, per threshold t: the median / p90 query time, the mean candidate-set size after
the weighted prefix filter and after the weighted positional filter, the mean number of
near-duplicates, and, for comparison, the paper's count-based filters (eq. 1-3) on the same
global order: their candidate sizes and how many true near-duplicates they would lose.

    python bench/corpus.py --pages 10000 --seed 1 --format parquet --out /tmp/mwo10k
    quiltdetect mwo index --input /tmp/mwo10k --output /tmp/mwo10k_idx
    PYTHONPATH=src python bench/mwo_query_bench.py --index /tmp/mwo10k_idx
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np

from quiltdetect.mwo.filtering import paper_positional_ok, paper_prefix_length
from quiltdetect.mwo.query import MwoIndex


def paper_filters(index: MwoIndex, t: float):
    """A function row -> (candidates after the paper's prefix filter, after its positional filter)."""
    lengths = np.diff(index.offsets)
    postings: dict[int, list[tuple[int, int]]] = {}
    for row in range(len(index)):
        ids, _ = index.record(row)
        for q in range(paper_prefix_length(len(ids), t)):
            postings.setdefault(int(ids[q]), []).append((row, q + 1))

    def candidates(row: int) -> tuple[set[int], set[int]]:
        ids, _ = index.record(row)
        n_r = len(ids)
        first: dict[int, tuple[int, int]] = {}
        for p in range(paper_prefix_length(n_r, t)):
            for s, q in postings.get(int(ids[p]), ()):
                if s != row and s not in first:
                    first[s] = (p + 1, q)
        kept = {s for s, (p, q) in first.items() if paper_positional_ok(n_r, int(lengths[s]), p, q, t)}
        return set(first), kept

    return candidates


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", required=True)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-t", type=float, nargs="*", default=[0.3, 0.5, 0.7, 0.9])
    ap.add_argument("--no-paper", action="store_true", help="skip the paper's count-based filters")
    args = ap.parse_args()
    t0 = time.perf_counter()
    index = MwoIndex(args.index)
    load = time.perf_counter() - t0
    print(f"index {args.index}: {len(index)} records, {len(index.ids)} record terms, {len(index.post_term)}"
          f" postings; loaded in {load:.2f}s")
    sample = random.Random(args.seed).sample(index.doc_ids, min(args.queries, len(index)))
    print("| t | median ms | p90 ms | after prefix | after positional | near-dups | paper prefix | paper positional"
          " | paper lost |")
    print("|---|---|---|---|---|---|---|---|---|")
    for t in args.t:
        times, pre, pos, hits = [], [], [], []
        paper_pre, paper_pos, lost = [], [], 0
        paper = None if args.no_paper else paper_filters(index, t)
        for doc_id in sample:
            start = time.perf_counter()
            result = index.query(doc_id, t)
            times.append((time.perf_counter() - start) * 1000)
            pre.append(result.after_prefix)
            pos.append(result.after_positional)
            hits.append(len(result.matches))
            if paper:
                c_pre, c_pos = paper(index.row_of_id[doc_id])
                paper_pre.append(len(c_pre))
                paper_pos.append(len(c_pos))
                lost += sum(1 for m in result.matches if index.row_of_id[m.doc_id] not in c_pos)
        p90 = statistics.quantiles(times, n=10)[-1]
        paper_cols = (f"{statistics.mean(paper_pre):.1f} | {statistics.mean(paper_pos):.1f} | {lost}"
                      if paper else "- | - | -")
        print(f"| {t:.2f} | {statistics.median(times):.2f} | {p90:.2f} | {statistics.mean(pre):.1f} |"
              f" {statistics.mean(pos):.1f} | {statistics.mean(hits):.2f} | {paper_cols} |")
    print(f"({len(sample)} queries per t; sizes are means per query over a repository of {len(index)} records;"
          " 'paper lost' = true near-duplicates, summed over the queries, that the count filters drop)")


if __name__ == "__main__":
    main()
