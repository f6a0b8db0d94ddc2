"""Corpus step 4: the pages, made from the sentence pool on the sites, with planted ground truth.

``build_corpus`` runs the steps in order: start (generators, pool, sites, page slots) →
originals → mirrors and near-copies → quilts and controls → nav and visible text → crawl
order. All steps draw from one seeded numpy generator (and one ``random.Random`` for
paragraph breaks), so the order of the steps, and of the draws within each, is part of
the output: reorder nothing without regenerating the reference corpora.
"""

from __future__ import annotations

import gc
import math
import random
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import NamedTuple

import numpy as np

from .model import NAMESPACE, Corpus, Page, Site, TruthRecord
from .pool import WORD_SPLIT, SentencePool
from .prose import WORD_RE, ProseDoc
from .render import visible_text
from .sites import link_nav, make_sites, site_sizes

__all__ = ["CorpusDraft", "PageCounts", "build_corpus", "generate", "page_counts"]

BASE_DATE = datetime(2024, 3, 1, tzinfo=timezone.utc)  # crawl dates count on from here


@dataclass(frozen=True)
class PageCounts:
    """How many pages of each kind a corpus gets."""

    originals: int
    mirrors: int
    near_copies: int
    quilts: int
    controls: int


def page_counts(n_pages: int) -> PageCounts:
    """2.5 % quilts and 1 % controls (at least one each from 40 pages on, none below),
    3 % mirrors, 2 % near-copies; the rest are originals."""
    quilts = max(1, round(0.025 * n_pages)) if n_pages >= 40 else 0
    controls = max(1, round(0.01 * n_pages)) if n_pages >= 40 else 0
    mirrors = round(0.03 * n_pages)
    near = round(0.02 * n_pages)
    return PageCounts(n_pages - quilts - controls - mirrors - near, mirrors, near, quilts, controls)


class Patch(NamedTuple):
    """Consecutive sentences a quilt or control borrows from one original."""

    source: int  # generation index of the original
    sentences: list[str]
    words: int


def _page_id(seed: int, index: int) -> str:
    return f"<urn:uuid:{uuid.uuid5(NAMESPACE, f'{seed}:page:{index}')}>"


def _slug(words: Iterable[str], n: int) -> str:
    w = [x.lower() for x in words if x.isascii()][:6]
    return "-".join(w) + f"-{n}" if w else f"page-{n}"


def _heading_of(sents: list[str]) -> str:
    """A page heading: the first 7 words of its first sentence."""
    w = WORD_RE.findall(sents[0])[:7]
    return " ".join(w) if w else "Untitled"


@dataclass
class CorpusDraft:
    """The corpus while its pages are made.

    Pages are numbered in generation order (``Page.index``) until the last step puts them in
    crawl order. ``slots[i]`` is the site of the i-th generated page and ``order[i]`` its crawl
    position (which its id is made from). For originals, ``sentences``, ``word_counts`` and
    ``borrowed`` (which sentences a quilt or control has taken) are kept per page; other
    pages have empty entries there.
    """

    seed: int
    rng: np.random.Generator
    prng: random.Random  # cheap scalar draws (paragraph breaks)
    pool: SentencePool
    sites: list[Site]
    slots: np.ndarray  # int, shape (n_pages,)
    order: np.ndarray  # int, shape (n_pages,)
    pages: list[Page] = field(default_factory=list)
    sentences: list[list[str]] = field(default_factory=list)
    word_counts: list[list[int]] = field(default_factory=list)
    borrowed: list[np.ndarray] = field(default_factory=list)  # bool, one per sentence
    truth: list[TruthRecord] = field(default_factory=list)
    originals: list[int] = field(default_factory=list)
    next_slot: int = 0
    _section_counter: dict[int, int] = field(default_factory=dict)

    def take_slot(self) -> int:
        """The site of the next page to make."""
        site_i = int(self.slots[self.next_slot])
        self.next_slot += 1
        return site_i

    def paragraphs(self, sents: list[str]) -> list[str]:
        """Sentences grouped into paragraphs of 2-4."""
        out, j = [], 0
        while j < len(sents):
            k = self.prng.randint(2, 5)
            out.append(" ".join(sents[j : j + k]))
            j += k
        return out

    def new_page(self, kind: str, site_i: int, heading: str, paras: list[str]) -> Page:
        """Add a page on site ``site_i``, filed under the site's sections in turn."""
        i = len(self.pages)
        site = self.sites[site_i]
        sec_i = self._section_counter.get(site_i, 0)
        self._section_counter[site_i] = sec_i + 1
        section = site.sections[sec_i % len(site.sections)].lower()
        url = f"{site.scheme}://{site.host}/{section}/{_slug(WORD_RE.findall(heading), i)}.html"
        p = Page(
            index=i,
            id=_page_id(self.seed, int(self.order[i])),
            url=url,
            ip=site.ip,
            site=site_i,
            kind=kind,
            title=f"{heading} | {site.name}",
            heading=heading,
            paragraphs=paras,
            date=BASE_DATE,
        )
        site.page_indices.append(i)
        self.pages.append(p)
        self.sentences.append([])
        self.word_counts.append([])
        self.borrowed.append(np.zeros(0, dtype=bool))
        return p

    def domain_of(self, page: int) -> str:
        return self.sites[self.pages[page].site].domain


