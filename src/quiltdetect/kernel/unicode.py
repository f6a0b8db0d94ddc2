"""One Unicode form for every text, and the class of every code point (definitions §0).

``normalise`` is what every analysis reads: invisible format characters removed, NFKC, case
folded. ``code_point_classes`` says, for every code point, what it is to the word rule of
``kernel.words`` (``CharClass``): a separator, a letter or digit of a script written with spaces,
a Han or Kana character (a word of its own), a letter of Thai, Lao, Khmer or Myanmar (cut into
units by ``unit_starts``), or a combining mark (which belongs to the character before it). Both
come from Python's ``unicodedata`` (Unicode 14.0 on Python 3.11, 15.0 on 3.12): the tables that
visit every code point in Python are built once and kept on disk for the next process
(``kernel.stored``); no Spark here.
"""

from __future__ import annotations

import enum
import re
import unicodedata
from collections.abc import Iterator
from functools import cache

import numpy as np

from quiltdetect.kernel.stored import stored

# Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties.txt): characters a renderer
# draws as nothing. With every Cf (format) character they are removed before words are cut:
# a soft hyphen or zero-width space inside a word hides nothing.
_IGNORABLE_RANGES = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)

# Scripts written without spaces between words. In Han and Kana a character is a morpheme or a
# syllable: each is a word of its own (SPACELESS). In Thai, Lao, Khmer and Myanmar a character
# is a letter (LETTER): a run of them (a phrase between spaces) is cut into units of about five
# letters, each letter with its marks, at boundaries that depend only on the letters around them
# (``unit_starts``), so a passage copied from inside a phrase has the source's units from its
# first boundary on. Measured on XQuAD's parallel paragraphs
# (bench/words_scripts.py, docs/definitions.md §0). Tibetan marks its syllables (the tsheg) and
# Hangul puts spaces between words: both are read as words are in spaced scripts.
SPACELESS_RANGES = (
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3005, 0x3007), (0x3021, 0x3029), (0x3031, 0x3035), (0x3038, 0x303C),  # 々〆〇, Suzhou numerals, kana repeat marks
    (0x3040, 0x30FF),  # Hiragana, Katakana (with ー, the prolonged sound mark)
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF),  # CJK unified ideographs, extension A
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x1B000, 0x1B16F),  # Kana supplement, extended-A, small kana extension
    (0x20000, 0x3FFFF),  # CJK extensions B-H, compatibility supplement
)
LETTER_RANGES = (
    (0x0E00, 0x0E7F),  # Thai
    (0x0E80, 0x0EFF),  # Lao
    (0x1000, 0x109F), (0xA9E0, 0xA9FF), (0xAA60, 0xAA7F),  # Myanmar, extended-B, -A
    (0x1780, 0x17FF), (0x19E0, 0x19FF),  # Khmer, Khmer symbols
)

# Hangul jamo: a vowel or final after a syllable composes with it under NFKC.
_JAMO_RANGES = ((0x1100, 0x11FF), (0x3130, 0x318F), (0xA960, 0xA97F), (0xD7B0, 0xD7FF))

class CharClass(enum.IntEnum):
    """What a character is to the word rule (definitions §0), as the uint8 values of
    ``code_point_classes`` (the first five) and of ``kernel.words``' per-text classes (all)."""

    SEPARATOR = 0  # no part of a word
    WORD = 1  # a letter or digit of a script written with spaces (and a mark after one)
    SPACELESS = 2  # a Han or Kana character: a word of its own
    MARK = 3  # a combining mark: belongs to the character before it
    LETTER = 4  # a letter of Thai, Lao, Khmer or Myanmar: cut into units (``unit_starts``)
    CONTINUES = 5  # in a text: a mark after a SPACELESS character
    LETTER_MARK = 6  # in a text: a mark after a LETTER


SEPARATOR, WORD, SPACELESS, MARK, LETTER, CONTINUES, LETTER_MARK = CharClass

