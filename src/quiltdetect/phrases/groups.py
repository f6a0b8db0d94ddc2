"""The paper's sorted triples (i, s, d) counted per (selector, shingle) group in numpy (§3.3).

Nearly every group is a single document (74 M groups of 83 M triples at 1,000,000 generated
pages), so a hash aggregation has almost nothing to combine on its map side and spills its
whole table; sorting each group bucket's shingles once and taking run lengths does the same
count at the cost of one sort. A group bucket holds one selector and a slice of the shingle
range (the shingle's top bits), so a bucket's groups are the runs of its sorted shingles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GROUP_BITS = 2  # each selector's shingles in 4 buckets by their top bits


@dataclass(frozen=True)
class GroupBuckets:
    """One batch of samples' triples, split by group bucket: ``shingles[bounds[b]:bounds[b + 1]]``
    are bucket b's (``bucket = selector << GROUP_BITS | shingle >> (64 - GROUP_BITS)``)."""

    shingles: np.ndarray  # uint64
    bounds: np.ndarray  # int64, one more than the number of buckets


def group_buckets(shingles: np.ndarray, offsets: np.ndarray, m: int) -> GroupBuckets:
    """Split the triples of a batch of samples (every document's shingle list, concatenated
    as ``shingles`` with list ``offsets``; the i-th entry of a list is selector i's) by group
    bucket. ``m`` selectors give ``m << GROUP_BITS`` buckets."""
    values = np.asarray(shingles).view(np.uint64)
    offsets = np.asarray(offsets, dtype=np.int64)
    lengths = np.diff(offsets)
    if values.shape[0] and int(lengths.max()) > m:
        raise ValueError(f"a sample holds {int(lengths.max())} shingles, more than m = {m}")
    selector = np.arange(values.shape[0], dtype=np.int64) - np.repeat(offsets[:-1] - offsets[0], lengths)
    bucket = (selector << GROUP_BITS) | (values >> np.uint64(64 - GROUP_BITS)).astype(np.int64)
    order = np.argsort(bucket, kind="stable")
    n_buckets = m << GROUP_BITS
    bounds = np.searchsorted(bucket[order], np.arange(n_buckets + 1), side="left").astype(np.int64)
    return GroupBuckets(shingles=values[order], bounds=bounds)


@dataclass(frozen=True)
class GroupCounts:
    """One bucket's groups: how many there are, and the shingles (ascending) and document
    counts of those with at least ``popular`` documents."""

    n_groups: int
    shingles: np.ndarray  # uint64
    n_documents: np.ndarray  # int64


def count_groups(shingles: np.ndarray, popular: int) -> GroupCounts:
    """Count the documents of every group of one bucket (all its triples' shingles; a document
    holds one shingle per selector, so a triple is a document) and keep the popular groups."""
    values = np.sort(np.asarray(shingles).view(np.uint64), kind="quicksort")
    if values.shape[0] == 0:
        return GroupCounts(0, values, np.empty(0, dtype=np.int64))
    starts = np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))
    sizes = np.diff(np.append(starts, values.shape[0])).astype(np.int64)
    kept = sizes >= popular
    return GroupCounts(int(starts.shape[0]), values[starts[kept]], sizes[kept])
