"""Words and word hashes: definitions §0's tokenisation, in plain Python + mmh3, and batched in numpy.

Words are maximal runs of Unicode letters and digits (``[^\\W_]+``), lower-cased.
Each distinct word is hashed once per process with seeded 64-bit MurmurHash3
and memoised, since web text is Zipfian: most tokens are repeats.

``batch_word_hashes`` gives the same hashes for a batch of texts without a Python object
per word: the lower-cased texts' UTF-8 bytes are classified in numpy (a table of every code
point's ``[^\\W_]`` membership, built from the regular expression itself), and the words'
bytes are hashed by the vectorised MurmurHash3 of ``kernel.murmur``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import mmh3
import numpy as np

from quiltdetect.kernel.murmur import PAD, hash64_many

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


_ASCII_WORD = np.zeros(256, dtype=bool)
_ASCII_WORD[np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", dtype=np.uint8)] = True
_CODE_POINT_WORD: dict[int, np.ndarray] = {}


def _code_point_word(size: int) -> np.ndarray:
    """bool (size,): whether ``WORD_RE`` matches each code point below ``size`` (0x10000, the
    Basic Multilingual Plane, or 0x110000: all), built once per process from the expression."""
    table = _CODE_POINT_WORD.get(size)
    if table is None:
        table = np.zeros(size, dtype=bool)
        for m in WORD_RE.finditer("".join(map(chr, range(size)))):
            table[m.start():m.end()] = True
        _CODE_POINT_WORD[size] = table
    return table


def _word_bytes(buf: np.ndarray) -> np.ndarray:
    """Whether each byte of valid UTF-8 ``buf`` belongs to a word character."""
    inword = _ASCII_WORD[buf]
    leads = np.flatnonzero(buf >= 0xC0)  # the first byte of every non-ASCII character
    if leads.size:
        first = buf[leads].astype(np.int64)
        width = 2 + (first >= 0xE0) + (first >= 0xF0)
        point = first & np.where(width == 2, 0x1F, np.where(width == 3, 0x0F, 0x07))
        for j in (1, 2, 3):
            more = width > j
            point = np.where(more, (point << 6) | (buf[np.minimum(leads + j, buf.shape[0] - 1)] & 0x3F), point)
        word = _code_point_word(0x10000 if int(point.max()) < 0x10000 else 0x110000)[point]
        for j in range(4):
            part = width > j
            inword[leads[part] + j] = word[part]
    return inword


def _word_spans(texts: Sequence[str | None], lowered: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(the lower-cased texts' UTF-8 bytes one after the other, padded for the hash's loads;
    each word's start and end in them; words per text as int64)."""
    encoded = [(t if lowered else t.lower()).encode() if t else b"" for t in texts]
    sizes = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    total = int(offsets[-1])
    if total == 0:
        empty = np.empty(0, dtype=np.int64)
        return np.zeros(0, dtype=np.uint8), empty, empty, np.zeros(len(encoded), dtype=np.int64)
    buf = np.frombuffer(b"".join([*encoded, bytes(PAD)]), dtype=np.uint8)  # one copy, padded for the loads
    inword = _word_bytes(buf[:total])
    # a word starts where a word byte follows a non-word byte or a text's start, and ends likewise
    before = np.zeros(total, dtype=bool)
    before[1:] = inword[:-1]
    after = np.zeros(total, dtype=bool)
    after[:-1] = inword[1:]
    cuts = offsets[1:-1][offsets[1:-1] < total]
    before[cuts] = False
    after[cuts[cuts > 0] - 1] = False
    starts = np.flatnonzero(inword & ~before)
    ends = np.flatnonzero(inword & ~after) + 1
    counts = np.diff(np.searchsorted(starts, offsets))
    return buf, starts, ends, counts.astype(np.int64)


def batch_word_hashes(texts: Sequence[str | None], lowered: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(hashes of every text's words one after the other as uint64, words per text as int64).

    Equal to concatenating ``word_hashes(t)`` for every text (tested), at a fraction of the
    cost: one ``str.lower`` and UTF-8 encoding per text, the rest numpy over the batch.
    ``lowered``: the caller has already applied ``str.lower`` to every text.
    """
    buf, starts, ends, counts = _word_spans(texts, lowered)
    if starts.shape[0] == 0:
        return np.empty(0, dtype=np.uint64), counts
    return hash64_many(buf, starts, ends - starts, WORD_SEED), counts


def batch_words(texts: Sequence[str | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(every text's words one after the other as UTF-8 bytes, the words' offsets in them
    (int64, n_words + 1), words per text (int64)): ``words(t)`` of every text without a Python
    object per word, ready to be an Arrow large_string array (``pyarrow.LargeStringArray.from_buffers``).
    """
    buf, starts, ends, counts = _word_spans(texts, False)
    lengths = ends - starts
    offsets = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if starts.shape[0] == 0:
        return np.zeros(0, dtype=np.uint8), offsets, counts
    # every word byte belongs to exactly one word, in order: the words are the word bytes
    ramp = np.arange(int(offsets[-1]), dtype=np.int64) - np.repeat(offsets[:-1] - starts, lengths)
    return buf[ramp], offsets, counts
