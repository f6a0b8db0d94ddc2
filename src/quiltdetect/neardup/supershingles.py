"""Min-hashing and supershingles (Broder; Henzinger's Algorithm B).

m = 84 min-hash functions: h_i(x) = (x XOR s_i) * a_i mod 2**64 with fixed seeded 64-bit s_i
and odd a_i: a bijection of 64-bit words, so each h_i is a permutation of fingerprints. Two
operations per value (fmix64 would be nine): shingle fingerprints are already mixed hashes,
and the multiply carries every bit of x into the high bits that decide the minimum. The 84
minvalues are split into 6 runs of 14; each run's fingerprint (a chained fmix64, seeded by
its index) is a supershingle. B-similarity = number of positions with equal supershingles.
"""

from __future__ import annotations

import numpy as np

from quiltdetect.kernel.grams import fmix64

N_MINHASH = 84
N_SUPERSHINGLES = 6
RUN = N_MINHASH // N_SUPERSHINGLES  # 14 minvalues per supershingle
MINHASH_SEED = 0x4E44_5550  # "NDUP"
CHUNK = 4096  # shingles per block of the (84 x block) matrix: bounds memory for huge pages
BATCH_BLOCK = 8192  # values per shared block in batch_minvalues (measured best of 2k-32k)

_MIX = np.uint64(0x9E3779B97F4A7C15)


def selector_seeds(n: int, seed: int) -> np.ndarray:
    """n seeded uint64 values: the min-hash selectors' seeds and multipliers (shared with phrases/)."""
    return np.random.default_rng(seed).integers(0, 2**64, size=n, dtype=np.uint64)


MINHASH_SEEDS = selector_seeds(N_MINHASH, MINHASH_SEED)  # uint64 (84,), the s_i
MINHASH_MULTIPLIERS = selector_seeds(N_MINHASH, MINHASH_SEED + 2) | np.uint64(1)  # uint64 (84,), odd a_i
SUPERSHINGLE_SEEDS = selector_seeds(N_SUPERSHINGLES, MINHASH_SEED + 1)  # uint64 (6,)


def minvalues(shingle_set: np.ndarray, seeds: np.ndarray = MINHASH_SEEDS,
              multipliers: np.ndarray = MINHASH_MULTIPLIERS) -> np.ndarray:
    """The minvalues of a non-empty shingle set under each selector (x ^ s_i) * a_i:
    uint64 (84,) with the supershingle selectors, or as many as ``seeds`` has."""
    if shingle_set.shape[0] == 0:
        raise ValueError("minvalues of an empty shingle set")
    out = np.full(seeds.shape[0], np.iinfo(np.uint64).max, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for start in range(0, shingle_set.shape[0], CHUNK):
            block = (shingle_set[None, start : start + CHUNK] ^ seeds[:, None]) * multipliers[:, None]
            np.minimum(out, block.min(axis=1), out=out)
    return out


def batch_minvalues(values: np.ndarray, counts: np.ndarray, seeds: np.ndarray = MINHASH_SEEDS,
                    multipliers: np.ndarray = MINHASH_MULTIPLIERS) -> np.ndarray:
    """``minvalues`` of several value sets at once: uint64 (d, len(seeds)) for the d sets.

    ``values``: uint64, the sets one after the other (repeats allowed: they do not change a
    minimum); ``counts``: int (d,), each >= 1. Sets are hashed up to BATCH_BLOCK values at a
    time and reduced per set with ``np.minimum.reduceat``, so small sets share one matrix; a
    set larger than BATCH_BLOCK goes through ``minvalues`` alone (bounded memory).
    """
    counts = np.asarray(counts, dtype=np.int64)
    if counts.shape[0] and int(counts.min()) < 1:
        raise ValueError("batch_minvalues needs non-empty sets")
    offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    out = np.empty((counts.shape[0], seeds.shape[0]), dtype=np.uint64)
    # one block's hashes, written in place: allocating each block anew cost as much as the hashing
    block = np.empty((seeds.shape[0], min(BATCH_BLOCK, int(offsets[-1]))), dtype=np.uint64)
    seeds, multipliers = seeds[:, None], multipliers[:, None]
    d = 0
    with np.errstate(over="ignore"):
        while d < counts.shape[0]:
            if counts[d] > BATCH_BLOCK:
                out[d] = minvalues(values[offsets[d] : offsets[d + 1]], seeds[:, 0], multipliers[:, 0])
                d += 1
                continue
            # the sets d..e-1 fit in one block of at most BATCH_BLOCK values
            e = max(d + 1, int(np.searchsorted(offsets, offsets[d] + BATCH_BLOCK, side="right")) - 1)
            hashed = block[:, : offsets[e] - offsets[d]]
            np.bitwise_xor(values[None, offsets[d] : offsets[e]], seeds, out=hashed)
            np.multiply(hashed, multipliers, out=hashed)
            out[d:e] = np.minimum.reduceat(hashed, offsets[d:e] - offsets[d], axis=1).T
            d = e
    return out


def odd_inverses(multipliers: np.ndarray) -> np.ndarray:
    """b_i with a_i * b_i = 1 mod 2**64 for odd a_i (Newton's iteration, 6 steps for 64 bits)."""
    if not np.all(multipliers & np.uint64(1)):
        raise ValueError("only odd multipliers are invertible mod 2**64")
    inverse = multipliers.copy()  # right to 3 bits, since a * a = 1 mod 8 for odd a
    with np.errstate(over="ignore"):
        for _ in range(6):
            inverse = inverse * (np.uint64(2) - multipliers * inverse)
    return inverse


def preimages(minvals: np.ndarray, seeds: np.ndarray, inverses: np.ndarray) -> np.ndarray:
    """The value x with h_i(x) = minvals[..., i] for each selector (h_i is a bijection):
    the shingle each selector chose, without an argmin. ``inverses``: ``odd_inverses(a)``."""
    with np.errstate(over="ignore"):
        return (minvals * inverses) ^ seeds


def runs_of(minvals: np.ndarray, n_runs: int, seeds: np.ndarray) -> np.ndarray:
    """One fingerprint per run of consecutive minvalues (a chained fmix64 seeded by the run's
    seed): uint64 (..., n_runs * r) -> uint64 (..., n_runs). Supershingles and LSH bands."""
    runs = minvals.reshape(*minvals.shape[:-1], n_runs, minvals.shape[-1] // n_runs)
    with np.errstate(over="ignore"):
        acc = fmix64(runs[..., 0] ^ seeds)
        for j in range(1, runs.shape[-1]):
            acc = fmix64((acc * _MIX) ^ runs[..., j])
    return acc


def supershingles_of(minvals: np.ndarray) -> np.ndarray:
    """Supershingles of minvalue rows: uint64 (d, 84) -> uint64 (d, 6) (also 1-D (84,) -> (6,))."""
    return runs_of(minvals, N_SUPERSHINGLES, SUPERSHINGLE_SEEDS)


def supershingles(shingle_set: np.ndarray) -> np.ndarray | None:
    """The 6 supershingles of a page (uint64 (6,)), or None when it has no shingles."""
    if shingle_set.shape[0] == 0:
        return None
    return supershingles_of(minvalues(shingle_set))


def b_similarity(a: np.ndarray | None, b: np.ndarray | None) -> int:
    """Number of equal supershingles (0-6); 0 when either page has none."""
    if a is None or b is None:
        return 0
    return int(np.count_nonzero(np.asarray(a) == np.asarray(b)))
