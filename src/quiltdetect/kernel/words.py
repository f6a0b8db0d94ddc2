"""Words and word hashes: definitions §0's tokenisation, in plain Python + mmh3.

Words are maximal runs of Unicode letters and digits (``[^\\W_]+``), lower-cased.
Each distinct word is hashed once per process with seeded 64-bit MurmurHash3
and memoised, since web text is Zipfian: most tokens are repeats.
"""

from __future__ import annotations

import re

import mmh3
import numpy as np

WORD_RE = re.compile(r"[^\W_]+")
WORD_SEED = 0x5157_4C54  # "QWLT": fixed so fingerprints are stable across runs and machines
MEMO_LIMIT = 2_000_000  # distinct words kept in the per-process memo before it is reset


def words(text: str | None) -> list[str]:
    """The words of ``text``: maximal runs of letters/digits, lower-cased."""
    if not text:
        return []
    return WORD_RE.findall(text.lower())


class _WordHashMemo(dict):
    """word -> uint64 hash, computed on first use (``__missing__`` keeps lookups in C)."""

    def __missing__(self, word: str) -> int:
        if len(self) >= MEMO_LIMIT:
            self.clear()
        value = mmh3.hash64(word, WORD_SEED, signed=False)[0]
        self[word] = value
        return value


_MEMO = _WordHashMemo()


def hash_word(word: str) -> int:
    """The 64-bit (unsigned) hash of one word."""
    return mmh3.hash64(word, WORD_SEED, signed=False)[0]


def term_hashes(terms: list[str]) -> np.ndarray:
    """Hashes of already-split terms in order (memoised): uint64 array of shape (n_terms,)."""
    if not terms:
        return np.empty(0, dtype=np.uint64)
    return np.fromiter(map(_MEMO.__getitem__, terms), dtype=np.uint64, count=len(terms))


def word_hashes(text: str | None) -> np.ndarray:
    """Hashes of the words of ``text`` in order: uint64 array of shape (n_words,)."""
    return term_hashes(words(text))
