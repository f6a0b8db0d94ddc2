"""Filtering and verification kernels (the paper's phases 2 and 3), numpy only.

A canonical record is a pair of arrays: int term ids ascending in the global order
(increasing document frequency) and their float64 normalised weights (summing to 1).

The paper borrows prefix and positional filtering from Jaccard joins (Xiao et al.),
where they count terms. Counted on terms they are not sound for a weighted overlap, so
the shipped filters bound weights instead (the proofs are in docs/mwo.md):

* ``rem(q)`` = the weight of a record from position q to its end.
* weighted prefix: positions q with ``rem(q) >= t``. If MWO(r, s) >= t, the first term
  r and s share (in the global order) lies in both prefixes, so a candidate generator
  that meets records on prefix terms loses no pair.
* weighted positional bound: common terms before a shared term x come before x in both
  records, so MWO(r, s) <= Σ over the shared prefix terms of min(w_r, w_s) + min(weight
  of r after the last of them, weight of s after it); a candidate below t is dropped.

``EPS`` widens both tests so that rounding in the suffix sums never drops a pair;
verification itself is exact-rounded (``math.fsum``), so every path returns the same
MWO bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

EPS = 1e-9  # slack of the filter bounds against rounding in suffix sums


def suffix_weights(weights: np.ndarray) -> np.ndarray:
    """rem: float64 [n], rem[q] = sum of weights[q:] (the weight from position q on)."""
    w = np.asarray(weights, dtype=np.float64)
    return np.cumsum(w[::-1])[::-1].copy() if len(w) else np.zeros(0, dtype=np.float64)


def prefix_length(weights: np.ndarray, t: float) -> int:
    """Length of the weighted prefix: the positions whose suffix weight is >= t (- EPS)."""
    return int(np.count_nonzero(suffix_weights(weights) >= t - EPS))


def positional_bound(ids_r: np.ndarray, w_r: np.ndarray, ids_s: np.ndarray, w_s: np.ndarray, t: float) -> float:
    """The weighted positional bound of a pair (inf-free; 0 when their prefixes share nothing).

    Σ over the terms in both weighted prefixes of min(w_r, w_s), plus the smaller of the two
    records' weights after the last such term. MWO(r, s) never exceeds it (docs/mwo.md).
    """
    n_r, n_s = prefix_length(w_r, t), prefix_length(w_s, t)
    _, ia, ib = np.intersect1d(ids_r[:n_r], ids_s[:n_s], assume_unique=True, return_indices=True)
    if not len(ia):
        return 0.0
    rem_r, rem_s = suffix_weights(w_r), suffix_weights(w_s)
    overlap = float(np.minimum(np.asarray(w_r)[ia], np.asarray(w_s)[ib]).sum())
    p, q = int(ia.max()), int(ib.max())
    return overlap + min(rem_r[p] - w_r[p], rem_s[q] - w_s[q])


def mwo(ids_a: np.ndarray, w_a: np.ndarray, ids_b: np.ndarray, w_b: np.ndarray) -> float:
    """Minimum weight overlap: sum over shared terms of the smaller normalised weight.

    ``ids_*`` are unique term ids (any order); the sum is exact-rounded, so the value does
    not depend on the order of the terms.
    """
    _, ia, ib = np.intersect1d(ids_a, ids_b, assume_unique=True, return_indices=True)
    if not len(ia):
        return 0.0
    return math.fsum(np.minimum(np.asarray(w_a)[ia], np.asarray(w_b)[ib]).tolist())


def paper_prefix_length(n: int, t: float) -> int:
    """The paper's count-based prefix length |r| - floor(t·|r|) + 1 (capped at |r|), eq. (1)."""
    return min(n, n - math.floor(t * n) + 1)


def paper_positional_ok(n_r: int, n_s: int, p: int, q: int, t: float) -> bool:
    """The paper's count-based positional test, eq. (2)-(3), positions p, q counted from 1."""
    return 1 + min(n_r - p, n_s - q) >= t / (1 + t) * (n_r + n_s)