# Where a unit of Thai, Lao, Khmer or Myanmar letters starts (definitions §0): at the first
# letter of a run, and at a letter whose pair hash (of its code point and the previous letter's,
# the marks between them left out) is smaller than the pair hashes of the CUT_WINDOW letters on
# each side of it in the run. Boundaries then depend on the six letters around them alone (not
# on where the phrase started), are at least CUT_WINDOW + 1 letters apart, and come about one
# letter in five: measured on XQuAD, a unit is 0.87 of an English word (1.15 units per English
# word) and unrelated Thai paragraphs share as few 5-grams as English ones do.
CUT_WINDOW = 2
_CUT_MULTIPLIERS = (0x9E3779B1, 0x85EBCA77, 0x2C1B3C6D, 0x297A2D39)
_M32 = 0xFFFFFFFF


def pair_hash(previous: int, letter: int) -> int:
    """The 32-bit hash of two consecutive letters' code points (``pair_hashes`` over arrays)."""
    a, b, c, d = _CUT_MULTIPLIERS
    x = ((previous * a) & _M32) ^ ((letter * b) & _M32)
    x ^= x >> 15
    x = (x * c) & _M32
    x ^= x >> 13
    x = (x * d) & _M32
    return x ^ (x >> 16)


def unit_starts(points: list[int]) -> list[bool]:
    """Whether each letter of one run of Thai, Lao, Khmer or Myanmar letters (their code points,
    marks left out) starts a unit: the definition of the boundaries (``batch_unit_starts`` is the
    same over many runs in numpy)."""
    pairs = [0] + [pair_hash(p, q) for p, q in zip(points, points[1:], strict=False)]  # (the first has none)
    n = len(points)
    return [j == 0 or all(pairs[j] < pairs[x] for x in range(max(1, j - CUT_WINDOW), min(n, j + CUT_WINDOW + 1))
                          if x != j) for j in range(n)]


def pair_hashes(previous: np.ndarray, letters: np.ndarray) -> np.ndarray:
    """``pair_hash`` of each pair of code points, as uint32 (uint32 arithmetic wraps as the masks
    of ``pair_hash`` do)."""
    a, b, c, d = (np.uint32(m) for m in _CUT_MULTIPLIERS)
    x = previous.astype(np.uint32, copy=False) * a
    x ^= letters.astype(np.uint32, copy=False) * b
    x ^= x >> np.uint32(15)
    x *= c
    x ^= x >> np.uint32(13)
    x *= d
    x ^= x >> np.uint32(16)
    return x


def batch_unit_starts(points: np.ndarray, first: np.ndarray) -> np.ndarray:
    """``unit_starts`` of many runs at once: ``points``, the letters of the runs one after the
    other; ``first``, whether each starts its run. bool, per letter.

    ``pairs[i]`` is the pair hash of letter i and the letter before it, meaningless for a run's
    first letter, which never starts a unit by this rule (it starts one anyway) and is left out
    of its neighbours' comparisons."""
    n = points.shape[0]
    if n < 2:
        return first.copy()
    pairs = np.empty(n, dtype=np.uint32)
    pairs[0] = 0
    pairs[1:] = pair_hashes(points[:-1], points[1:])
    has_pair = ~first
    smallest = has_pair.copy()
    joined = has_pair[1:].copy()  # letter i + d in the run of letter i, for d = 1, 2, ...
    for d in range(1, min(CUT_WINDOW, n - 1) + 1):
        if d > 1:
            joined = joined[:-1] & has_pair[d:]
        earlier, later = pairs[:-d], pairs[d:]
        # letter i against i + d (which has a pair when both are in one run), and i + d against i
        smallest[:-d] &= ~joined | (earlier < later)
        smallest[d:] &= ~(joined & has_pair[:-d]) | (later < earlier)
    return first | smallest


def _in(ranges: tuple[tuple[int, int], ...], size: int) -> np.ndarray:
    table = np.zeros(size, dtype=bool)
    for low, high in ranges:
        if low < size:
            table[low:min(high, size - 1) + 1] = True
    return table


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" if a != b else re.escape(chr(a)) for a, b in ranges)


