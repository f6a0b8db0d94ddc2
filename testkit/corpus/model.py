"""The corpus generator's types: sites, pages, ground-truth records and the corpus itself.

They sit in their own module, below every step that builds or renders them, so that the steps,
the HTML of ``render`` and the package (which re-exports them) import them without a cycle: this
module imports only ``prose``. A page's HTML is ``render.render_html(page, corpus.sites[page.site])``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from .prose import WORD_RE

__all__ = ["NAMESPACE", "Corpus", "Page", "Site", "TruthRecord"]

NAMESPACE = uuid.UUID("6f1c2a4e-8d1b-5b7e-9a53-71c7a1d0e2f4")  # fixed: ids stable across runs


@dataclass
class Site:
    """A web site: one host on its own registered domain, with shared boilerplate."""

    index: int
    host: str
    domain: str
    ip: str
    scheme: str
    name: str
    sections: list[str]
    nav: list[tuple[str, str]] = field(default_factory=list)  # (anchor text, url)
    footer: str = ""
    page_indices: list[int] = field(default_factory=list)


@dataclass
class Page:
    """One page: identifiers, its pieces, and the visible ``text`` (its HTML: ``render``)."""

    index: int
    id: str
    url: str
    ip: str
    site: int
    kind: str  # original | mirror | near_copy | quilt | control
    title: str
    heading: str
    paragraphs: list[str]
    date: datetime
    attribution: list[tuple[str, str]] = field(default_factory=list)  # (anchor text, url)
    text: str = ""


@dataclass(frozen=True)
class TruthRecord:
    """Ground truth for one planted page (quilt, control, mirror or near-copy)."""

    doc_id: str
    url: str
    kind: str
    sources: tuple[tuple[str, str], ...]  # (doc_id, url) of originals, patch order
    attributed: bool = False

    def to_json(self) -> dict:
        return {
            "doc_id": self.doc_id,
            "url": self.url,
            "kind": self.kind,
            "sources": [{"doc_id": d, "url": u} for d, u in self.sources],
            "attributed": self.attributed,
        }


@dataclass
class Corpus:
    """Generated pages, their sites and the ground truth."""

    seed: int
    pages: list[Page]
    sites: list[Site]
    truth: list[TruthRecord]

    @property
    def n_words(self) -> int:
        return sum(len(WORD_RE.findall(p.text)) for p in self.pages)

    def summary(self) -> str:
        kinds: dict[str, int] = {}
        for t in self.truth:
            kinds[t.kind] = kinds.get(t.kind, 0) + 1
        words = sum(p.text.count(" ") + 1 for p in self.pages)  # cheap approximation
        return (
            f"pages={len(self.pages)} sites={len(self.sites)} quilts={kinds.get('quilt', 0)} "
            f"controls={kinds.get('control', 0)} mirrors={kinds.get('mirror', 0)} "
            f"near_copies={kinds.get('near_copy', 0)} words~{words}"
        )
