"""Arrow list columns as CSR arrays (offsets + flat values), the layout every MWO kernel takes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def flat(column: pa.ListArray | pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """(offsets int64 [n+1] from 0, the values of those rows) of a list column without null rows.

    Zero-copy where Arrow allows: a slice of a list array keeps its parent's values buffer, so
    the offsets are rebased and the values cut to the rows'.
    """
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    offsets = column.offsets.to_numpy().astype(np.int64)
    return offsets - offsets[0], column.values.slice(offsets[0], offsets[-1] - offsets[0])


def flat_numpy(column: pa.ListArray | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """``flat`` with the values as a numpy array (numbers)."""
    offsets, values = flat(column)
    return offsets, values.to_numpy(zero_copy_only=False)
