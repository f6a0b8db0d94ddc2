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

* the l-prefix filter (Wang, Li and Feng 2012, adapted to weights): a pair with MWO >= t
  shares at least l_r terms of r's *extended* prefix, the positions with ``rem >= t - S_r``,
  where S_r is the sum of r's l_r - 1 heaviest weights and l_r the largest l' <= l with
  S_r(l' - 1) < t. Candidates must share min(l_r, l_s) terms of both extended prefixes;
  l = 1 is the plain weighted prefix. A longer prefix, far fewer candidates.

``EPS`` widens both tests so that rounding in the suffix sums never drops a pair;
verification itself is exact-rounded (``math.fsum``), so every path returns the same
MWO bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
from scipy import sparse

EPS = 1e-9  # slack of the filter bounds against rounding in suffix sums


def suffix_weights(weights: np.ndarray) -> np.ndarray:
    """rem: float64 [n], rem[q] = sum of weights[q:] (the weight from position q on)."""
    w = np.asarray(weights, dtype=np.float64)
    return np.cumsum(w[::-1])[::-1].copy() if len(w) else np.zeros(0, dtype=np.float64)


def prefix_length(weights: np.ndarray, t: float) -> int:
    """Length of the weighted prefix: the positions whose suffix weight is >= t (- EPS)."""
    return int(np.count_nonzero(suffix_weights(weights) >= t - EPS))


def extended_prefix(weights: np.ndarray, t: float, ell: int) -> tuple[int, int]:
    """(length, l_r) of a record's extended prefix for the l-prefix filter at t.

    l_r is the largest l' in 1..ell whose l' - 1 heaviest weights sum below t (a pair with
    MWO >= t then shares at least l_r terms); the prefix keeps the positions whose suffix
    weight is >= t minus that sum. ``ell = 1`` gives ``(prefix_length(weights, t), 1)``.
    """
    w = np.asarray(weights, dtype=np.float64)
    heaviest = np.concatenate(([0.0], np.cumsum(np.sort(w)[::-1][: max(ell - 1, 0)])))
    ell_r = int(np.count_nonzero(heaviest < t - EPS)) or 1
    return int(np.count_nonzero(suffix_weights(w) >= t - heaviest[ell_r - 1] - EPS)), ell_r


def shares_enough(ids_r: np.ndarray, w_r: np.ndarray, ids_s: np.ndarray, w_s: np.ndarray, t: float,
                  ell: int) -> bool:
    """The l-prefix filter: do r and s share min(l_r, l_s) terms of their extended prefixes?"""
    (n_r, l_r), (n_s, l_s) = extended_prefix(w_r, t, ell), extended_prefix(w_s, t, ell)
    return len(np.intersect1d(ids_r[:n_r], ids_s[:n_s], assume_unique=True)) >= min(l_r, l_s)


def _length_groups(offsets: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(records, their element indexes as a records x L matrix) for each record length L > 0
    of a CSR layout: a dense matrix per length, so per-record sums run as row operations."""
    offsets = np.asarray(offsets, dtype=np.int64)
    lengths = np.diff(offsets)
    order = np.argsort(lengths, kind="stable")
    for group in np.split(order, np.flatnonzero(np.diff(lengths[order])) + 1):
        if group.shape[0] and lengths[group[0]] > 0:
            yield group, offsets[group][:, None] + np.arange(lengths[group[0]], dtype=np.int64)


def suffix_weights_batch(offsets: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``suffix_weights`` of every record of a CSR layout, bit for bit: each row of a matrix is
    accumulated in the same order as the record alone."""
    rem = np.empty(weights.shape[0], dtype=np.float64)
    for _, at in _length_groups(offsets):
        rem[at] = np.cumsum(weights[at][:, ::-1], axis=1)[:, ::-1]
    return rem


def prefix_block(weights: list[np.ndarray], ids: list[np.ndarray], t: float, ell: int) -> dict[str, np.ndarray]:
    """The extended prefixes at t of a block of canonical records, in CSR form.

    ``offsets`` (int64, one more than records), ``terms`` (int32), ``weights`` and ``afters``
    (float64: each term's weight, the record's weight after it), ``ells`` (int32, l_r).
    """
    lengths = np.fromiter(map(len, weights), dtype=np.int64, count=len(weights))
    offsets = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    flat_w = np.concatenate(weights).astype(np.float64) if weights else np.zeros(0, dtype=np.float64)
    flat_ids = np.concatenate(ids).astype(np.int32) if ids else np.zeros(0, dtype=np.int32)
    return prefix_block_csr(offsets, flat_ids, flat_w, t, ell)


def prefix_block_csr(offsets: np.ndarray, ids: np.ndarray, weights: np.ndarray, t: float,
                     ell: int) -> dict[str, np.ndarray]:
    """``prefix_block`` of records given as CSR arrays (offsets, term ids, weights), without a
    numpy call per record; every figure equals ``extended_prefix``'s bit for bit."""
    offsets = np.asarray(offsets, dtype=np.int64)
    n = offsets.shape[0] - 1
    rem = suffix_weights_batch(offsets, weights)
    # heaviest[r, j]: the sum of r's j heaviest weights (inf past its length: never below t)
    heaviest = np.full((n, max(ell, 1)), np.inf)
    heaviest[:, 0] = 0.0
    for records, at in _length_groups(offsets):
        top = np.sort(weights[at], axis=1)[:, ::-1][:, : max(ell - 1, 0)]
        heaviest[records, 1: 1 + top.shape[1]] = np.cumsum(top, axis=1)
    ells = np.maximum(np.count_nonzero(heaviest < t - EPS, axis=1), 1)
    cut = t - heaviest[np.arange(n), ells - 1] - EPS
    record = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
    keep = rem >= cut[record]  # rem falls along a record: a prefix of it
    lengths = np.bincount(record[keep], minlength=n)
    return {"offsets": np.concatenate(([0], np.cumsum(lengths, dtype=np.int64))),
            "terms": np.asarray(ids, dtype=np.int32)[keep], "weights": weights[keep],
            "afters": (rem - weights)[keep], "ells": ells.astype(np.int32)}


def ragged_take(offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, element indexes) of the segments ``rows`` of a CSR layout, in that order."""
    offsets = np.asarray(offsets, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    lengths = offsets[rows + 1] - offsets[rows]
    new = np.concatenate(([0], np.cumsum(lengths)))
    return new, np.repeat(offsets[rows] - new[:-1], lengths) + np.arange(new[-1], dtype=np.int64)


def shared_terms(offsets_a: np.ndarray, ids_a: np.ndarray, offsets_b: np.ndarray,
                 ids_b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pair, index in ids_a, index in ids_b) of every term pair i's two records share.

    Pair i is ``ids_a[offsets_a[i]:offsets_a[i+1]]`` against the same slice of ``ids_b``,
    term ids ascending within a record (canonical order). One search for the whole batch on
    (pair, term id) keys; the matches come out ordered by pair, then term.
    """
    n = len(offsets_a) - 1
    pair_a = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets_a))
    pair_b = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets_b))
    key_a = (pair_a << 32) | np.asarray(ids_a, dtype=np.int64)  # sorted: pairs in order, ids ascending
    key_b = (pair_b << 32) | np.asarray(ids_b, dtype=np.int64)
    if not len(key_a) or not len(key_b):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    pos = np.minimum(np.searchsorted(key_a, key_b), len(key_a) - 1)
    hit = np.flatnonzero(key_a[pos] == key_b)
    return pair_b[hit], pos[hit], hit


