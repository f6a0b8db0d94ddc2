"""Rendering (the paper's phase 1): a page's fields -> its weighted term record.

Tag removal is done by the foundation's HTML extraction; here each field is tokenised
(definitions §0 words), stop words are removed (the ``stopwords`` package's English list, the
175 words of the Snowball list) and
the rest stemmed (Snowball English, ``snowballstemmer``); both ship their data inside the
package, so nothing is fetched at run time. A term's weight sums its occurrences times
the field weight of Table 1, the record is normalised by its total weight, and the
dynamic threshold drops terms lighter than ``min_weight_ratio`` times the mean term weight
(the paper names the step but does not define it; 0 keeps every term).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import snowballstemmer
from stopwords import get_stopwords

from quiltdetect.documents.html import HtmlFields
from quiltdetect.documents.urls import domain_of, host_of
from quiltdetect.kernel.words import batch_words, words

# Table 1 of the paper: the weight of one occurrence of a term in each field.
FIELD_WEIGHTS: dict[str, float] = {
    "url": 2.0,
    "heading": 2.0,
    "title": 2.0,
    "anchor_same_site": 1.0,
    "anchor_other_site": 0.5,
    "meta_keywords": 3.0,
    "meta_description": 3.0,
    "text": 1.0,
}
STEM_MEMO_LIMIT = 1_000_000  # distinct words whose stem is memoised per process


@dataclass(frozen=True)
class PageFields:
    """The fields of one page that rendering weighs (the document table's columns)."""

    url: str = ""
    title: str = ""
    headings: Sequence[str] = field(default_factory=tuple)
    anchors: Sequence[tuple[str, str]] = field(default_factory=tuple)  # (text, absolute href)
    meta_keywords: str = ""
    meta_description: str = ""
    text: str = ""

    @classmethod
    def from_html(cls, fields: HtmlFields, url: str = "") -> PageFields:
        """The fields :func:`quiltdetect.documents.html.extract` found, with the page URL."""
        return cls(url=url or "", title=fields.title, headings=tuple(fields.headings),
                   anchors=tuple(fields.anchors), meta_keywords=fields.meta_keywords,
                   meta_description=fields.meta_description, text=fields.text)


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """The English stop words as the tokeniser sees them: "don't" gives "don" and "t"."""
    return frozenset(w for s in get_stopwords("english") for w in words(s))


class _TermMemo(dict):
    """word -> its term (Snowball English stem), or "" for a stop word; computed on first use
    (``__missing__`` keeps repeated lookups in C)."""

    def __init__(self) -> None:
        super().__init__()
        self.stemmer = snowballstemmer.stemmer("english")

    def __missing__(self, word: str) -> str:
        if len(self) >= STEM_MEMO_LIMIT:
            self.clear()
        term = "" if word in stop_words() else self.stemmer.stemWord(word) or ""
        self[word] = term
        return term


_TERMS = _TermMemo()


def terms(text: str | None) -> list[str]:
    """The terms of ``text``: words minus stop words, stemmed, in order of occurrence."""
    return [t for t in map(_TERMS.__getitem__, words(text)) if t]


def anchor_is_same_site(href: str, page_domain: str) -> bool:
    """An anchor points to the page's own site when its registered domain is the page's.

    A target without a host (a relative link left unresolved because the page URL is
    unknown) is on the same site by construction.
    """
    target = domain_of(host_of(href))
    return not target or target == page_domain


def term_weights(page: PageFields) -> dict[str, float]:
    """Raw weight W_x of every term: occurrences times the field weight, summed over fields."""
    weights: dict[str, float] = {}

    def add(text: str | None, weight: float) -> None:
        get = weights.get
        for term in map(_TERMS.__getitem__, words(text)):
            if term:
                weights[term] = get(term, 0.0) + weight

    add(page.url, FIELD_WEIGHTS["url"])
    add(page.title, FIELD_WEIGHTS["title"])
    for heading in page.headings or ():
        add(heading, FIELD_WEIGHTS["heading"])
    page_domain = domain_of(host_of(page.url))
    for text, href in page.anchors or ():
        same = anchor_is_same_site(href or "", page_domain)
        add(text, FIELD_WEIGHTS["anchor_same_site" if same else "anchor_other_site"])
    add(page.meta_keywords, FIELD_WEIGHTS["meta_keywords"])
    add(page.meta_description, FIELD_WEIGHTS["meta_description"])
    add(page.text, FIELD_WEIGHTS["text"])
    return weights


def normalise(weights: dict[str, float], min_weight_ratio: float = 0.0) -> tuple[list[str], np.ndarray]:
    """(terms sorted by code point, float64 weights summing to 1) after the dynamic threshold.

    Weights are divided by the record's total weight W_r; terms whose normalised weight is
    below ``min_weight_ratio / |F|`` (a fraction of the mean) are dropped and the rest
    renormalised, so every record's weights sum to 1 and MWO stays in [0, 1].
    """
    if not weights:
        return [], np.zeros(0, dtype=np.float64)
    names = sorted(weights)
    raw = [weights[n] for n in names]
    if min_weight_ratio > 0.0:
        total = math.fsum(raw)
        cut = min_weight_ratio / len(names)
        kept = [(n, w) for n, w in zip(names, raw, strict=True) if w / total >= cut]
        names, raw = [n for n, _ in kept], [w for _, w in kept]
    total = math.fsum(raw)
    return names, np.asarray(raw, dtype=np.float64) / total


def render(page: PageFields, min_weight_ratio: float = 0.0) -> tuple[list[str], np.ndarray]:
    """A page's weighted term record: (terms, normalised float64 weights), terms sorted."""
    return normalise(term_weights(page), min_weight_ratio)


def render_text(text: str | None, min_weight_ratio: float = 0.0) -> tuple[list[str], np.ndarray]:
    """The record of a plain text (main content only, weight 1 per occurrence)."""
    return render(PageFields(text=text or ""), min_weight_ratio)


def render_rows(rows: Iterable[dict], min_weight_ratio: float = 0.0) -> Iterable[tuple[list[str], np.ndarray]]:
    """Records of document-table rows (dicts with the table's column names)."""
    for row in rows:
        anchors = row.get("anchors")
        page = PageFields(
            url=row.get("url") or "",
            title=row.get("title") or "",
            headings=tuple(h for h in (row.get("headings") if row.get("headings") is not None else ()) if h),
            anchors=tuple((a["text"] or "", a["href"] or "") for a in (anchors if anchors is not None else ())),
            meta_keywords=row.get("meta_keywords") or "",
            meta_description=row.get("meta_description") or "",
            text=row.get("text") or "",
        )
        yield render(page, min_weight_ratio)


@dataclass(frozen=True)
class RenderedBatch:
    """The records of a batch of pages, as CSR arrays: record i is page ``pages[i]`` with the
    terms ``terms[offsets[i]:offsets[i + 1]]`` (code-point order) and their ``weights``."""

    pages: np.ndarray  # int64: the pages with at least one term, ascending
    offsets: np.ndarray  # int64 [len(pages) + 1]
    terms: pa.Array  # string
    weights: np.ndarray  # float64, each record summing to 1


def _field_texts(rows: dict[str, list]) -> tuple[list[str | None], np.ndarray, np.ndarray]:
    """Every field text of a batch of document-table columns, with its page and its field weight."""
    n = len(rows["text"])
    texts: list[str | None] = []
    pages: list[np.ndarray] = []
    weights: list[float | np.ndarray] = []
    every = np.arange(n, dtype=np.int64)

    def whole(column: str, weight: float) -> None:
        values = rows.get(column)
        if values is not None:
            texts.extend(values)
            pages.append(every)
            weights.append(np.full(n, weight))

    whole("url", FIELD_WEIGHTS["url"])
    whole("title", FIELD_WEIGHTS["title"])
    listed_texts: list[str] = []
    listed_pages: list[int] = []
    listed_weights: list[float] = []
    for i, headings in enumerate(rows.get("headings") or ()):
        for heading in headings if headings is not None else ():
            listed_texts.append(heading)
            listed_pages.append(i)
            listed_weights.append(FIELD_WEIGHTS["heading"])
    urls = rows.get("url") or [None] * n
    for i, anchors in enumerate(rows.get("anchors") or ()):
        if anchors is None or len(anchors) == 0:
            continue
        page_domain = domain_of(host_of(urls[i] or ""))
        for anchor in anchors:
            text, href = (anchor["text"], anchor["href"]) if isinstance(anchor, dict) else anchor
            same = anchor_is_same_site(href or "", page_domain)
            listed_texts.append(text)
            listed_pages.append(i)
            listed_weights.append(FIELD_WEIGHTS["anchor_same_site" if same else "anchor_other_site"])
    texts.extend(listed_texts)
    pages.append(np.asarray(listed_pages, dtype=np.int64))
    weights.append(np.asarray(listed_weights, dtype=np.float64))
    whole("meta_keywords", FIELD_WEIGHTS["meta_keywords"])
    whole("meta_description", FIELD_WEIGHTS["meta_description"])
    whole("text", FIELD_WEIGHTS["text"])
    return texts, np.concatenate(pages), np.concatenate(weights)


def render_batch(rows: dict[str, list], min_weight_ratio: float = 0.0) -> RenderedBatch:
    """``render_rows`` of a batch of pages given as columns (lists, with the document table's
    column names; ``text`` required, the other fields optional), without a Python object per word.

    The fields' words are found for the whole batch at once (``batch_words``), each distinct
    word of the batch is stemmed once, and each (page, term) weight is a ``bincount`` of its
    occurrences' field weights. Every field weight is a multiple of 1/2, so these sums, and each
    record's total, are exact whatever their order: the weights equal ``render``'s bit for bit.
    """
    n_pages = len(rows["text"])
    texts, text_page, text_weight = _field_texts(rows)
    data, word_offsets, counts = batch_words(texts)
    empty = RenderedBatch(np.zeros(0, np.int64), np.zeros(1, np.int64), pa.array([], pa.string()),
                          np.zeros(0, np.float64))
    if word_offsets.shape[0] == 1:
        return empty
    found = pa.LargeStringArray.from_buffers(word_offsets.shape[0] - 1, pa.py_buffer(word_offsets),
                                             pa.py_buffer(data))
    encoded = pc.dictionary_encode(found)
    word_terms = [_TERMS[w] for w in encoded.dictionary.to_pylist()]
    names = sorted(set(word_terms) - {""})
    if not names:
        return empty
    rank_of = {name: r for r, name in enumerate(names)}
    word_rank = np.fromiter((rank_of.get(term, -1) for term in word_terms), dtype=np.int64, count=len(word_terms))
    ranks = word_rank[encoded.indices.to_numpy()]
    text_of = np.repeat(np.arange(len(texts), dtype=np.int64), counts)
    kept = ranks >= 0
    keys = text_page[text_of[kept]] * len(names) + ranks[kept]
    keys, at = np.unique(keys, return_inverse=True)
    raw = np.bincount(at.reshape(-1), weights=text_weight[text_of[kept]], minlength=keys.shape[0])
    page, rank = keys // len(names), keys % len(names)
    bounds = np.searchsorted(page, np.arange(n_pages + 1))
    sizes = np.diff(bounds)
    if min_weight_ratio > 0.0:
        total = np.repeat(np.add.reduceat(raw, bounds[:-1][sizes > 0]), sizes[sizes > 0])
        keep = raw / total >= min_weight_ratio / np.repeat(sizes[sizes > 0], sizes[sizes > 0])
        page, rank, raw = page[keep], rank[keep], raw[keep]
        bounds = np.searchsorted(page, np.arange(n_pages + 1))
        sizes = np.diff(bounds)
    has = sizes > 0
    total = np.repeat(np.add.reduceat(raw, bounds[:-1][has]) if has.any() else np.zeros(0), sizes[has])
    offsets = np.zeros(int(has.sum()) + 1, dtype=np.int64)
    np.cumsum(sizes[has], out=offsets[1:])
    return RenderedBatch(np.flatnonzero(has).astype(np.int64), offsets,
                         pa.array(names, pa.string()).take(pa.array(rank)), raw / total)
