"""Sampled shingles (Fetterly 2005 §3.2): m min-hash selectors over circular k-word phrases.

A document of n words is a circle of n phrases (its last word is followed by its first), so a
one-word document has one phrase: k repetitions of its word. The phrase fingerprints are the
near-duplicate job's circular shingles (``neardup.shingles`` with ``wrap``); the selectors are
its min-hash family h_i(x) = (x XOR s_i) * a_i mod 2**64, extended past 84 with the same seeded
generator, so selector i is the same function in both analyses. Selector i *selects* the
phrase whose h_i is smallest; the i-th shingle is that phrase's fingerprint (h_i is a
bijection, so the phrase and the paper's minvalue identify each other). The first 84
minvalues give the 6 supershingles of the near-duplicate collapse (§3.3) from the same sample.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from quiltdetect.kernel.grams import gram_fingerprints
from quiltdetect.kernel.words import term_hashes, words
from quiltdetect.neardup.shingles import circular_shingles_batch, shingles
from quiltdetect.neardup.supershingles import (
    CHUNK,
    MINHASH_SEED,
    N_MINHASH,
    batch_minvalues,
    odd_inverses,
    preimages,
    selector_seeds,
    supershingles_of,
)

PHRASE_WORDS = 5  # k, the paper's five-word phrases
N_SHINGLES = N_MINHASH  # m, the paper's 84 selectors


def selectors(m: int) -> tuple[np.ndarray, np.ndarray]:
    """(s_i, a_i) of the first max(m, 84) selectors: uint64 (n,), uint64 (n,) with odd a_i.

    The first 84 are ``neardup.supershingles``' MINHASH_SEEDS / MINHASH_MULTIPLIERS.
    """
    if m < 1:
        raise ValueError(f"the number of shingles m must be >= 1, got {m}")
    n = max(m, N_MINHASH)
    return selector_seeds(n, MINHASH_SEED), selector_seeds(n, MINHASH_SEED + 2) | np.uint64(1)


def select(phrase_set: np.ndarray, seeds: np.ndarray, multipliers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(selected phrases, their minvalues) of a non-empty phrase set: uint64 (n,), uint64 (n,).

    ``phrase_set``: uint64 (p,), distinct phrase fingerprints; one selector per seed.
    """
    if phrase_set.shape[0] == 0:
        raise ValueError("cannot select from an empty phrase set")
    best = np.full(seeds.shape[0], np.iinfo(np.uint64).max, dtype=np.uint64)
    chosen = np.zeros(seeds.shape[0], dtype=np.uint64)
    rows = np.arange(seeds.shape[0])
    with np.errstate(over="ignore"):
        for start in range(0, phrase_set.shape[0], CHUNK):
            block = phrase_set[start : start + CHUNK]
            hashed = (block[None, :] ^ seeds[:, None]) * multipliers[:, None]
            at = hashed.argmin(axis=1)
            low = hashed[rows, at]
            better = low < best
            best[better] = low[better]
            chosen[better] = block[at[better]]
    return chosen, best


@dataclass(frozen=True)
class Sample:
    """One document's sample: n_words; shingles uint64 (m,), the phrase chosen by each
    selector; supershingles uint64 (6,) from the first 84 selectors."""

    n_words: int
    shingles: np.ndarray
    supershingles: np.ndarray


def sample(text: str | None, k: int = PHRASE_WORDS, m: int = N_SHINGLES,
           table: tuple[np.ndarray, np.ndarray] | None = None) -> Sample | None:
    """The sampled shingles of a text, or None when it has no words.

    ``table``: ``selectors(m)``, precomputed by callers that sample many documents.
    """
    return sample_hashes(term_hashes(words(text)), k, m, table)


def sample_hashes(hashes: np.ndarray, k: int = PHRASE_WORDS, m: int = N_SHINGLES,
                  table: tuple[np.ndarray, np.ndarray] | None = None) -> Sample | None:
    """``sample`` of a text given by its word hashes (uint64, in order), for callers that hash
    a batch of texts at once (``kernel.words.batch_word_hashes``)."""
    if hashes.shape[0] == 0:
        return None
    seeds, multipliers = table if table is not None else selectors(m)
    chosen, minvals = select(shingles(hashes, k, wrap=True), seeds, multipliers)
    return Sample(int(hashes.shape[0]), chosen[:m], supershingles_of(minvals[:N_MINHASH]))


@dataclass(frozen=True)
class Samples:
    """The samples of a batch's texts that have words: ``rows`` int64 (d,), their positions in
    the batch; n_words int64 (d,); shingles uint64 (d, m); supershingles uint64 (d, 6)."""

    rows: np.ndarray
    n_words: np.ndarray
    shingles: np.ndarray
    supershingles: np.ndarray


def sample_batch(hashes: np.ndarray, counts: np.ndarray, k: int = PHRASE_WORDS, m: int = N_SHINGLES,
                 table: tuple[np.ndarray, np.ndarray] | None = None) -> Samples:
    """``sample_hashes`` of every text of a batch at once (equal row by row, tested).

    ``hashes``, ``counts``: ``kernel.words.batch_word_hashes`` of the batch. The minvalues of
    all texts come from shared blocks (``batch_minvalues``) and each selected phrase from its
    minvalue by inverting h_i, so no per-text set, sort or argmin is built.
    """
    seeds, multipliers = table if table is not None else selectors(m)
    counts = np.asarray(counts, dtype=np.int64)
    rows = np.flatnonzero(counts > 0)
    n_words = counts[rows]
    minvals = batch_minvalues(circular_shingles_batch(hashes, counts, k), n_words, seeds, multipliers)
    chosen = preimages(minvals, seeds, odd_inverses(multipliers))
    return Samples(rows, n_words, chosen[:, :m], supershingles_of(minvals[:, :N_MINHASH]))


def circular_phrases(tokens: list[str], k: int) -> np.ndarray:
    """The fingerprint of the phrase starting at each word of the circle: uint64 (n,)."""
    hashes = term_hashes(tokens)
    if hashes.shape[0] == 0:
        return np.empty(0, dtype=np.uint64)
    return gram_fingerprints(np.resize(hashes, hashes.shape[0] + k - 1), k)


def phrase_texts(text: str | None, k: int, fingerprints: list[int]) -> list[str | None]:
    """The k words of each phrase fingerprint (signed or unsigned 64-bit) at its first
    position in the text's circle, joined by spaces; None for a fingerprint not in the text."""
    tokens = words(text)
    circle = circular_phrases(tokens, k)
    out: list[str | None] = []
    for fp in fingerprints:
        at = np.flatnonzero(circle == np.uint64(fp & 0xFFFF_FFFF_FFFF_FFFF))
        if at.shape[0] == 0:
            out.append(None)
            continue
        start = int(at[0])
        out.append(" ".join(tokens[(start + j) % len(tokens)] for j in range(k)))
    return out