def start_draft(prose: Sequence[ProseDoc], n_pages: int, seed: int, vocabulary: str = "prose") -> CorpusDraft:
    """Seed the generators, fill the sentence pool, make the sites with skewed sizes, and deal
    the page slots (each site's share of pages, shuffled) and the crawl positions."""
    rng = np.random.default_rng(seed)
    prng = random.Random(seed)
    pool = SentencePool(prose, rng, vocabulary)
    sizes = site_sizes(n_pages, rng)
    sites = make_sites(sizes, pool, rng)
    slots = np.repeat(np.arange(len(sizes)), sizes)
    slots = slots[rng.permutation(n_pages)]
    order = rng.permutation(n_pages)  # final position of the i-th generated page
    return CorpusDraft(seed, rng, prng, pool, sites, slots, order)


def write_originals(draft: CorpusDraft, n: int) -> None:
    """``n`` original pages: each a run of consecutive pool sentences of log-normal length
    (median 450 words, 80..3000), so every original sentence is on exactly one original."""
    lengths = np.clip(draft.rng.lognormal(mean=math.log(450), sigma=0.55, size=n), 80, 3000).astype(
        int
    )
    for target in lengths.tolist():
        sents, counts = draft.pool.run(target)
        p = draft.new_page(
            "original", draft.take_slot(), _heading_of(sents), draft.paragraphs(sents)
        )
        draft.sentences[p.index] = sents
        draft.word_counts[p.index] = counts
        draft.borrowed[p.index] = np.zeros(len(sents), dtype=bool)
    draft.originals = list(range(len(draft.pages)))


def _original_not_on(draft: CorpusDraft, site_i: int) -> int:
    """A random original on another domain than site ``site_i``'s."""
    for _ in range(10_000):
        o = draft.originals[int(draft.rng.integers(len(draft.originals)))]
        if draft.domain_of(o) != draft.sites[site_i].domain:
            return o
    raise RuntimeError("corpus too small: no original on another domain")


def _edit_words(draft: CorpusDraft, paras: list[str]) -> None:
    """A near-copy's edits, in place: 3-6 random words replaced by random vocabulary words."""
    rng, vocab = draft.rng, draft.pool.vocab
    for _ in range(int(rng.integers(3, 7))):
        pi = int(rng.integers(len(paras)))
        pieces = WORD_SPLIT.split(paras[pi])
        nw = len(pieces) // 2
        if nw:
            wi = 1 + 2 * int(rng.integers(nw))
            pieces[wi] = vocab[int(rng.integers(len(vocab)))]
            paras[pi] = "".join(pieces)


def copy_originals(draft: CorpusDraft, n_mirrors: int, n_near: int) -> None:
    """Mirrors (exact copies) and near-copies (a few words edited) of random originals, each on
    another domain than its original; both are recorded in the ground truth."""
    for kind in ["mirror"] * n_mirrors + ["near_copy"] * n_near:
        site_i = draft.take_slot()
        src = draft.pages[_original_not_on(draft, site_i)]
        paras = list(src.paragraphs)
        if kind == "near_copy":
            _edit_words(draft, paras)
        p = draft.new_page(kind, site_i, src.heading, paras)
        draft.truth.append(TruthRecord(p.id, p.url, kind, ((src.id, src.url),)))


