"""Shingles (Broder): the set of k-token fingerprints of a page.

k = 8 in Henzinger 2006, 5 in Fetterly 2005. With ``wrap`` the window wraps around the end
of the page, as Fetterly does, so an n-token page has n shingles. Without it a page shorter
than k tokens (but not empty) has one shingle, of all its tokens, so that short pages can
still be near-duplicates of each other (the papers do not say; they drop nothing).
"""

from __future__ import annotations

import numpy as np

from quiltdetect.kernel.grams import gram_fingerprints


def shingles(hashes: np.ndarray, k: int, *, wrap: bool = False) -> np.ndarray:
    """The distinct shingle fingerprints of a token-hash sequence.

    ``hashes``: uint64 (n,). Returns uint64 (s,), sorted, unique; empty when n == 0.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    n = hashes.shape[0]
    if n == 0:
        return np.empty(0, dtype=np.uint64)
    if wrap:
        seq = np.resize(hashes, n + k - 1)  # cyclic: n windows of k tokens
        grams = gram_fingerprints(seq, k)
    elif n < k:
        grams = gram_fingerprints(hashes, n)
    else:
        grams = gram_fingerprints(hashes, k)
    return np.unique(grams)


def batch_shingles(hashes: np.ndarray, counts: np.ndarray, k: int, *,
                   wrap: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Every page's ``shingles`` at once: (the sets one after the other, each sorted and unique,
    uint64; each set's size, int64 (d,)), equal to ``shingles`` page by page (tested).

    ``hashes``: uint64, the term hashes of d pages one after the other; ``counts``: terms per
    page (int, may be 0). One fingerprint chain runs over the whole batch (a few numpy passes,
    where a chain per page cost tens of calls per page); only each page's windows are gathered
    from it, then each page's set is sorted in place and its repeats dropped in one pass.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    counts = np.asarray(counts, dtype=np.int64)
    starts = np.zeros(counts.shape[0], dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    if wrap:
        grams, per = circular_shingles_batch(hashes, counts, k), counts
    else:
        per = np.where(counts >= k, counts - k + 1, np.minimum(counts, 1))  # short pages: one shingle
        grams = np.empty(int(per.sum()), dtype=np.uint64)
        at = np.zeros(counts.shape[0], dtype=np.int64)  # where each page's shingles go
        np.cumsum(per[:-1], out=at[1:])
        long = counts >= k
        if long.any():
            n = per[long]
            within = np.arange(int(n.sum()), dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
            grams[np.repeat(at[long], n) + within] = gram_fingerprints(hashes, k)[np.repeat(starts[long], n) + within]
        for length in np.unique(counts[(counts > 0) & ~long]).tolist():  # pages of 1..k-1 terms
            pages = np.flatnonzero(counts == length)
            words = (starts[pages, None] + np.arange(length)).ravel()
            grams[at[pages]] = gram_fingerprints(hashes[words], length)[::length]
    ends = np.cumsum(per)
    for lo, hi in zip((ends - per).tolist(), ends.tolist(), strict=True):
        grams[lo:hi].sort()
    first = np.ones(grams.shape[0], dtype=bool)
    np.not_equal(grams[1:], grams[:-1], out=first[1:])
    present = per > 0
    first[(ends - per)[present]] = True  # each page's smallest, even when the page before ends with it
    sizes = np.zeros(counts.shape[0], dtype=np.int64)
    if grams.shape[0]:
        sizes[present] = np.add.reduceat(first, (ends - per)[present], dtype=np.int64)
    return grams[first], sizes


def circular_shingles_batch(hashes: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """Every text's circular shingles, with repeats, in circle order, one text after another:
    uint64 (sum(counts),).

    ``hashes``: uint64, the word hashes of several texts one after the other; ``counts``: words
    per text (int, may be 0). Text d contributes counts[d] fingerprints, the windows starting at
    each of its words; as a set they equal ``shingles(its hashes, k, wrap=True)`` (tested). One
    fingerprint chain runs over the whole batch; only the min(n, k-1) windows per text that
    wrap around its end are gathered.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    counts = np.asarray(counts, dtype=np.int64)
    counts = counts[counts > 0]
    total = int(counts.sum())
    if total == 0:
        return np.empty(0, dtype=np.uint64)
    starts = np.zeros(counts.shape[0], dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    wrapping = np.minimum(counts, k - 1)  # windows per text that run past its last word
    at = np.arange(total, dtype=np.int64) - np.repeat(starts, counts)  # position in its text
    inside = at < np.repeat(counts - wrapping, counts)
    out = np.empty(total, dtype=np.uint64)
    out[inside] = gram_fingerprints(hashes, k)[inside[: max(total - k + 1, 0)]]
    if int(wrapping.sum()):
        owner = np.repeat(np.arange(counts.shape[0]), wrapping)
        first = (np.arange(owner.shape[0], dtype=np.int64)
                 - np.repeat(np.cumsum(wrapping) - wrapping, wrapping) + (counts - wrapping)[owner])
        words = starts[owner, None] + (first[:, None] + np.arange(k)) % counts[owner, None]
        out[~inside] = gram_fingerprints(hashes[words.ravel()], k)[::k]
    return out
