"""Words and word hashes: definitions §0's tokenisation, in plain Python + mmh3, and batched in numpy.

A text is read in one Unicode form (``kernel.unicode.normalise``: format characters removed,
NFKC, case folded). Its words are the runs of letters, digits and combining marks, except that
each Han or Kana character is a word of its own with the marks that follow it, and a run of
Thai, Lao, Khmer or Myanmar letters is cut into units of about five letters (each with its
marks) where hashes of the letters around a place say so (``kernel.unicode.unit_starts``),
so that a copy starting inside a phrase has the same units from its first boundary on. Each
distinct word is hashed once per process with seeded 64-bit MurmurHash3 and memoised, since
web text is Zipfian.

``batch_word_hashes`` gives the same hashes for a batch of texts without a Python object
per word: the texts' UTF-8 bytes are classified in numpy (a table of every code point's class,
``kernel.unicode.code_point_classes``), and the words' bytes are hashed by the vectorised
MurmurHash3 of ``kernel.murmur``. Only the texts holding a character that normalising may
change (``kernel.unicode.needs_normalising``, or marks out of canonical order: a few percent
of English pages, pages of scripts with precomposed letters typed apart or compatibility
forms, as Thai's ``ำ``) are normalised in Python first.
"""

from __future__ import annotations

from collections.abc import Sequence

import mmh3
import numpy as np

from quiltdetect.kernel import unicode
from quiltdetect.kernel.murmur import PAD, hash64_many
from quiltdetect.kernel.unicode import (
    CONTINUES,
    LETTER,
    LETTER_MARK,
    MARK,
    SEPARATOR,
    SPACELESS,
    WORD,
    CharClass,
    batch_unit_starts,
    normalise,
)

# What a word is, as stored runs know it: a run made under another definition has other grams
# (an update refuses it as --previous). "words-3": Thai, Lao, Khmer and Myanmar units cut where
# the letters around a place say (issue 74); "words-2": Unicode words (issue 61), those units
# cut every 4 letters from the start of their run; before, [^\W_]+.
WORDS_DEFINITION = "words-3"
WORD_SEED = 0x5157_4C54  # "QWLT": fixed so fingerprints are stable across runs and machines
MEMO_LIMIT = 2_000_000  # distinct words kept in the per-process memo before it is reset


def words(text: str | None) -> list[str]:
    """The words of ``text`` (definitions §0), in order, in their normalised form."""
    if not text:
        return []
    text = normalise(text)
    if not unicode.has_letters(text):  # (no run of letters to cut: the pattern's matches)
        return unicode.token_pattern().findall(text)
    return [text[a:b] for a, b in unicode.word_spans(text)]


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


def _non_ascii(buf: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offset of each non-ASCII character's first byte in the valid UTF-8 ``buf[:total]``, its
    width in bytes, its code point), decoded in numpy. ``buf`` holds three bytes more (``PAD``)."""
    leads = np.flatnonzero(buf[:total] >= 0xC0)
    if not leads.size:
        return leads, leads, leads
    first = buf[leads].astype(np.uint32)
    width = 2 + (first >= 0xE0).view(np.uint8) + (first >= 0xF0).view(np.uint8)
    # Read as if every character were 4 bytes long, then drop the bytes of the next ones.
    point = (first & (np.uint32(0x7F) >> width)) << 18
    for j, shift in ((1, 12), (2, 6), (3, 0)):
        point |= (buf[leads + j] & np.uint8(0x3F)).astype(np.uint32) << shift
    point >>= 6 * (4 - width).astype(np.uint32)
    return leads, width, point


def _char_classes(non_ascii: tuple[np.ndarray, np.ndarray, np.ndarray],
                  own: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(each non-ASCII character's class in its text, whether it starts a word of its own,
    whether it follows another non-ASCII character directly); ``own``: each one's
    ``code_point_classes``.

    Classes: SEPARATOR, WORD, SPACELESS, CONTINUES (a mark after a SPACELESS character), LETTER
    or LETTER_MARK (a mark after a LETTER). A mark takes the class of the character before it,
    through any run of marks: it continues a Han, Kana or Thai (...) character's word, and is
    WORD anywhere else (after a letter, a digit, a separator or another such mark). A SPACELESS
    character starts a word, and so does a LETTER that starts a unit of its run of letters
    (``unicode.batch_unit_starts``: the first letter of the run, and the boundaries inside it)."""
    leads, width, points = non_ascii
    after_previous = np.zeros(leads.shape[0], dtype=bool)
    after_previous[1:] = leads[1:] == leads[:-1] + width[:-1]
    position = np.arange(leads.shape[0], dtype=np.int32)  # (int32: a batch holds < 2**31 characters)
    is_mark = own == MARK
    if is_mark.any():
        # the index of the last character before each mark that is not such a mark, carried forward
        index = np.where(is_mark & after_previous, np.int32(0), position)
        np.maximum.accumulate(index, out=index)
        own = np.where(is_mark, _MARK_AFTER[own[index]], own)
    starts = own == SPACELESS
    is_letter = own == LETTER
    if is_letter.any():
        in_run = is_letter | (own == LETTER_MARK)
        begins = in_run.copy()
        begins[1:] &= ~(after_previous[1:] & in_run[:-1])
        at = np.flatnonzero(is_letter)
        starts[at] = batch_unit_starts(points[at], begins[at])
    return own, starts, after_previous


