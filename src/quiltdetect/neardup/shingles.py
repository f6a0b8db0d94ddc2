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