def _runs(table: np.ndarray) -> tuple[tuple[int, int], ...]:
    """The (first, last) code points of each run of True in ``table``."""
    edges = np.flatnonzero(np.diff(np.concatenate([[False], table, [False]]).astype(np.int8)))
    return tuple((int(a), int(b) - 1) for a, b in zip(edges[0::2], edges[1::2], strict=True))


FULL = 0x110000  # every code point
BMP = 0x10000  # the Basic Multilingual Plane: the tables a text needs when it has no other


def table_size(points: np.ndarray) -> int:
    """The size of the tables that cover ``points`` (code points): BMP or FULL."""
    return BMP if not points.size or int(points.max()) < BMP else FULL


@stored
def _category_letters(size: int = FULL) -> np.ndarray:
    """uint8 (size, 2): the general category of every code point below ``size`` (``Lu`` ...)."""
    return np.frombuffer("".join(map(unicodedata.category, map(chr, range(size)))).encode("ascii"),
                         dtype=np.uint8).reshape(size, 2)


def _category_is(size: int, name: str) -> np.ndarray:
    letters = _category_letters(size)
    return (letters[:, 0] == ord(name[0])) & (letters[:, 1] == ord(name[1]))


@cache
def _categories(size: int = FULL) -> np.ndarray:
    """The general category's first letter of every code point below ``size``, as bytes."""
    return np.ascontiguousarray(_category_letters(size)[:, 0])


@cache
def _assigned(size: int = FULL) -> np.ndarray:
    """int64: the code points below ``size`` that Unicode gives any property beyond the defaults:
    all but the unassigned (Cn), private-use (Co) and surrogate (Cs) ones, which no mapping,
    decomposition or combining class touches. The tables' loops over code points in Python
    visit only these (about a seventh of them)."""
    unlisted = _category_is(size, "Cn") | _category_is(size, "Co") | _category_is(size, "Cs")
    return np.flatnonzero(~unlisted)


@cache
def ignorable(size: int = FULL) -> np.ndarray:
    """bool (size,): removed before anything else (every Cf, every default ignorable)."""
    return _category_is(size, "Cf") | _in(_IGNORABLE_RANGES, size)


@cache
def _ignorable_re() -> re.Pattern[str]:
    return re.compile(f"[{_char_class(_runs(ignorable()))}]+")


def normalise(text: str, *, strip: bool | None = None, compose: bool = True) -> str:
    """``text`` in the one form every analysis reads: format and default-ignorable characters
    removed, NFKC (compatibility forms folded: full-width ``Ａ`` is ``A``, ``ﬁ`` is ``fi``,
    decomposed ``é`` is the composed one), case folded (``ß`` is ``ss``, ``Σ`` is ``σ``), NFKC
    again where folding undid it. Idempotent (no character normalises or folds into an
    invisible one, so they are removed once).

    ``strip`` / ``compose``: what the caller knows of the text (``kernel.words`` reads it from
    tables): ``strip=False``, it holds no invisible character (None: look); ``compose=False``,
    NFKC leaves its words as they are (``needs_composing`` holds for none of its characters)."""
    if strip or strip is None and _ignorable_re().search(text):
        text = _ignorable_re().sub("", text)
    if compose and not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    for _ in range(3):
        folded = text.casefold()
        if folded == text:
            break
        if unicodedata.is_normalized("NFKC", folded):
            return folded  # (case folding is idempotent: checked over every code point)
        text = unicodedata.normalize("NFKC", folded)  # which may bring capitals back (ℌ is H)
    return text


def compose(text: str) -> str:
    """``text`` in one Unicode form with its case kept: format and default-ignorable characters
    removed, then NFKC. What content-reuse chunks are hashed in (definitions §4)."""
    if text.isascii():
        return text
    text = _ignorable_re().sub("", text)
    return text if unicodedata.is_normalized("NFKC", text) else _ignorable_re().sub(
        "", unicodedata.normalize("NFKC", text))


