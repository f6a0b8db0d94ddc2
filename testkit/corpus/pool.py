"""Corpus step 2: the sentence pool, which never hands out the same sentence twice.

About 8 % of the prose documents feed *glue* (short sentences for footers and for text
between a quilt's patches); the rest feed the runs of consecutive sentences that original
pages are made of. Each queue walks its documents in a random order; once a queue is used
up it starts a *remix pass*: every third word of each sentence (random phase) is replaced
by a random word of the prose vocabulary, so no 5-gram of an earlier pass survives while
sentence shapes, punctuation and word statistics stay real.

With ``vocabulary="open"`` a remix pass replaces *every* word instead, by draws from an open
Zipf-Mandelbrot vocabulary: its head is the prose's words by frequency, its tail synthetic
words without end, so the number of distinct words grows with the corpus as a crawl's does
(Heaps' law) and a page's rarest words stay rare. The default vocabulary's remixes draw from
a fixed 28,753 words, so at 1,000,000 pages every one of them is on ~5,400 pages and every
sentence is reused ~500 times; an exact set-similarity join (the MWO self-join) meets every
page with thousands of others there. Pass-0 pages (the prose as written) are the same in
both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from .prose import WORD_RE, ProseDoc

__all__ = ["VOCABULARIES", "WORD_SPLIT", "OpenVocabulary", "SentencePool"]

VOCABULARIES = ("prose", "open")

# words at the odd positions of the split, the text between them at the even ones
WORD_SPLIT = re.compile(r"([^\W_]+)")


def _remix_vocab(docs: Sequence[tuple[str, ...]]) -> np.ndarray:
    """Replacement words for remix passes: the prose's lower-case alphabetic words (> 2 letters),
    sorted; drawn uniformly, not by frequency, so two passes rarely produce the same 5-gram."""
    vocab = sorted(
        {
            w
            for d in docs
            for s in d
            for w in WORD_RE.findall(s)
            if len(w) > 2 and w.isascii() and w.islower() and w.isalpha()
        }
    )
    return np.array(vocab, dtype=object)


class OpenVocabulary:
    """Words drawn from a Zipf-Mandelbrot law over an unbounded vocabulary.

    P(rank r) ~ (r + q)^-a (r = 0, 1, ...; a = 1.5, q = 15: the most frequent word gets ~3 %
    of the draws, like "the" in English). Ranks below the prose's vocabulary size are the
    prose's lower-case words by decreasing count (ties by word); the others are synthetic
    words of two or more consonant-vowel syllables, one per rank. Measured: 63,930 distinct
    words in 5,000 pages, 158,308 in 20,000 (Heaps' exponent 0.66), so about 2 M in 1,000,000
    pages; TREC's .GOV holds 2.9 M distinct terms in 1.2 M pages.
    """

    A = 1.5
    Q = 15.0
    SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    MAX_RANK = 1 << 40

    def __init__(self, docs: Sequence[tuple[str, ...]], rng: np.random.Generator):
        self.rng = rng
        counts: dict[str, int] = {}
        for d in docs:
            for sent in d:
                for w in WORD_RE.findall(sent.lower()):
                    counts[w] = counts.get(w, 0) + 1
        self.head = np.array(sorted(counts, key=lambda w: (-counts[w], w)), dtype=object)
        self._tail: dict[int, str] = {}

    def _synthetic(self, r: int) -> str:
        word = self._tail.get(r)
        if word is None:
            n, syl, parts = r + len(self.SYLLABLES), self.SYLLABLES, []
            while n:
                n, digit = divmod(n, len(syl))
                parts.append(syl[digit])
            word = self._tail[r] = "".join(reversed(parts))
        return word

    def draw(self, n: int) -> list[str]:
        """``n`` words, independent draws (a continuous Pareto rounded down to a rank)."""
        u = 1.0 - self.rng.random(n)  # (0, 1]
        x = self.Q * u ** (-1.0 / (self.A - 1.0))
        ranks = np.minimum(np.floor(x - self.Q), self.MAX_RANK).astype(np.int64)
        v = len(self.head)
        words = self.head[np.minimum(ranks, v - 1)].tolist()
        for i in np.flatnonzero(ranks >= v).tolist():
            words[i] = self._synthetic(int(ranks[i]) - v)
        return words


class SentencePool:
    """Hands out sentences that are never handed out twice (remixing once exhausted)."""

    def __init__(self, prose: Sequence[ProseDoc], rng: np.random.Generator, vocabulary: str = "prose"):
        if vocabulary not in VOCABULARIES:
            raise ValueError(f"vocabulary must be one of {VOCABULARIES}, got {vocabulary!r}")
        self.rng = rng
        self.docs = [d.sentences for d in prose]
        self.counts = [
            np.array([len(WORD_RE.findall(s)) for s in d], dtype=np.int32) for d in self.docs
        ]
        self.vocab = _remix_vocab(self.docs)
        self.open = OpenVocabulary(self.docs, rng) if vocabulary == "open" else None
        self.glue_docs, self.main_docs = self._split_glue_docs()
        self.passes = 0
        self._tok: dict[int, tuple[list[str], list[str], list[int]]] = {}
        self._main_pass = -1
        self._glue_pass = -1
        self._new_main_pass()
        self._new_glue_pass()

    def _split_glue_docs(self) -> tuple[list[int], list[int]]:
        """``(glue_docs, main_docs)``: documents in a random order, the first ~8 % of the words
        for glue and footers, the rest for original pages."""
        order = list(self.rng.permutation(len(self.docs)))
        total = sum(int(c.sum()) for c in self.counts)
        glue_docs, acc = [], 0
        for i in order:
            if acc >= 0.08 * total:
                break
            glue_docs.append(int(i))
            acc += int(self.counts[i].sum())
        glue_set = set(glue_docs)
        return glue_docs, [int(i) for i in order if int(i) not in glue_set]

    # each pass walks documents in a fresh random order
    def _new_main_pass(self) -> None:
        self._main_pass += 1
        self._main_order = [self.main_docs[i] for i in self.rng.permutation(len(self.main_docs))]
        self._main_pos = 0
        self._main_sent = 0
        self.passes = max(self.passes, self._main_pass + 1)

    def _new_glue_pass(self) -> None:
        self._glue_pass += 1
        self._glue_list = [
            (d, j)
            for d in self.glue_docs
            for j in range(len(self.docs[d]))
            if 5 <= self.counts[d][j] <= 22
        ]
        perm = self.rng.permutation(len(self._glue_list))
        self._glue_list = [self._glue_list[i] for i in perm]
        self._glue_pos = 0

    def _tokens(self, doc: int) -> tuple[list[str], list[str], list[int]]:
        """Words and gaps of a document (built once, on first remix).

        ``gaps`` has one more entry than ``words``; the gap between two sentences holds
        a NUL marking the sentence boundary. ``w_off[j]`` is sentence j's first word.
        """
        t = self._tok.get(doc)
        if t is None:
            words: list[str] = []
            gaps: list[str] = [""]
            w_off = [0]
            for sent in self.docs[doc]:
                pieces = WORD_SPLIT.split(sent)
                gaps[-1] += "\x00" + pieces[0]
                gaps.extend(pieces[2::2])
                words.extend(pieces[1::2])
                w_off.append(len(words))
            gaps[-1] += "\x00"
            t = (words, gaps, w_off)
            self._tok[doc] = t
        return t

    def _render(self, doc: int, start: int, end: int, pass_no: int) -> list[str]:
        """Sentences ``start:end`` of ``doc``; in remix passes every third word is replaced
        (every word, with the open vocabulary)."""
        if pass_no == 0:
            return list(self.docs[doc][start:end])
        words, gaps, w_off = self._tokens(doc)
        wa, wb = w_off[start], w_off[end]
        run = words[wa:wb]
        if self.open is not None:
            run = self.open.draw(len(run))
        else:
            phase = int(self.rng.integers(3))
            n = len(run[phase::3])
            run[phase::3] = self.vocab[self.rng.integers(len(self.vocab), size=n)].tolist()
        pieces = [""] * (2 * len(run) + 1)
        pieces[0::2] = gaps[wa : wb + 1]
        pieces[1::2] = run
        return "".join(pieces).split("\x00")[1:-1]

    def run(self, target_words: int) -> tuple[list[str], list[int]]:
        """Consecutive sentences of one document, about ``target_words`` words."""
        while True:
            if self._main_pos >= len(self._main_order):
                self._new_main_pass()
            d = self._main_order[self._main_pos]
            counts = self.counts[d]
            start = self._main_sent
            if start >= len(counts) - 2:  # too little left in this document
                self._main_pos += 1
                self._main_sent = 0
                continue
            cum = np.cumsum(counts[start : start + 400])
            end = start + int(np.searchsorted(cum, target_words)) + 1
            end = min(end, len(counts))
            if len(counts) - end < 3:  # do not leave a useless tail
                end = len(counts)
            self._main_sent = end
            if end >= len(counts):
                self._main_pos += 1
                self._main_sent = 0
            sents = self._render(d, start, end, self._main_pass)
            return sents, counts[start:end].tolist()

    def glue(self) -> tuple[str, int]:
        """One short unused sentence (5..22 words) for glue text and footers."""
        if self._glue_pos >= len(self._glue_list):
            self._new_glue_pass()
        d, j = self._glue_list[self._glue_pos]
        self._glue_pos += 1
        return self._render(d, j, j + 1, self._glue_pass)[0], int(self.counts[d][j])