# The class a mark takes from the character before it (by that character's class).
_MARK_AFTER = np.full(len(CharClass), WORD, dtype=np.uint8)
_MARK_AFTER[SPACELESS], _MARK_AFTER[LETTER] = CONTINUES, LETTER_MARK


# The classes of the characters whose texts need ``_char_classes``: marks, Han, Kana, letters.
_SPECIAL = np.zeros(len(CharClass), dtype=bool)
_SPECIAL[[SPACELESS, MARK, LETTER]] = True


def _write_points(buf: np.ndarray, at: np.ndarray, width: np.ndarray, points: np.ndarray) -> None:
    """Write code points as UTF-8 at ``at``, each ``width`` bytes long (2, 3 or 4: its width)."""
    points = points.astype(np.int64)
    lead_bits = np.select([width == 2, width == 3], [0xC0, 0xE0], 0xF0)
    shift = 6 * (width - 1)
    buf[at] = lead_bits | (points >> shift)
    for j in (1, 2, 3):
        part = width > j
        buf[at[part] + j] = 0x80 | ((points[part] >> (shift[part] - 6 * j)) & 0x3F)


def _joined(encoded: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """(the byte strings one after the other, each followed by a NUL, then ``PAD`` zero bytes,
    as a writable uint8 array; where each string starts, with the total length last)."""
    sizes = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(sizes + 1, out=offsets[1:])
    # (bytearray.join: the bytes copied once, into a buffer numpy may write)
    return np.frombuffer(bytearray(b"\x00").join([*encoded, bytes(PAD)]), dtype=np.uint8), offsets


def _text_of_each(offsets: np.ndarray, leads: np.ndarray) -> np.ndarray:
    """The index of the text holding each of the sorted byte offsets ``leads``."""
    per_text = np.diff(np.searchsorted(leads, offsets))
    return np.repeat(np.arange(per_text.shape[0]), per_text)


def _distinct(ordered: np.ndarray) -> np.ndarray:
    """The distinct values of a sorted array, in one pass (``np.unique`` hashes them, far slower
    on the characters of a batch of Chinese pages: docs/performance.md, "Figures behind choices
    in the code")."""
    if ordered.shape[0] < 2:
        return ordered
    first = np.ones(ordered.shape[0], dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]


def _normalised(texts: Sequence[str | None], encoded: list[bytes], buf: np.ndarray, offsets: np.ndarray,
                non_ascii: tuple[np.ndarray, np.ndarray, np.ndarray]
                ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The batch ``buf`` (``offsets``, its non-ASCII characters ``non_ascii``) with every text
    in ``normalise``'s form but for its ASCII capitals: capitals that fold to one character of
    their width folded in place, ``normalise`` run on the texts Unicode's quick check does not
    pass (``encoded`` updated), the batch joined again when one of them grew."""
    leads, width, point = non_ascii
    size = unicode.table_size(point)
    follows = np.zeros(leads.shape[0], dtype=bool)  # right after the character before it
    follows[1:] = leads[1:] == leads[:-1] + width[:-1]
    reordered = unicode.out_of_order(point, follows)
    flagged = unicode.needs_normalising(size)[point] | reordered
    folds = unicode.simple_folds(size)[point]
    simple = flagged & (folds >= 0)  # capitals that fold to one character of their width
    changing = flagged & ~simple
    if changing.any():
        owner = _text_of_each(offsets, leads)  # the text of each character

        def texts_holding(held: np.ndarray) -> set[int]:
            return set(owner[held].tolist())

        ignorable = unicode.ignorable(size)[point]
        invisible = texts_holding(ignorable)
        # (removing an invisible character can bring two marks together out of canonical order)
        composing = texts_holding(unicode.needs_composing(size)[point] | reordered | ignorable)
        normalised = _distinct(owner[changing])
        lengthened = False
        for i in normalised.tolist():
            text = normalise(texts[i], strip=i in invisible,  # type: ignore[arg-type]
                             compose=i in composing).encode()
            lengthened |= len(text) > len(encoded[i])
            encoded[i] = text
        # the folds of the texts normalise did not take, in numpy
        taken = np.zeros(offsets.shape[0], dtype=bool)
        taken[normalised] = True
        keep = simple & ~taken[owner]
        leads, width, folds, owner = leads[keep], width[keep], folds[keep], owner[keep]
        if lengthened:  # joined again: the other texts move by what the ones before them grew
            old_offsets = offsets
            buf, offsets = _joined(encoded)
            leads = leads + (offsets - old_offsets)[owner]
        else:  # each in its place, spaces after it (a separator, as the NUL is)
            for i in normalised.tolist():
                at, text = int(offsets[i]), encoded[i]
                buf[at:at + len(text)] = np.frombuffer(text, dtype=np.uint8)
                buf[at + len(text):offsets[i + 1] - 1] = 0x20
        _write_points(buf, leads, width, folds)
        non_ascii = _non_ascii(buf, int(offsets[-1]))
    elif simple.any():  # only such capitals: in place, and they keep their width
        _write_points(buf, leads[simple], width[simple], folds[simple])
        point = point.copy()
        point[simple] = folds[simple]
        non_ascii = (leads, width, point)
    return buf, offsets, non_ascii


def _cut_inside_runs(starts: np.ndarray, ends: np.ndarray, picked: tuple[np.ndarray, np.ndarray, np.ndarray],
                     classes: tuple[np.ndarray, np.ndarray, np.ndarray], inword: np.ndarray,
                     ascii_word: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray]:
    """The runs' (starts, ends) with the words inside them cut apart. ``picked``: the non-ASCII
    characters of the texts holding a mark or a spaceless letter; ``classes``: their
    ``_char_classes``; ``inword``: whether the byte before each is a word byte."""
    picked_own, picked_starts, picked_after = classes
    # Inside a run, a word also starts at a spaceless letter that starts one (a Han
    # character, every fourth Thai letter), and at a WORD byte after a byte of a spaceless
    # script's word; the word before ends there. Only bytes at or after a non-ASCII
    # character of those texts can be such places.
    at, wide = picked[0], picked[1]
    split_at_lead = at[picked_starts & inword[at]]  # (inword[p]: the byte before p is in a run)
    after = at + wide
    next_is_word = np.zeros(at.shape[0], dtype=bool)
    next_is_word[:-1] = picked_after[1:] & (picked_own[1:] == WORD)
    next_is_word |= ascii_word[np.minimum(after, total - 1)] & (after < total)
    split_after = after[(picked_own != WORD) & (picked_own != SEPARATOR) & next_is_word]
    splits = _distinct(np.sort(np.concatenate([split_at_lead, split_after]), kind="stable"))
    if splits.size:  # merged in: both are sorted, and no split is a run's own edge
        starts, ends = _merged(starts, splits), _merged(ends, splits)
    return starts, ends


def _word_spans(texts: Sequence[str | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(the normalised texts' UTF-8 bytes, each followed by a NUL and the whole padded for the
    hash's loads; each word's start and end in them; words per text as int64).

    Normalising is ``kernel.unicode.normalise``'s, done cheaply: ASCII letters are lower-cased
    in numpy, capitals that fold to one character of their width are folded in numpy, and
    ``normalise`` runs only on the texts holding another character it may change
    (``needs_normalising``, found with a table of every code point) or marks out of canonical
    order (``unicode.out_of_order``): Unicode's quick check, in numpy.
    """
    encoded = [t.encode() if t else b"" for t in texts]
    buf, offsets = _joined(encoded)
    non_ascii = _non_ascii(buf, int(offsets[-1]))
    if non_ascii[0].size:
        buf, offsets, non_ascii = _normalised(texts, encoded, buf, offsets, non_ascii)
    total = int(offsets[-1])
    body = buf[:total]
    scratch = body - np.uint8(ord("A"))
    upper = scratch < 26  # A-Z -> a-z: what normalise did to the others
    np.bitwise_or(body, np.uint8(0x20), out=body, where=upper)
    np.subtract(body, np.uint8(ord("a")), out=scratch)
    ascii_word = scratch < 26
    np.subtract(body, np.uint8(ord("0")), out=scratch)
    ascii_word |= scratch < 10
    leads, width, point = non_ascii
    own = unicode.code_point_classes(unicode.table_size(point))[point] if leads.size else leads
    odd = _SPECIAL[own] if leads.size else leads.astype(bool)
    if odd.any():
        # Only the texts holding a mark or a letter of a spaceless script need the classes of
        # _char_classes (a few in a batch of English): their characters are taken apart.
        owner = _text_of_each(offsets, leads)
        held = np.zeros(offsets.shape[0], dtype=bool)
        held[owner[odd]] = True
        chosen = np.flatnonzero(held[owner])
        if chosen.shape[0] == leads.shape[0]:  # (every text: a batch of Chinese or Thai)
            picked = non_ascii
            picked_own, picked_starts, picked_after = _char_classes(picked, own)
            own = picked_own
        else:
            picked = (leads[chosen], width[chosen], point[chosen])
            picked_own, picked_starts, picked_after = _char_classes(picked, own[chosen])
            own = own.copy()
            own[chosen] = picked_own
    # The runs of word bytes (every class but SEPARATOR); the NUL after each text ends its last
    # run. A run starts where a word byte follows another byte, ends where a byte of no word
    # follows a word byte. In English (and every spaced script) the runs are the words.
    inword = np.zeros(total + 1, dtype=bool)
    inword[1:] = ascii_word
    word = own != SEPARATOR
    for j in range(4):
        part = width > j
        inword[leads[part] + j + 1] = word[part]
    edges = np.flatnonzero(inword[1:] ^ inword[:-1])
    starts, ends = edges[0::2], edges[1::2]
    if odd.any():
        starts, ends = _cut_inside_runs(starts, ends, picked, (picked_own, picked_starts, picked_after), inword,
                                        ascii_word, total)
    counts = np.diff(np.searchsorted(starts, offsets))
    return buf, starts, ends, counts.astype(np.int64)


def _merged(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sorted ``a`` with the few sorted values ``b`` put in place, in one copy (``np.insert``
    builds a mask as long as ``a``)."""
    at = np.searchsorted(a, b)
    if at.shape[0] > 4096:  # many (a text of Chinese: a word at each character): by a mask
        at += np.arange(at.shape[0])
        merged = np.empty(a.shape[0] + b.shape[0], dtype=a.dtype)
        others = np.ones(merged.shape[0], dtype=bool)
        others[at] = False
        merged[at] = b
        merged[others] = a
        return merged
    at = at.tolist()
    pieces, before = [], 0
    for i, p in enumerate(at):
        pieces += [a[before:p], b[i:i + 1]]
        before = p
    pieces.append(a[before:])
    return np.concatenate(pieces)


def batch_word_hashes(texts: Sequence[str | None]) -> tuple[np.ndarray, np.ndarray]:
    """(hashes of every text's words one after the other as uint64, words per text as int64).

    Equal to concatenating ``word_hashes(t)`` for every text (tested), at a fraction of the
    cost: one UTF-8 encoding per text (and ``normalise`` for the few it changes: ``_word_spans``),
    the rest numpy over the batch.
    """
    buf, starts, ends, counts = _word_spans(texts)
    if starts.shape[0] == 0:
        return np.empty(0, dtype=np.uint64), counts
    return hash64_many(buf, starts, ends - starts, WORD_SEED), counts


def batch_words(texts: Sequence[str | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(every text's words one after the other as UTF-8 bytes, the words' offsets in them
    (int64, n_words + 1), words per text (int64)): ``words(t)`` of every text without a Python
    object per word, ready to be an Arrow large_string array (``pyarrow.LargeStringArray.from_buffers``).
    """
    buf, starts, ends, counts = _word_spans(texts)
    lengths = ends - starts
    offsets = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if starts.shape[0] == 0:
        return np.zeros(0, dtype=np.uint8), offsets, counts
    # every word byte belongs to exactly one word, in order: the words are the word bytes
    ramp = np.arange(int(offsets[-1]), dtype=np.int64) - np.repeat(offsets[:-1] - starts, lengths)
    return buf[ramp], offsets, counts