@cache
def code_point_classes(size: int = FULL) -> np.ndarray:
    """uint8 (size,): SEPARATOR, WORD (a letter or digit: Unicode L* and N*), SPACELESS (a
    letter or digit of Han or Kana), LETTER (one of Thai, Lao, Khmer or Myanmar) or MARK
    (Unicode M*)."""
    first = _categories(size)
    classes = np.zeros(size, dtype=np.uint8)
    classes[(first == ord("L")) | (first == ord("N"))] = WORD
    classes[(classes == WORD) & _in(SPACELESS_RANGES, size)] = SPACELESS
    classes[(classes == WORD) & _in(LETTER_RANGES, size)] = LETTER
    classes[first == ord("M")] = MARK
    return classes


@stored
def combining_classes(size: int = FULL) -> np.ndarray:
    """uint8 (size,): every code point's canonical combining class (0 for a starter)."""
    classes = np.zeros(size, dtype=np.uint8)
    listed = _assigned(size)
    classes[listed] = np.fromiter(map(unicodedata.combining, map(chr, listed.tolist())), dtype=np.uint8,
                                  count=listed.shape[0])
    return classes


@cache
def composes_with_previous(size: int = FULL) -> np.ndarray:
    """bool (size,): the characters NFC may compose with a character before them (Unicode's
    NFC_Quick_Check=Maybe: the second of a precomposed character's canonical pair, as U+0301 of
    ``é`` or U+09BE of ``ো``), found from every code point's decomposition."""
    return _seconds_of_pairs()[:size]


