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