def _take_patch(draft: CorpusDraft, o: int, min_words: int = 25) -> Patch | None:
    """2-5 consecutive sentences (>= ``min_words`` words) of original ``o``, or None.

    An original lends at most one patch of at most 40 % of its words, so a page that lends
    to quilts never looks like a quilt itself.
    """
    rng = draft.rng
    borrowed = draft.borrowed[o]
    if borrowed.any():
        return None
    counts = draft.word_counts[o]
    free = ~borrowed
    n = len(counts)
    limit = 0.4 * sum(counts)
    starts = [int(s) for s in rng.permutation(n)]
    for s in starts[:12]:
        k = int(rng.integers(2, 6))
        e = min(n, s + k)
        if e - s < 2 or not free[s:e].all():
            continue
        w = sum(counts[s:e])
        while w < min_words and e < n and free[e] and e - s < 5:
            w += counts[e]
            e += 1
        if w < min_words or w > limit:
            continue
        borrowed[s:e] = True
        return Patch(o, draft.sentences[o][s:e], w)
    return None


def _gather_patches(draft: CorpusDraft, site_i: int, n_patch: int) -> list[Patch]:
    """Up to ``n_patch`` patches (400 tries) from originals on pairwise different domains,
    none on site ``site_i``'s own domain."""
    used_domains = {draft.sites[site_i].domain}
    patches: list[Patch] = []
    tries = 0
    while len(patches) < n_patch and tries < 400:
        tries += 1
        o = draft.originals[int(draft.rng.integers(len(draft.originals)))]
        dom = draft.domain_of(o)
        if dom in used_domains:
            continue
        got = _take_patch(draft, o)
        if got is None:
            continue
        used_domains.add(dom)
        patches.append(got)
    return patches


def _quilt_blocks(
    draft: CorpusDraft, site: Site, patches: list[Patch], attribution: list[tuple[str, str]]
) -> tuple[list[list[str]], str]:
    """A quilt's sentence blocks and heading: the patches, with glue sentences before or after
    some of them while the patch fraction stays >= 0.55, and a glue sentence's start as heading.

    The fraction is counted conservatively: a patch of w words gives at least w - 4 patch
    5-grams, and the page has at most as many grams as words (nav, heading <= 7 words,
    "Sources", attribution, footer and site name included).
    """
    rng, pool = draft.rng, draft.pool
    fixed = sum(
        len(WORD_RE.findall(x)) for x in [*(a for a, _ in attribution), site.footer, site.name]
    )
    fixed += len(site.sections) + 7 + 1  # nav sections, heading (<= 7 words), "Sources"
    patch_words = sum(p.words for p in patches)
    patch_grams = sum(p.words - 4 for p in patches)
    blocks = [list(p.sentences) for p in patches]
    glue_words = 0
    for b in range(len(blocks)):
        if rng.random() < 0.7:
            g, gw = pool.glue()
            if patch_grams >= 0.55 * (fixed + patch_words + glue_words + gw):
                blocks[b].insert(0 if rng.random() < 0.5 else len(blocks[b]), g)
                glue_words += gw
    head_sent, _ = pool.glue()
    return blocks, " ".join(WORD_RE.findall(head_sent)[:7])


def _control_blocks(draft: CorpusDraft, patches: list[Patch]) -> tuple[list[list[str]], str]:
    """A control's sentence blocks and heading: a run of its own prose of about 3x the
    borrowed words plus 80 (>= 250), so borrowed words stay <= 25 %, with the patches
    inserted at random cuts."""
    patch_words = sum(p.words for p in patches)
    own, _ = draft.pool.run(max(3 * patch_words + 80, 250))
    heading = _heading_of(own)
    cut = sorted(int(x) for x in draft.rng.integers(0, len(own) + 1, size=len(patches)))
    merged: list[list[str]] = []
    prev = 0
    for c, patch in zip(cut, patches, strict=True):
        merged.append(own[prev:c])
        merged.append(list(patch.sentences))
        prev = c
    merged.append(own[prev:])
    return [b for b in merged if b], heading