@stored
def _seconds_of_pairs() -> np.ndarray:
    seconds = np.zeros(FULL, dtype=bool)
    listed = _assigned(FULL)
    for p in listed[listed >= 0xC0].tolist():
        parts = unicodedata.decomposition(chr(p)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            first, second = (int(x, 16) for x in parts)
            if unicodedata.normalize("NFC", chr(first) + chr(second)) == chr(p):
                seconds[second] = True
    return seconds


@stored
def needs_composing(size: int = FULL) -> np.ndarray:
    """bool (size,): whether NFKC may change the words of a text holding this code point: one
    that may compose with the character before it (``composes_with_previous``, a Hangul jamo),
    or a character whose compatibility form differs and is, or holds, a letter, digit or mark
    (``ﬁ``, ``½``, full-width ``Ａ``, ``¨``, Thai ``ำ``). A no-break space or an ellipsis
    (separators that become separators) is not, nor is a mark that stays as it is (a virama, a
    Thai tone mark): NFKC changes a text of such marks only where two of them are out of
    canonical order (``out_of_order``). This is Unicode's quick check (UAX #15, 9): a text
    with none of these characters and its marks in order is in NFKC."""
    classes = code_point_classes(size)
    flagged = composes_with_previous(size) | _in(_JAMO_RANGES, size)
    word = classes != SEPARATOR
    listed = _assigned(size)
    for p in listed[(listed >= 0x80) & ~flagged[listed]].tolist():
        c = chr(p)
        n = unicodedata.normalize("NFKC", c)
        if n != c and (word[p] or any(word[ord(x)] if ord(x) < size else True for x in n)):
            flagged[p] = True
    return flagged


def out_of_order(points: np.ndarray, follows: np.ndarray) -> np.ndarray:
    """bool per code point of a text (``follows``: whether each comes right after the one
    before it): whether it is a mark that canonical ordering would move before the mark before
    it (its combining class is lower and not 0)."""
    ccc = combining_classes(table_size(points))[points]
    moved = np.zeros(points.shape[0], dtype=bool)
    moved[1:] = follows[1:] & (ccc[1:] > 0) & (ccc[:-1] > ccc[1:])
    return moved


@stored
def needs_folding(size: int = FULL) -> np.ndarray:
    """bool (size,): whether case folding changes this code point (ASCII letters excepted:
    ``kernel.words`` lower-cases those in numpy)."""
    folds = np.zeros(size, dtype=bool)
    listed = _assigned(size)
    listed = listed[listed >= 0x80]
    folds[listed] = np.fromiter((chr(p).casefold() != chr(p) for p in listed.tolist()), dtype=bool,
                                count=listed.shape[0])
    return folds


@stored
def simple_folds(size: int = FULL) -> np.ndarray:
    """int32 (size,): the code point a character case-folds to when that is one character of
    the same UTF-8 width and normalising changes nothing else about it (Cyrillic, Greek and
    Latin capitals, the final sigma: ``kernel.words`` folds those in numpy); -1 otherwise."""
    folds = np.full(size, -1, dtype=np.int32)
    plain = ~(ignorable(size) | needs_composing(size) | (combining_classes(size) > 0))
    for p in (np.flatnonzero(needs_folding(size) & plain)).tolist():
        folded = chr(p).casefold()
        if len(folded) == 1 and len(folded.encode()) == len(chr(p).encode()) and plain[ord(folded)] \
                and unicodedata.is_normalized("NFKC", folded) and folded.casefold() == folded:
            folds[p] = ord(folded)
    return folds


def needs_normalising(size: int = FULL) -> np.ndarray:
    """bool (size,): whether a text holding this code point may read differently after
    ``normalise`` than after lower-casing its ASCII letters alone: an invisible character,
    one NFKC may change the words of (``needs_composing``; and marks ``out_of_order``), one
    case folding changes. Every
    other character is left as it is by ``normalise``, or is a separator that it turns into
    separators: a text without any of these has the words of its ASCII-lowered self, which
    ``kernel.words`` finds without calling ``normalise``."""
    return _needs_normalising(size)


@cache
def _needs_normalising(size: int) -> np.ndarray:
    return ignorable(size) | needs_composing(size) | needs_folding(size)


@stored
def joins_previous(size: int = FULL) -> np.ndarray:
    """bool (size,): whether normalising may join this code point to the one before it (a
    combining mark, a Hangul jamo, an invisible character, or a character whose compatibility
    form starts with a combining mark, as half-width ``ﾞ``). A text cut before every other
    character normalises piece by piece to what it normalises to whole."""
    joins = (code_point_classes(size) == MARK) | ignorable(size) | _in(_JAMO_RANGES, size)
    listed = _assigned(size)
    for p in listed[(listed >= 0x80) & ~joins[listed]].tolist():
        n = unicodedata.normalize("NFKC", chr(p))
        if n and n != chr(p) and (unicodedata.combining(n[0]) or unicodedata.category(n[0]).startswith("M")):
            joins[p] = True
    return joins


@cache
def token_pattern() -> re.Pattern[str]:
    """The word rule as a regular expression over normalised text, before runs of letters are
    cut (``word_spans``): a Han or Kana character with the marks after it; a run of letters of
    Thai, Lao, Khmer or Myanmar with their marks; or a run of other letters, digits and marks."""
    classes = code_point_classes()
    spaceless = _char_class(_runs(classes == SPACELESS))
    marks = _char_class(_runs(classes == MARK))
    word = _char_class(_runs((classes == WORD) | (classes == MARK)))
    return re.compile(f"[{spaceless}][{marks}]*|(?:[{_letters()}][{marks}]*)+|[{word}]+")


@cache
def _letters() -> str:
    return _char_class(_runs(code_point_classes() == LETTER))


@cache
def _letter_run() -> re.Pattern[str]:
    return re.compile(f"[{_letters()}]")


def has_letters(text: str) -> bool:
    """Whether ``text`` holds a letter of Thai, Lao, Khmer or Myanmar (a run to cut into units)."""
    return _letter_run().search(text) is not None


def word_spans(text: str) -> Iterator[tuple[int, int]]:
    """The (start, end) of every word of the normalised ``text``, in order (definitions §0):
    ``token_pattern``'s matches, each run of Thai, Lao, Khmer or Myanmar letters cut before
    every letter that starts a unit (``unit_starts``)."""
    pattern = token_pattern()
    if not has_letters(text):
        for match in pattern.finditer(text):
            yield match.span()
        return
    letter = _letter_run().match
    for match in pattern.finditer(text):
        start, end = match.span()
        if not letter(text, start):
            yield start, end
            continue
        at = [i for i in range(start, end) if letter(text, i)]
        cuts = [i for i, cut in zip(at, unit_starts([ord(text[i]) for i in at]), strict=True) if cut]
        yield from zip(cuts, [*cuts[1:], end], strict=True)
