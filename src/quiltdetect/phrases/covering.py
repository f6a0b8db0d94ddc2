"""Greedy covering sets of one document's popular shingles (Fetterly 2005 §3.4).

A covering set of f is a set of other documents G such that every popular shingle of f (the
i-th shingle, popular) is the i-th shingle of some g in G. Greedy, as the paper: add the
donor whose shingle set meets the most still-uncovered popular shingles of f; ties go to the
donor meeting more of f's whole shingle set, then to the smallest doc id (doc_keys are
assigned in doc_id order). With the foreign preference a donor on f's own server is added
only when no foreign donor meets anything uncovered: that is exactly a greedy pass over the
foreign donors followed by one over the others, which is how it is computed.

f has at most m popular shingles, so each donor is a boolean row over f's m selectors. Donors
with the same row (and the same foreignness) can never both be picked, since the second
would add nothing: only the best of them by the tie-breaks is kept before the loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import mmh3
import numpy as np


@dataclass(frozen=True)
class CoveringSet:
    """A greedy covering set in pick order.

    donors: int64 (s,) donor ids; covered: int64 (s,) popular shingles newly covered at each
    pick; shared: int64 (s,) shingles of f the donor shares in total; foreign: bool (s,).
    """

    donors: np.ndarray
    covered: np.ndarray
    shared: np.ndarray
    foreign: np.ndarray

    def __len__(self) -> int:
        return int(self.donors.shape[0])

    @property
    def foreign_contribution(self) -> int:
        """Popular shingles covered by foreign donors."""
        return int(self.covered[self.foreign].sum())


def _best_per_row(meets: np.ndarray, shared: np.ndarray, donors: np.ndarray) -> np.ndarray:
    """Indices of the donors to keep: per distinct row of ``meets``, the one with the most
    shared shingles, then the smallest id."""
    order = np.lexsort((donors, -shared))
    packed = np.packbits(meets[order], axis=1)
    _, first = np.unique(packed, axis=0, return_index=True)
    return order[np.sort(first)]


def _greedy(meets: np.ndarray, shared: np.ndarray, donors: np.ndarray, covered: np.ndarray) -> list[tuple[int, int]]:
    """Greedy picks (row index, gain) over one pool of donors; updates ``covered`` in place."""
    picks: list[tuple[int, int]] = []
    while True:
        gain = (meets & ~covered).sum(axis=1)
        best_gain = int(gain.max()) if gain.shape[0] else 0
        if best_gain == 0:
            return picks
        tied = np.flatnonzero(gain == best_gain)
        tied = tied[shared[tied] == shared[tied].max()]
        pick = int(tied[np.argmin(donors[tied])])
        covered |= meets[pick]
        picks.append((pick, best_gain))


def greedy_covering_set(meets: np.ndarray, shared: np.ndarray, donors: np.ndarray,
                        foreign: np.ndarray | None = None) -> CoveringSet:
    """The greedy covering set of one document from its candidate donors.

    meets: bool (d, p), donor j has f's i-th popular shingle as its own i-th shingle;
    shared: int64 (d,), shingles of f (popular or not) the donor shares; donors: int64 (d,)
    distinct ids; foreign: bool (d,) donor on another server, or None for no preference.
    """
    d = donors.shape[0]
    if meets.ndim != 2 or meets.shape[0] != d or shared.shape != (d,):
        raise ValueError(f"meets {meets.shape}, shared {shared.shape} and donors {donors.shape} disagree")
    is_foreign = np.zeros(d, dtype=bool) if foreign is None else np.asarray(foreign, dtype=bool)
    if d == 0 or meets.shape[1] == 0:
        return CoveringSet(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, bool))
    pools = [np.ones(d, dtype=bool)] if foreign is None else [is_foreign, ~is_foreign]
    covered = np.zeros(meets.shape[1], dtype=bool)
    picked: list[int] = []
    gains: list[int] = []
    for pool in pools:
        idx = np.flatnonzero(pool)
        if idx.shape[0] == 0:
            continue
        idx = idx[_best_per_row(meets[idx], shared[idx], donors[idx])]
        for row, gain in _greedy(meets[idx], shared[idx], donors[idx], covered):
            picked.append(int(idx[row]))
            gains.append(gain)
    at = np.asarray(picked, dtype=np.int64)
    return CoveringSet(donors[at].astype(np.int64), np.asarray(gains, dtype=np.int64),
                       shared[at].astype(np.int64), is_foreign[at])


def sample_priority(doc_id: str, seed: int) -> int:
    """A document's place in the seeded uniform sample (smaller first): signed 64-bit mmh3."""
    return mmh3.hash64(doc_id, seed, signed=True)[0]