def shared_prefix_candidates(offsets_a: np.ndarray, terms_a: np.ndarray, ell_a: np.ndarray,
                             offsets_b: np.ndarray, terms_b: np.ndarray, ell_b: np.ndarray,
                             n_terms: int, same: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """The l-prefix filter between two blocks of records: (rows a, rows b, pairs sharing a term).

    A block holds its records' extended prefixes in CSR form (``offsets``, ``terms``; term ids
    < ``n_terms``) and l_r per record. The shared-term counts of every cross pair are one
    sparse product of the blocks' incidence matrices; returned are the pairs sharing at least
    min(l_a, l_b) terms (a < b when ``same``: a block against itself), and how many pairs
    share any term (what a term self-join would have had to shuffle and aggregate).
    """
    def incidence(offsets: np.ndarray, terms: np.ndarray) -> sparse.csr_matrix:
        ones = np.ones(len(terms), dtype=np.int32)
        return sparse.csr_matrix((ones, np.asarray(terms, dtype=np.int32), np.asarray(offsets, dtype=np.int64)),
                                 shape=(len(offsets) - 1, n_terms))

    counts = incidence(offsets_a, terms_a) @ incidence(offsets_b, terms_b).T  # CSR, one entry per pair sharing
    ell_a, ell_b = np.asarray(ell_a), np.asarray(ell_b)
    if same:
        # A @ A.T is symmetric, and its diagonal holds every record with a prefix term
        sharing = (int(counts.nnz) - int(np.count_nonzero(np.diff(np.asarray(offsets_a)) > 0))) // 2
    else:
        sharing = int(counts.nnz)
    if counts.nnz == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, sharing
    # Nearly every pair shares fewer terms than any record's l: one pass over the counts
    # drops them before a row, a column and two l's are gathered for each entry.
    floor = min(int(ell_a.min()), int(ell_b.min()))
    entry = np.flatnonzero(counts.data >= floor)
    row = np.searchsorted(counts.indptr, entry, side="right") - 1
    col = counts.indices[entry].astype(np.int64)
    ok = counts.data[entry] >= np.minimum(ell_a[row], ell_b[col])
    if same:
        ok &= row < col
    order = np.lexsort((col[ok], row[ok]))
    return row[ok][order], col[ok][order], sharing


def positional_bounds(offsets_a: np.ndarray, terms_a: np.ndarray, w_a: np.ndarray, after_a: np.ndarray,
                      offsets_b: np.ndarray, terms_b: np.ndarray, w_b: np.ndarray, after_b: np.ndarray,
                      rows_a: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
    """The weighted positional bound of each candidate pair (rows_a[i], rows_b[i]), vectorised.

    The blocks are extended-prefix postings in CSR form with each term's weight and the
    record's weight after it; the bound is ``positional_bound`` (docs/mwo.md) for every pair.
    Each candidate's b-side terms are looked up in block a's own (row, term) keys: one block's
    prefixes (~160,000 keys for 2,000 records) stay in cache, where a search among every
    candidate's gathered a-side terms (millions) did not, and the a side is never gathered.
    """
    n = len(rows_a)
    ob, ib = ragged_take(offsets_b, rows_b)
    pair = np.repeat(np.arange(n, dtype=np.int64), np.diff(ob))
    offsets_a = np.asarray(offsets_a, dtype=np.int64)
    row_of = np.repeat(np.arange(len(offsets_a) - 1, dtype=np.int64), np.diff(offsets_a))
    keys_a = (row_of << 32) | np.asarray(terms_a, dtype=np.int64)  # sorted: rows in order, terms ascending
    wanted = (np.asarray(rows_a, dtype=np.int64)[pair] << 32) | np.asarray(terms_b, dtype=np.int64)[ib]
    if not len(keys_a) or not len(wanted):
        return np.zeros(n, dtype=np.float64)
    at_a = np.minimum(np.searchsorted(keys_a, wanted), len(keys_a) - 1)
    hit = keys_a[at_a] == wanted
    pair, ma, mb = pair[hit], at_a[hit], ib[hit]  # ordered by pair, then term
    overlap = np.bincount(pair, weights=np.minimum(np.asarray(w_a)[ma], np.asarray(w_b)[mb]), minlength=n)
    last = np.searchsorted(pair, np.arange(n), "right") - 1
    found = (last >= 0) & (pair[np.maximum(last, 0)] == np.arange(n)) if len(pair) else np.zeros(n, dtype=bool)
    if not found.any():
        return np.zeros(n, dtype=np.float64)
    at = last[found]
    bound = np.zeros(n, dtype=np.float64)
    bound[found] = overlap[found] + np.minimum(np.asarray(after_a)[ma[at]], np.asarray(after_b)[mb[at]])
    return bound


def positional_bound(ids_r: np.ndarray, w_r: np.ndarray, ids_s: np.ndarray, w_s: np.ndarray, t: float,
                     ell: int = 1) -> float:
    """The weighted positional bound of a pair (inf-free; 0 when their prefixes share nothing).

    Σ over the terms in both (extended, for ``ell`` > 1) prefixes of min(w_r, w_s), plus the
    smaller of the two records' weights after the last such term. MWO(r, s) never exceeds it
    (docs/mwo.md): the argument holds for any initial segments.
    """
    n_r, n_s = extended_prefix(w_r, t, ell)[0], extended_prefix(w_s, t, ell)[0]
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


def mwo_batch(offsets_a: np.ndarray, ids_a: np.ndarray, w_a: np.ndarray, offsets_b: np.ndarray,
              ids_b: np.ndarray, w_b: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
    """(pair indexes, MWO) of the pairs of a batch whose MWO >= t (and > 0), vectorised.

    Pair i is record a = ``ids_a[offsets_a[i]:offsets_a[i+1]]`` (term ids ascending, as in a
    canonical record) with its weights, against record b likewise. Shared terms are found for
    the whole batch at once on (pair, term id) keys; the sums are first taken in float64
    (error < 1e-12, far inside the 1e-9 margin) and then, for the pairs within the margin of
    t or above, exact-rounded with ``math.fsum``, so the MWO equals ``mwo`` bit for bit.
    """
    n = len(offsets_a) - 1
    if n <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    pair, ma, mb = shared_terms(offsets_a, ids_a, offsets_b, ids_b)
    smaller = np.minimum(np.asarray(w_a, dtype=np.float64)[ma], np.asarray(w_b, dtype=np.float64)[mb])
    approx = np.bincount(pair, weights=smaller, minlength=n)
    near = np.flatnonzero((approx >= t - EPS) & (np.bincount(pair, minlength=n) > 0))
    if not len(near):
        return near, np.zeros(0, dtype=np.float64)
    bounds = np.searchsorted(pair, np.stack([near, near + 1]))  # each pair's run of shared terms
    exact = np.array([math.fsum(smaller[s:e].tolist()) for s, e in zip(bounds[0], bounds[1], strict=True)])
    keep = (exact >= t) & (exact > 0)
    return near[keep], exact[keep]


def paper_prefix_length(n: int, t: float) -> int:
    """The paper's count-based prefix length |r| - floor(t·|r|) + 1 (capped at |r|), eq. (1)."""
    return min(n, n - math.floor(t * n) + 1)


def paper_positional_ok(n_r: int, n_s: int, p: int, q: int, t: float) -> bool:
    """The paper's count-based positional test, eq. (2)-(3), positions p, q counted from 1."""
    return 1 + min(n_r - p, n_s - q) >= t / (1 + t) * (n_r + n_s)