def plant_page(draft: CorpusDraft, kind: str) -> None:
    """One planted page: a quilt (4-8 patches; 30 % of quilts get a "Sources" line linking
    the originals) or a control (1-2 patches in its own prose, which is not a quilt)."""
    rng = draft.rng
    site_i = draft.take_slot()
    n_patch = int(rng.integers(4, 9)) if kind == "quilt" else int(rng.integers(1, 3))
    patches = _gather_patches(draft, site_i, n_patch)
    if kind == "quilt" and len(patches) < 4:
        raise RuntimeError("corpus too small to plant a quilt")
    site = draft.sites[site_i]
    attributed = kind == "quilt" and rng.random() < 0.3
    sources = [draft.pages[p.source] for p in patches]
    attribution = [(s.url.split("/")[2], s.url) for s in sources] if attributed else []
    if kind == "quilt":
        blocks, heading = _quilt_blocks(draft, site, patches, attribution)
    else:
        blocks, heading = _control_blocks(draft, patches)
    paras: list[str] = []
    for b in blocks:
        paras.extend(draft.paragraphs(b))
    p = draft.new_page(kind, site_i, heading, paras)
    p.attribution = attribution
    draft.truth.append(
        TruthRecord(p.id, p.url, kind, tuple((s.id, s.url) for s in sources), attributed)
    )


def plant_quilts_and_controls(draft: CorpusDraft, n_quilts: int, n_controls: int) -> None:
    """The planted pages, quilts first, then the controls."""
    for kind in ["quilt"] * n_quilts + ["control"] * n_controls:
        plant_page(draft, kind)


def add_boilerplate_text(draft: CorpusDraft) -> None:
    """Link each site's nav bar (it needs the page URLs), then set every page's visible text."""
    link_nav(draft.sites, draft.pages)
    for p in draft.pages:
        p.text = visible_text(p, draft.sites[p.site])


def to_crawl_order(draft: CorpusDraft) -> Corpus:
    """The corpus in crawl order: pages shuffled so that kinds are not grouped (their ids
    already follow the final position), dated ~37 s apart, truth sorted by page id."""
    pages, order = draft.pages, draft.order
    pages.sort(key=lambda p: int(order[p.index]))
    for pos, p in enumerate(pages):
        p.index = pos
        p.date = BASE_DATE + timedelta(seconds=pos * 37 + int(draft.rng.integers(0, 30)))
    for site in draft.sites:
        site.page_indices = [int(order[i]) for i in site.page_indices]
    draft.truth.sort(key=lambda t: t.doc_id)
    return Corpus(seed=draft.seed, pages=pages, sites=draft.sites, truth=draft.truth)


def build_corpus(prose: Sequence[ProseDoc], n_pages: int, seed: int, vocabulary: str = "prose") -> Corpus:
    """Generate ``n_pages`` pages deterministically for ``seed``: the steps above, in order
    (``vocabulary``: what remix passes draw from, ``pool.VOCABULARIES``)."""
    counts = page_counts(n_pages)
    draft = start_draft(prose, n_pages, seed, vocabulary)
    write_originals(draft, counts.originals)
    copy_originals(draft, counts.mirrors, counts.near_copies)
    plant_quilts_and_controls(draft, counts.quilts, counts.controls)
    add_boilerplate_text(draft)
    return to_crawl_order(draft)


def generate(prose: Sequence[ProseDoc], n_pages: int, seed: int, vocabulary: str = "prose") -> Corpus:
    """Generate ``n_pages`` pages deterministically for ``seed`` (``build_corpus``, with the
    cyclic garbage collector off); ``vocabulary`` "open" makes remix passes draw every word from
    an open Zipf vocabulary (``pool.OpenVocabulary``)."""
    if n_pages < 1:
        raise ValueError("n_pages must be >= 1")
    # millions of small, long-lived strings: the cyclic GC would rescan them over and over
    enabled = gc.isenabled()
    gc.disable()
    try:
        return build_corpus(prose, n_pages, seed, vocabulary)
    finally:
        if enabled:
            gc.enable()
