"""Every (θ, c) from bucket counts: Theorems 1-2 as suffix sums (no Spark, small arrays).

A pass over a corpus puts each document with patchfrac >= min θ and at least min c sources
into one cell (i, j): i = the largest θ index with θ_i <= patchfrac, j = the largest c index
with c_j <= |sources|. A document is (θ_i, c_j)-quilted iff its cell is >= (i, j) in both
coordinates, so the counts of the whole grid are 2-D suffix sums of the cell counts.
"""

from __future__ import annotations

import numpy as np


def suffix_sums(cells: np.ndarray) -> np.ndarray:
    """``out[i, j] = cells[i:, j:].sum()`` for a 2-D array (any numeric dtype)."""
    return cells[::-1, ::-1].cumsum(axis=0).cumsum(axis=1)[::-1, ::-1]


def grid_counts(
    cells: list[tuple[int, int, int, int]], n_thetas: int, n_cs: int
) -> tuple[np.ndarray, np.ndarray]:
    """(quilted, total sources) of every (θ_i, c_j) from rows (i, j, documents, sum of sources).

    Returns two int64 arrays of shape (n_thetas, n_cs).
    """
    count = np.zeros((n_thetas, n_cs), dtype=np.int64)
    sources = np.zeros((n_thetas, n_cs), dtype=np.int64)
    for i, j, n, s in cells:
        count[i, j] += n
        sources[i, j] += s
    return suffix_sums(count), suffix_sums(sources)


def grid_breaks(
    transitions: list[tuple[int, int, int, int, int]], n_thetas: int, n_cs: int
) -> np.ndarray:
    """Documents quilted at the smaller m but not at the larger one, for every (θ_i, c_j).

    ``transitions``: rows (i_before, j_before, i_after, j_after, documents), with -1 for
    "below every value" (or excluded). Returns int64 (n_thetas, n_cs).
    """
    out = np.zeros((n_thetas, n_cs), dtype=np.int64)
    ii = np.arange(n_thetas)[:, None]
    jj = np.arange(n_cs)[None, :]
    for ib, jb, ia, ja, n in transitions:
        before = (ii <= ib) & (jj <= jb)
        after = (ii <= ia) & (jj <= ja)
        out += n * (before & ~after)
    return out
