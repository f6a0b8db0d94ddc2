"""Henzinger's tokens (definitions §2): the terms both near-duplicate algorithms fingerprint.

The document table already turned markup into white space (its ``text`` is the visible text,
one line per block). What is left of Henzinger's rules: a URL written in the text is broken at
slashes and dots into terms, and every IMG URL is one term: the whole URL when the image lives
on another host, only its file name when it is on the page's own host (so a site's own images
do not make its pages look alike more than a shared logo on another host would).
Other text follows definitions §0's words. Image terms follow the text terms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiltdetect.documents.urls import host_of
from quiltdetect.kernel.unicode import normalise
from quiltdetect.kernel.words import batch_word_hashes, term_hashes, words

# A URL written in running text: scheme://... or www.... up to white space.
URL_IN_TEXT_RE = re.compile(r"(?:\b[a-z][a-z0-9+.-]*://|\bwww\.)\S+", re.IGNORECASE)
URL_SPLIT_RE = re.compile(r"[/.]+")
URL_TRAILING = ".,;:!?)]}>'\""


def url_terms(url: str) -> list[str]:
    """A URL from the text broken at slashes and dots: ``http://a.b/c.html`` -> http:, a, b, c, html
    (normalised as words are, definitions §0)."""
    return [part for part in URL_SPLIT_RE.split(normalise(url).rstrip(URL_TRAILING)) if part]


_WRITES_URL_RE = re.compile(r"://|www\.", re.IGNORECASE)


def _writes_url(text: str) -> bool:
    return _WRITES_URL_RE.search(text) is not None


def writes_url_each(texts: Sequence[str | None] | pa.Array) -> np.ndarray:
    """bool per text: whether it may write a URL (``_writes_url``; False for None), for a whole
    batch in Arrow's compute kernels, where Python's case-insensitive search was the slowest step
    of tokenising (docs/performance.md, "Figures behind choices in the code")."""
    column = texts if isinstance(texts, pa.Array) else pa.array(texts, pa.large_string())
    found = pc.match_substring_regex(column, _WRITES_URL_RE.pattern, ignore_case=True)
    return found.fill_null(False).to_numpy(zero_copy_only=False)


def text_terms(text: str | None) -> list[str]:
    """The terms of visible text: URLs broken at slashes and dots, other words per definitions §0."""
    if not text:
        return []
    if not _writes_url(text):  # fast path: most pages write no URL
        return words(text)
    terms: list[str] = []
    pos = 0
    for match in URL_IN_TEXT_RE.finditer(text):
        terms += words(text[pos : match.start()])
        terms += url_terms(match.group(0))
        pos = match.end()
    terms += words(text[pos:])
    return terms


def image_term(src: str, page_host: str) -> str | None:
    """One IMG URL as a term: its file name on the page's own host, else the whole URL."""
    src = (src or "").strip()
    if not src:
        return None
    if page_host and host_of(src) == page_host:
        path = urlsplit(src).path if "//" in src else src
        name = path.rsplit("/", 1)[-1]
        return name.lower() or None
    return src.lower()


def image_terms(url: str | None, images: Iterable[str] | None) -> list[str]:
    """One term per IMG URL of a page (``image_term``), in order."""
    if not images:
        return []
    page_host = host_of(url)
    return [t for t in (image_term(src, page_host) for src in images) if t]


def page_terms(text: str | None, url: str | None = None, images: Iterable[str] | None = None) -> list[str]:
    """All terms of a page in order: text terms, then one term per IMG URL."""
    return text_terms(text) + image_terms(url, images)


def batch_term_hashes(texts: Sequence[str | None] | pa.Array, urls: Sequence[str | None],
                      images: Sequence[Iterable[str] | None]) -> tuple[np.ndarray, np.ndarray]:
    """``term_hashes(page_terms(...))`` of every page of a batch, one after the other (uint64),
    and terms per page (int64): tested equal. Every text is tokenised and hashed in one call
    (``batch_word_hashes``): a text that writes a URL goes in as its pieces between the URLs,
    whose terms (``url_terms``) are put back between them; image terms follow a page's text.
    ``texts`` may be an Arrow string array (a batch's column: searched for URLs as it is)."""
    if not len(texts):
        return np.empty(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    flagged = writes_url_each(texts)
    if isinstance(texts, pa.Array):
        texts = texts.to_pylist()
    pieces = [None if f else t for t, f in zip(texts, flagged.tolist(), strict=True)]
    parts: dict[int, list[int | np.ndarray]] = {}  # a URL page's pieces (their index) and URL terms, in order
    for j in np.flatnonzero(flagged).tolist():
        text, pos, order = texts[j], 0, []
        for match in URL_IN_TEXT_RE.finditer(text):  # type: ignore[arg-type]
            order += [len(pieces), term_hashes(url_terms(match.group(0)))]
            pieces.append(text[pos:match.start()])  # type: ignore[index]
            pos = match.end()
        order.append(len(pieces))
        pieces.append(text[pos:])  # type: ignore[index]
        parts[j] = order
    hashes, counts = batch_word_hashes(pieces)
    with_images = [j for j, found in enumerate(images) if found]
    if not parts and not with_images:
        return hashes, counts
    split = np.split(hashes, np.cumsum(counts)[:-1])
    pages = split[:len(texts)]
    for j, order in parts.items():
        pages[j] = np.concatenate([split[p] if isinstance(p, int) else p for p in order])
    for j in with_images:
        extra = image_terms(urls[j], images[j])
        if extra:
            pages[j] = np.concatenate([pages[j], term_hashes(extra)])
    counts = np.fromiter(map(len, pages), dtype=np.int64, count=len(pages))
    return np.concatenate(pages), counts


def batch_page_term_hashes(texts: Sequence[str | None] | pa.Array, urls: Sequence[str | None],
                           images: Sequence[Iterable[str] | None]) -> list[np.ndarray]:
    """``batch_term_hashes`` page by page: each page's term hashes."""
    hashes, counts = batch_term_hashes(texts, urls, images)
    return np.split(hashes, np.cumsum(counts)[:-1]) if len(texts) else []
