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
from collections.abc import Callable, Sequence

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


_CODE_POINT_WORD: dict[int, np.ndarray] = {}
_CODE_POINT_LOWERS: dict[int, np.ndarray] = {}


def _code_point_table(cache: dict[int, np.ndarray], size: int, build: Callable[[int], np.ndarray]) -> np.ndarray:
    table = cache.get(size)
    if table is None:
        table = cache[size] = build(size)
    return table


def _word_table(size: int) -> np.ndarray:
    table = np.zeros(size, dtype=bool)
    for m in WORD_RE.finditer("".join(map(chr, range(size)))):
        table[m.start():m.end()] = True
    return table


def _lowers_table(size: int) -> np.ndarray:
    chars = [chr(p) for p in range(size)]
    return np.fromiter((c.lower() != c for c in chars), dtype=bool, count=size)


def _code_point_word(size: int) -> np.ndarray:
    """bool (size,): whether ``WORD_RE`` matches each code point below ``size`` (0x10000, the
    Basic Multilingual Plane, or 0x110000: all), built once per process from the expression."""
    return _code_point_table(_CODE_POINT_WORD, size, _word_table)


def _code_point_lowers(size: int) -> np.ndarray:
    """bool (size,): whether ``str.lower`` changes each code point below ``size``, built once
    per process from ``str.lower`` itself."""
    return _code_point_table(_CODE_POINT_LOWERS, size, _lowers_table)


def _table_size(points: np.ndarray) -> int:
    return 0x10000 if int(points.max()) < 0x10000 else 0x110000


def _non_ascii(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offset of each non-ASCII character's first byte in valid UTF-8 ``buf``, its width in
    bytes, its code point), decoded in numpy."""
    leads = np.flatnonzero(buf >= 0xC0)
    if not leads.size:
        return leads, leads, leads
    first = buf[leads].astype(np.int64)
    width = 2 + (first >= 0xE0) + (first >= 0xF0)
    point = first & np.where(width == 2, 0x1F, np.where(width == 3, 0x0F, 0x07))
    for j in (1, 2, 3):
        more = width > j
        point = np.where(more, (point << 6) | (buf[np.minimum(leads + j, buf.shape[0] - 1)] & 0x3F), point)
    return leads, width, point


def _word_bytes(buf: np.ndarray, non_ascii: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """Whether each byte of valid UTF-8 ``buf`` belongs to a word character (``non_ascii``:
    ``_non_ascii(buf)``). ASCII by arithmetic: [0-9A-Za-z], in a few passes over the bytes."""
    folded = buf | np.uint8(0x20)
    folded -= np.uint8(ord("a"))
    inword = folded < 26
    np.subtract(buf, np.uint8(ord("0")), out=folded)
    inword |= folded < 10
    leads, width, point = non_ascii
    if leads.size:
        word = _code_point_word(_table_size(point))[point]
        for j in range(4):
            part = width > j
            inword[leads[part] + j] = word[part]
    return inword


def _joined(encoded: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """(the byte strings one after the other, each followed by a NUL, then ``PAD`` zero bytes,
    as a writable uint8 array; where each string starts, with the total length last)."""
    sizes = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(sizes + 1, out=offsets[1:])
    return np.frombuffer(bytearray(b"\x00".join([*encoded, bytes(PAD)])), dtype=np.uint8), offsets


def _word_spans(texts: Sequence[str | None], lowered: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(the lower-cased texts' UTF-8 bytes, each followed by a NUL and the whole padded for the
    hash's loads; each word's start and end in them; words per text as int64).

    Lower-casing is ``str.lower``'s, done cheaply: ASCII letters in numpy, and ``str.lower``
    only for the texts holding a non-ASCII character that it changes (a few percent of web
    pages), found with a table of every code point built from ``str.lower`` itself. A text
    without such a character lower-cases to the same string either way (ASCII case mapping is
    per character), and no character lowers to an upper-case ASCII letter.
    """
    encoded = [t.encode() if t else b"" for t in texts]
    buf, offsets = _joined(encoded)
    total = int(offsets[-1])
    non_ascii = _non_ascii(buf[:total])
    if not lowered and non_ascii[0].size:
        leads, _, point = non_ascii
        changed = leads[_code_point_lowers(_table_size(point))[point]]
        if changed.size:
            resized = False
            for i in np.unique(np.searchsorted(offsets, changed, side="right") - 1).tolist():
                text = texts[i].lower().encode()
                resized |= len(text) != len(encoded[i])
                encoded[i] = text
                if not resized:  # (Cyrillic, Greek, Latin-1 letters keep their width)
                    buf[offsets[i]:offsets[i] + len(text)] = np.frombuffer(text, dtype=np.uint8)
            if resized:
                buf, offsets = _joined(encoded)
                total = int(offsets[-1])
            non_ascii = _non_ascii(buf[:total])
    body = buf[:total]
    if not lowered:  # A-Z -> a-z; what str.lower did to the texts above leaves none
        upper = (body - np.uint8(ord("A"))) < 26
        np.bitwise_or(body, np.uint8(0x20), out=body, where=upper)
    # Words are the runs of word bytes; the NUL after each text ends its last word. A run starts
    # where a word byte follows a non-word byte, ends where a non-word byte follows a word byte.
    inword = np.zeros(total + 1, dtype=bool)
    inword[1:] = _word_bytes(body, non_ascii)
    edges = np.flatnonzero(inword[1:] ^ inword[:-1])
    starts, ends = edges[0::2], edges[1::2]
    counts = np.diff(np.searchsorted(starts, offsets))
    return buf, starts, ends, counts.astype(np.int64)


def batch_word_hashes(texts: Sequence[str | None], lowered: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(hashes of every text's words one after the other as uint64, words per text as int64).

    Equal to concatenating ``word_hashes(t)`` for every text (tested), at a fraction of the
    cost: one UTF-8 encoding per text (and ``str.lower`` for the few it changes: ``_word_spans``),
    the rest numpy over the batch.
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
