"""Patches of a quilt located in its text: which words come from which source (no Spark).

The run keeps only counts, so the shared grams are recomputed here with the kernel: the
words of the quilt and of each source are tokenised with their character spans (definitions §0),
hashed into k-gram fingerprints exactly as the job does, and a
gram of the quilt takes the colour of the first source in pick order that contains it (the
greedy cover's attribution). A word is coloured by the earliest-picked source among the
grams that contain it.

The run does not keep document frequencies, so a gram shared with a source is highlighted
even if it was too common (df > m) to be a patch gram; ``SourceMatch.recomputed`` counts
the highlighted grams so the page can show it beside the run's ``shared``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from quiltdetect.kernel.grams import gram_fingerprints
from quiltdetect.kernel.unicode import (
    joins_previous,
    normalise,
    table_size,
)
from quiltdetect.kernel.unicode import word_spans as normalised_word_spans
from quiltdetect.kernel.words import hash_word

NONE = -1


def word_spans(text: str | None) -> tuple[list[str], np.ndarray]:
    """The words of ``text`` (as ``kernel.words.words``) and their (start, end) character
    spans in ``text``: int64 array (n_words, 2).

    Normalising can change a text's length (``ﬁ`` becomes ``fi``, a soft hyphen vanishes, a
    decomposed ``é`` is composed), so the text is normalised in pieces: each character with the
    marks, jamo and invisible characters after it, which normalise to the same words as the whole
    text does (tested); a word's span runs from its first piece's start to its last piece's end.
    """
    if not text:
        return [], np.empty((0, 2), dtype=np.int64)
    if text.isascii():
        pieces, origin = text.lower(), None
    else:
        attached = _attached(text)
        cuts = [i for i in range(len(text)) if not attached[i]] + [len(text)]
        if cuts[0] != 0:
            cuts.insert(0, 0)
        parts, origin_list = [], []
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            part = normalise(text[a:b])
            parts.append(part)
            origin_list.extend([(a, b)] * len(part))
        pieces, origin = "".join(parts), origin_list
    tokens, spans = [], []
    for a, b in normalised_word_spans(pieces):
        start, end = (origin[a][0], origin[b - 1][1]) if origin is not None else (a, b)
        tokens.append(pieces[a:b])
        spans.append((start, end))
    return tokens, np.asarray(spans, dtype=np.int64).reshape(-1, 2)


def _attached(text: str) -> list[bool]:
    """Whether each character of ``text`` is normalised together with the one before it
    (``kernel.unicode.joins_previous``)."""
    points = np.fromiter(map(ord, text), dtype=np.int64, count=len(text))
    return joins_previous(table_size(points))[points].tolist()


def token_grams(tokens: list[str], k: int) -> np.ndarray:
    """int64 fingerprints of the k-grams of a token list, in text order (the job's values)."""
    if len(tokens) < k:
        return np.empty(0, dtype=np.int64)
    hashes = np.fromiter((hash_word(t) for t in tokens), dtype=np.uint64, count=len(tokens))
    return gram_fingerprints(hashes, k).view(np.int64)


def word_colours(gram_colour: np.ndarray, n_words: int, k: int) -> np.ndarray:
    """Colour of each word: the smallest colour among the grams covering it, else NONE.

    gram_colour: int64 (n_words-k+1,), NONE for grams without a colour.
    """
    big = np.iinfo(np.int64).max
    colours = np.full(n_words, big, dtype=np.int64)
    g = np.where(gram_colour == NONE, big, gram_colour)
    for j in range(k):
        colours[j : j + g.shape[0]] = np.minimum(colours[j : j + g.shape[0]], g)
    colours[colours == big] = NONE
    return colours


def segments(text: str, spans: np.ndarray, colours: np.ndarray) -> list[tuple[str, int]]:
    """``text`` cut into (piece, colour) runs; the gap between two words of one colour joins them."""
    out: list[tuple[str, int]] = []
    pos = 0
    i, n = 0, spans.shape[0]
    while i < n:
        colour = int(colours[i])
        if colour == NONE:
            i += 1
            continue
        j = i
        while j + 1 < n and int(colours[j + 1]) == colour:
            j += 1
        start, end = int(spans[i, 0]), int(spans[j, 1])
        if start > pos:
            out.append((text[pos:start], NONE))
        out.append((text[start:end], colour))
        pos = end
        i = j + 1
    if pos < len(text):
        out.append((text[pos:], NONE))
    return out


@dataclass
class SourceMatch:
    """One source beside the quilt: its text cut into runs, and the grams it shares."""

    segments: list[tuple[str, int]]
    recomputed: int  # distinct grams of the quilt found in this source
    first: int  # distinct grams of the quilt coloured by this source (first in pick order)
    covered_words: int = 0  # words of the source in a gram it shares with the quilt
    n_words: int = 0


@dataclass
class Highlight:
    """The quilt's text cut into (piece, source rank or NONE) runs, and every source's match."""

    segments: list[tuple[str, int]]
    sources: list[SourceMatch]
    covered_words: int
    n_words: int


def highlight(text: str, source_texts: list[str], k: int) -> Highlight:
    """Colour the quilt ``text`` by its sources (in pick order) and each source by its shared grams."""
    tokens, spans = word_spans(text)
    grams = token_grams(tokens, k)
    gram_colour = np.full(grams.shape[0], NONE, dtype=np.int64)
    matches: list[SourceMatch] = []
    quilt_set = np.unique(grams)
    for rank, source_text in enumerate(source_texts):
        s_tokens, s_spans = word_spans(source_text)
        s_grams = token_grams(s_tokens, k)
        in_source = np.isin(grams, s_grams)
        fresh = in_source & (gram_colour == NONE)
        first = np.unique(grams[fresh]).shape[0]
        gram_colour[fresh] = rank
        s_colour = np.where(np.isin(s_grams, quilt_set), rank, NONE).astype(np.int64)
        s_words = word_colours(s_colour, len(s_tokens), k)
        matches.append(SourceMatch(segments(source_text or "", s_spans, s_words),
                                   int(np.unique(grams[in_source]).shape[0]), int(first),
                                   int((s_words != NONE).sum()), len(s_tokens)))
    colours = word_colours(gram_colour, len(tokens), k)
    return Highlight(segments(text or "", spans, colours), matches, int((colours != NONE).sum()), len(tokens))
