"""Charikar's simhash as Henzinger's Algorithm C: a 384-bit sign vector per page.

Each distinct token (by its 64-bit hash h) is projected to 384 pseudo-random +-1 coordinates,
the bits of fmix64(h XOR r_j) for j = 0..5 (fixed seeded r_j), the same for every page. A
page sums its tokens' vectors weighted by token frequency; bit i of the simhash is 1 when
coordinate i is > 0 (a tie, 0, gives 0). C-similarity = 384 - popcount(a XOR b).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from quiltdetect.kernel.grams import fmix64

N_BITS = 384
N_WORDS = N_BITS // 64  # stored as 6 uint64 words (int64 in Spark)
SIMHASH_SEED = 0x4348_4152  # "CHAR"
SIMHASH_SEEDS = np.random.default_rng(SIMHASH_SEED).integers(0, 2**64, size=N_WORDS, dtype=np.uint64)


def token_bits(token_hashes: np.ndarray) -> np.ndarray:
    """The 0/1 projection of each token: uint8 (n, 384), bit i of word w at column 64*w + i."""
    with np.errstate(over="ignore"):
        words = fmix64(token_hashes[:, None] ^ SIMHASH_SEEDS[None, :])  # (n, 6)
    as_bytes = words.astype("<u8").view(np.uint8).reshape(-1, N_WORDS, 8)
    return np.unpackbits(as_bytes, axis=2, bitorder="little").reshape(-1, N_BITS)


def simhash(token_hashes: np.ndarray) -> np.ndarray:
    """The 384-bit simhash of a token sequence (weights = frequencies): uint64 (6,)."""
    if token_hashes.shape[0] == 0:
        return np.zeros(N_WORDS, dtype=np.uint64)
    distinct, counts = np.unique(token_hashes, return_counts=True)
    bits = token_bits(distinct).astype(np.float64)
    # sum of w * (2b - 1) > 0  <=>  2 * (w @ b) > sum(w); integer-exact in float64 below 2**52
    positive = 2.0 * (counts.astype(np.float64) @ bits) > float(counts.sum())
    return pack_bits(positive)


def pack_bits(bits: np.ndarray) -> np.ndarray:
    """bool (384,) -> uint64 (6,), bit i of word w = bits[64*w + i]."""
    packed = np.packbits(bits.reshape(N_WORDS, 64).astype(np.uint8), axis=1, bitorder="little")
    return packed.reshape(-1).view("<u8").astype(np.uint64)


def unpack_bits(words: np.ndarray) -> np.ndarray:
    """uint64 (6,) -> uint8 (384,), the inverse of pack_bits."""
    as_bytes = np.ascontiguousarray(words, dtype="<u8").view(np.uint8)
    return np.unpackbits(as_bytes, bitorder="little")


def c_similarity(a: np.ndarray, b: np.ndarray) -> int:
    """Number of agreeing bits of two simhashes (0-384)."""
    x = np.bitwise_xor(np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64))
    return N_BITS - int(np.unpackbits(x.view(np.uint8)).sum())


def n_pieces(c_threshold: int) -> int:
    """Pieces needed so that every pair with C-similarity >= c_threshold shares one.

    Pairs within d = 384 - t bits share a piece when there are d + 1 pieces (pigeonhole):
    Henzinger's 12 pieces of 32 bits cover t >= 373; a lower t uses more, shorter pieces.
    """
    return max(12, N_BITS - c_threshold + 1)


def pieces(words: np.ndarray, count: int) -> np.ndarray:
    """The simhash cut into ``count`` contiguous pieces of near-equal length, as int64 values.

    Returns int64 (count,); piece p covers bits [p*384//count, (p+1)*384//count), bit j of
    the piece being bit p*384//count + j of the simhash.
    """
    return np.add.reduceat(unpack_bits(words).astype(np.int64) * _piece_weights(count), _starts(count))


@lru_cache(maxsize=64)
def _starts(count: int) -> np.ndarray:
    return (np.arange(count) * N_BITS) // count


@lru_cache(maxsize=64)
def _piece_weights(count: int) -> np.ndarray:
    """2**(position of each bit within its piece), int64 (384,)."""
    starts = np.repeat(_starts(count), np.diff(np.append(_starts(count), N_BITS)))
    return np.left_shift(np.int64(1), np.arange(N_BITS, dtype=np.int64) - starts)
