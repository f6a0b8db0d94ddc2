"""Reproducible synthetic web corpus with planted quilts, built from real prose.

Pages are made of sentences from public prose collections (State of the Union and
inaugural addresses, Wikipedia articles, the Lee news corpus, news article bodies),
arranged the way a crawl looks: sites on distinct registered domains with skewed
sizes, per-site boilerplate, exact mirrors and near-copies on other domains, and
planted quilts (definitions §1) with ground truth, plus "one or two borrowed patches"
controls that are *not* quilts.

Guarantees (checked by ``tests/test_corpus_generate.py``):

* the same ``(prose, n_pages, seed)`` gives the same corpus, byte for byte;
* every sentence used as original text appears in exactly one original page
  (mirrors and near-copies copy it, quilts and controls borrow it at most once);
* each planted quilt has 4–8 patches (2–5 consecutive sentences, ≥ 25 words) from
  originals on pairwise different domains, none on its own domain, and a patch
  fraction ≥ 0.55 by a conservative count, so it is (5, 50, 4, 0.5)-quilted;
* controls borrow ≤ 25 % of their words.

The real prose (~1.2 M words) covers about 2,000 pages. Beyond that the pool is
reused in *remix passes*: every third word of each sentence (random phase) is
replaced by a random word of the prose vocabulary, so no 5-gram of an earlier
pass survives while sentence shapes, punctuation and word statistics stay real.

Run ``python bench/corpus.py --help`` (test and benchmark support code, not part of the
installed package: it needs the real prose of ``../shared/data``).
"""

from __future__ import annotations

import argparse
import gc
import gzip
import html as htmlmod
import io
import json
import math
import random
import re
import sys
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

__all__ = [
    "Corpus",
    "Page",
    "ProseDoc",
    "Site",
    "TruthRecord",
    "find_shared_data",
    "generate",
    "load_prose",
    "main",
    "write_table",
    "write_truth",
    "write_warc",
]

WORD_RE = re.compile(r"[^\W_]+")
_WORD_SPLIT = re.compile(r"([^\W_]+)")
# Split after . ! ? (plus closing quotes/brackets) when a capital, digit or opening quote follows.
_SENT_SPLIT = re.compile(r"(?<=[.!?])[\"'\u2019\u201d)\]]*\s+(?=[\"'\u2018\u201c(\[]?[A-Z0-9])")
_WS = re.compile(r"\s+")

MIN_SENT_WORDS = 4
MAX_SENT_WORDS = 90
NAMESPACE = uuid.UUID("6f1c2a4e-8d1b-5b7e-9a53-71c7a1d0e2f4")  # fixed: ids stable across runs

SECTIONS = [
    "Home",
    "News",
    "Archive",
    "About",
    "Contact",
    "Blog",
    "Features",
    "Opinion",
    "Reviews",
    "Guides",
    "Events",
    "Library",
    "Topics",
    "Community",
    "Resources",
    "Politics",
    "History",
    "Science",
    "Culture",
    "Travel",
    "Business",
    "Sport",
]
TLDS = [".com"] * 6 + [".org"] * 2 + [".net", ".co.uk", ".info", ".de", ".com.au", ".io"]
HOST_PREFIXES = ["www."] * 6 + ["blog.", "news.", ""] + [""] * 2


# --------------------------------------------------------------------------- data classes


@dataclass(frozen=True)
class ProseDoc:
    """One real prose document, split into sentences."""

    name: str
    licence: str
    sentences: tuple[str, ...]


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
    """One page: identifiers, its pieces, and the visible ``text``; ``html`` on demand."""

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
    _site: Site | None = field(default=None, repr=False)

    @property
    def html(self) -> str:
        """A real-looking HTML page whose visible text is ``text``."""
        assert self._site is not None
        return render_html(self, self._site)


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


# --------------------------------------------------------------------------- prose


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences with a simple regex; keep 4..90-word sentences."""
    out = []
    for para in re.split(r"\n\s*\n|\r\n\s*\r\n", text):
        para = _WS.sub(" ", para).strip()
        if not para:
            continue
        for s in _SENT_SPLIT.split(para):
            s = s.strip()
            n = len(WORD_RE.findall(s))
            if MIN_SENT_WORDS <= n <= MAX_SENT_WORDS:
                out.append(s)
    return out


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    # a few NLTK State of the Union files carry Big5-mangled punctuation
    return (
        text.replace("\u00a1\u00a6", "'")
        .replace("\u00a1X", " -- ")
        .replace("\u00a1\u00a7", '"')
        .replace("\u00a1\u00a8", '"')
    )


def load_prose(shared_data: Path) -> list[ProseDoc]:
    """Load the real prose documents under ``shared_data`` (see module doc), in a fixed order."""
    shared_data = Path(shared_data)
    tc = shared_data / "text_corpora"
    docs: list[ProseDoc] = []

    def add(name: str, licence: str, text: str) -> None:
        sents = split_sentences(text)
        if len(sents) >= 3:
            docs.append(ProseDoc(name, licence, tuple(sents)))

    for sub in ("nltk_state_union", "nltk_inaugural"):
        for p in sorted((tc / sub).glob("*.txt")):
            if p.name.upper().startswith("README"):
                continue
            add(f"{sub}/{p.name}", "public-domain", _read_text(p))
    wiki = tc / "gensim_test_data" / "enwiki_sample_plaintext.jsonl.gz"
    if wiki.exists():
        with gzip.open(wiki, "rt", encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                add(f"enwiki/{rec.get('title', rec.get('id'))}", "CC-BY-SA", rec["text"])
    lee = tc / "gensim_test_data" / "lee_background.cor"
    if lee.exists():
        for i, line in enumerate(_read_text(lee).splitlines()):
            add(f"lee_background/{i}", "Lee-2005-news(LGPL-2.1-package)", line)
    gt = shared_data / "article_extraction_benchmark" / "ground-truth.json"
    if gt.exists():
        data = json.loads(gt.read_text(encoding="utf-8"))
        for key in sorted(data):
            body = data[key].get("articleBody") or ""
            add(f"article_benchmark/{key[:12]}", "MIT(benchmark)", body)
    if not docs:
        raise FileNotFoundError(f"no prose found under {shared_data}")
    # drop repeated sentences (headers, sign-offs, site chrome in the sources): each kept
    # sentence occurs once in the whole pool, so an original page's grams are rare
    seen: set[tuple[str, ...]] = set()
    unique: list[ProseDoc] = []
    for d in docs:
        kept = []
        for sent in d.sentences:
            key = tuple(WORD_RE.findall(sent.lower()))
            if key not in seen:
                seen.add(key)
                kept.append(sent)
        if len(kept) >= 3:
            unique.append(ProseDoc(d.name, d.licence, tuple(kept)))
    return unique


class _SentencePool:
    """Hands out sentences that are never handed out twice (remixing once exhausted)."""

    def __init__(self, prose: Sequence[ProseDoc], rng: np.random.Generator):
        self.rng = rng
        self.docs = [d.sentences for d in prose]
        self.counts = [
            np.array([len(WORD_RE.findall(s)) for s in d], dtype=np.int32) for d in self.docs
        ]
        # replacement words for remix passes: lower-case alphabetic words, drawn uniformly
        # (uniform, not by frequency, so two passes rarely produce the same 5-gram)
        vocab = sorted(
            {
                w
                for d in self.docs
                for s in d
                for w in WORD_RE.findall(s)
                if len(w) > 2 and w.isascii() and w.islower() and w.isalpha()
            }
        )
        self.vocab = np.array(vocab, dtype=object)
        # ~8% of documents (shortest-sentence ones first) feed glue/footer; the rest originals.
        order = list(rng.permutation(len(self.docs)))
        total = sum(int(c.sum()) for c in self.counts)
        glue_docs, acc = [], 0
        for i in order:
            if acc >= 0.08 * total:
                break
            glue_docs.append(int(i))
            acc += int(self.counts[i].sum())
        self.glue_docs = glue_docs
        glue_set = set(glue_docs)
        self.main_docs = [int(i) for i in order if int(i) not in glue_set]
        self.passes = 0
        self._tok: dict[int, tuple[list[str], list[str], list[int]]] = {}
        self._main: list[tuple[int, int]] = []  # (doc, next sentence) queue for this pass
        self._glue: list[tuple[int, int]] = []
        self._main_pass = -1
        self._glue_pass = -1
        self._new_main_pass()
        self._new_glue_pass()

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
                pieces = _WORD_SPLIT.split(sent)
                gaps[-1] += "\x00" + pieces[0]
                gaps.extend(pieces[2::2])
                words.extend(pieces[1::2])
                w_off.append(len(words))
            gaps[-1] += "\x00"
            t = (words, gaps, w_off)
            self._tok[doc] = t
        return t

    def _render(self, doc: int, start: int, end: int, pass_no: int) -> list[str]:
        """Sentences ``start:end`` of ``doc``; in remix passes every third word is replaced."""
        if pass_no == 0:
            return list(self.docs[doc][start:end])
        words, gaps, w_off = self._tokens(doc)
        wa, wb = w_off[start], w_off[end]
        run = words[wa:wb]
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


# --------------------------------------------------------------------------- generation


def _page_id(seed: int, index: int) -> str:
    return f"<urn:uuid:{uuid.uuid5(NAMESPACE, f'{seed}:page:{index}')}>"


def _site_sizes(n_pages: int, rng: np.random.Generator) -> list[int]:
    """Skewed site sizes (Zipf-like): a few big sites, many small ones."""
    cap = max(3, n_pages // 15)
    sizes: list[int] = []
    total = 0
    while total < n_pages:
        s = int(min(rng.zipf(1.7), cap))
        s = min(s, n_pages - total)
        sizes.append(s)
        total += s
    return sizes


def _make_sites(sizes: list[int], pool: _SentencePool, rng: np.random.Generator) -> list[Site]:
    sites: list[Site] = []
    used: set[str] = set()
    ips: list[str] = []
    vocab = [
        w.lower() for w in pool.vocab.tolist() if w.isascii() and w.isalpha() and 4 <= len(w) <= 10
    ]
    for i, _ in enumerate(sizes):
        while True:
            word = vocab[int(rng.integers(len(vocab)))]
            tld = TLDS[int(rng.integers(len(TLDS)))]
            label = f"{word}{int(rng.integers(1, 100))}" if rng.random() < 0.6 else word
            domain = label + tld
            if domain not in used:
                used.add(domain)
                break
        prefix = HOST_PREFIXES[int(rng.integers(len(HOST_PREFIXES)))]
        host = prefix + domain
        if ips and rng.random() < 0.06:  # one organisation, several domains
            ip = ips[int(rng.integers(len(ips)))]
        else:
            ip = f"{int(rng.integers(23, 223))}.{int(rng.integers(0, 256))}.{int(rng.integers(0, 256))}.{int(rng.integers(1, 255))}"
            while ip.startswith(("127.", "172.", "192.168.", "100.", "169.254.")):
                ip = f"{int(rng.integers(23, 126))}.{int(rng.integers(0, 256))}.{int(rng.integers(0, 256))}.{int(rng.integers(1, 255))}"
        ips.append(ip)
        k = int(rng.integers(3, 6))
        sections = [SECTIONS[j] for j in rng.choice(len(SECTIONS), size=k, replace=False)]
        footer_sentence, _ = pool.glue()
        name = label.capitalize()
        footer = f"\u00a9 {int(rng.integers(2008, 2024))} {name}. {footer_sentence}"
        sites.append(
            Site(
                index=i,
                host=host,
                domain=domain,
                ip=ip,
                scheme="https" if rng.random() < 0.7 else "http",
                name=name,
                sections=sections,
                footer=footer,
            )
        )
    return sites


def _slug(words: Iterable[str], n: int) -> str:
    w = [x.lower() for x in words if x.isascii()][:6]
    return "-".join(w) + f"-{n}" if w else f"page-{n}"


def generate(prose: Sequence[ProseDoc], n_pages: int, seed: int) -> Corpus:
    """Generate ``n_pages`` pages deterministically for ``seed`` (see module doc)."""
    if n_pages < 1:
        raise ValueError("n_pages must be >= 1")
    # millions of small, long-lived strings: the cyclic GC would rescan them over and over
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _generate(prose, n_pages, seed)
    finally:
        if enabled:
            gc.enable()


def _generate(prose: Sequence[ProseDoc], n_pages: int, seed: int) -> Corpus:
    rng = np.random.default_rng(seed)
    prng = random.Random(seed)  # cheap scalar draws
    pool = _SentencePool(prose, rng)

    n_quilts = max(1, round(0.025 * n_pages)) if n_pages >= 40 else 0
    n_controls = max(1, round(0.01 * n_pages)) if n_pages >= 40 else 0
    n_mirrors = round(0.03 * n_pages)
    n_near = round(0.02 * n_pages)
    n_orig = n_pages - n_quilts - n_controls - n_mirrors - n_near

    sizes = _site_sizes(n_pages, rng)
    sites = _make_sites(sizes, pool, rng)
    slots = np.repeat(np.arange(len(sizes)), sizes)
    slots = slots[rng.permutation(n_pages)]
    kinds = ["original"] * n_orig + ["mirror"] * n_mirrors + ["near_copy"] * n_near
    kinds += ["quilt"] * n_quilts + ["control"] * n_controls

    order = rng.permutation(n_pages)  # final position of the i-th generated page
    base_date = datetime(2024, 3, 1, tzinfo=timezone.utc)
    pages: list[Page] = []
    page_sents: list[list[str]] = []  # original sentences per page (originals only)
    page_counts: list[list[int]] = []
    borrowed: list[np.ndarray] = []
    truth: list[TruthRecord] = []
    copies: dict[int, list[int]] = {}
    section_counter: dict[int, int] = {}

    def new_page(kind: str, site_i: int, heading: str, paras: list[str]) -> Page:
        i = len(pages)
        site = sites[site_i]
        sec_i = section_counter.get(site_i, 0)
        section_counter[site_i] = sec_i + 1
        section = site.sections[sec_i % len(site.sections)].lower()
        url = f"{site.scheme}://{site.host}/{section}/{_slug(WORD_RE.findall(heading), i)}.html"
        p = Page(
            index=i,
            id=_page_id(seed, int(order[i])),
            url=url,
            ip=site.ip,
            site=site_i,
            kind=kind,
            title=f"{heading} | {site.name}",
            heading=heading,
            paragraphs=paras,
            date=base_date,
            _site=site,
        )
        site.page_indices.append(i)
        pages.append(p)
        page_sents.append([])
        page_counts.append([])
        borrowed.append(np.zeros(0, dtype=bool))
        return p

    def paragraphs(sents: list[str]) -> list[str]:
        out, j = [], 0
        while j < len(sents):
            k = prng.randint(2, 5)
            out.append(" ".join(sents[j : j + k]))
            j += k
        return out

    def heading_of(sents: list[str]) -> str:
        w = WORD_RE.findall(sents[0])[:7]
        return " ".join(w) if w else "Untitled"

    # originals ---------------------------------------------------------------
    lengths = np.clip(rng.lognormal(mean=math.log(450), sigma=0.55, size=n_orig), 80, 3000).astype(
        int
    )
    slot_i = 0
    for L in lengths.tolist():
        sents, counts = pool.run(L)
        p = new_page("original", int(slots[slot_i]), heading_of(sents), paragraphs(sents))
        slot_i += 1
        page_sents[p.index] = sents
        page_counts[p.index] = counts
        borrowed[p.index] = np.zeros(len(sents), dtype=bool)
    originals = list(range(len(pages)))

    def pick_original_not_on(site_i: int) -> int:
        for _ in range(10_000):
            o = originals[int(rng.integers(len(originals)))]
            if sites[pages[o].site].domain != sites[site_i].domain:
                return o
        raise RuntimeError("corpus too small: no original on another domain")

    # mirrors and near-copies -------------------------------------------------
    for kind in ["mirror"] * n_mirrors + ["near_copy"] * n_near:
        site_i = int(slots[slot_i])
        slot_i += 1
        o = pick_original_not_on(site_i)
        src = pages[o]
        paras = list(src.paragraphs)
        if kind == "near_copy":
            for _ in range(int(rng.integers(3, 7))):
                pi = int(rng.integers(len(paras)))
                pieces = _WORD_SPLIT.split(paras[pi])
                nw = len(pieces) // 2
                if nw:
                    wi = 1 + 2 * int(rng.integers(nw))
                    pieces[wi] = pool.vocab[int(rng.integers(len(pool.vocab)))]
                    paras[pi] = "".join(pieces)
        p = new_page(kind, site_i, src.heading, paras)
        copies.setdefault(o, []).append(p.index)
        truth.append(TruthRecord(p.id, p.url, kind, ((src.id, src.url),)))

    # quilts and controls -----------------------------------------------------
    def take_patch(o: int, min_words: int = 25) -> tuple[list[str], int] | None:
        # an original lends at most one patch of at most 40% of its words, so a page
        # that lends to quilts never looks like a quilt itself
        if borrowed[o].any():
            return None
        counts = page_counts[o]
        free = ~borrowed[o]
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
            borrowed[o][s:e] = True
            return page_sents[o][s:e], w
        return None

    def planted(kind: str) -> None:
        site_i = int(slots_iter.pop())
        n_patch = int(rng.integers(4, 9)) if kind == "quilt" else int(rng.integers(1, 3))
        used_domains = {sites[site_i].domain}
        patches: list[tuple[int, list[str], int]] = []
        tries = 0
        while len(patches) < n_patch and tries < 400:
            tries += 1
            o = originals[int(rng.integers(len(originals)))]
            dom = sites[pages[o].site].domain
            if dom in used_domains:
                continue
            got = take_patch(o)
            if got is None:
                continue
            used_domains.add(dom)
            patches.append((o, got[0], got[1]))
        if kind == "quilt" and len(patches) < 4:
            raise RuntimeError("corpus too small to plant a quilt")
        site = sites[site_i]
        attributed = kind == "quilt" and rng.random() < 0.3
        attribution = (
            [(pages[o].url.split("/")[2], pages[o].url) for o, _, _ in patches]
            if attributed
            else []
        )
        # conservative word accounting: patch grams >= sum(w - 4); grams <= total words
        fixed = sum(
            len(WORD_RE.findall(x)) for x in [*(a for a, _ in attribution), site.footer, site.name]
        )
        fixed += len(site.sections) + 7 + 1  # nav sections, heading (<= 7 words), "Sources"
        patch_words = sum(w for _, _, w in patches)
        patch_grams = sum(w - 4 for _, _, w in patches)
        blocks: list[list[str]] = [list(s) for _, s, _ in patches]
        glue_words = 0
        if kind == "quilt":
            # glue between some patches while the patch fraction stays >= 0.55
            for b in range(len(blocks)):
                if rng.random() < 0.7:
                    g, gw = pool.glue()
                    if patch_grams >= 0.55 * (fixed + patch_words + glue_words + gw):
                        blocks[b].insert(0 if rng.random() < 0.5 else len(blocks[b]), g)
                        glue_words += gw
            head_sent, _ = pool.glue()
            heading = " ".join(WORD_RE.findall(head_sent)[:7])
        else:
            # controls: own prose around the borrowed patches, borrowed <= 25% of words
            own, _ = pool.run(max(3 * patch_words + 80, 250))
            heading = heading_of(own)
            cut = sorted(int(x) for x in rng.integers(0, len(own) + 1, size=len(blocks)))
            merged: list[list[str]] = []
            prev = 0
            for c, blk in zip(cut, blocks, strict=True):
                merged.append(own[prev:c])
                merged.append(blk)
                prev = c
            merged.append(own[prev:])
            blocks = [b for b in merged if b]
        paras: list[str] = []
        for b in blocks:
            paras.extend(paragraphs(b))
        p = new_page(kind, site_i, heading, paras)
        p.attribution = attribution
        truth.append(
            TruthRecord(
                p.id,
                p.url,
                kind,
                tuple((pages[o].id, pages[o].url) for o, _, _ in patches),
                attributed,
            )
        )

    slots_iter = list(slots[slot_i:][::-1])
    for kind in ["quilt"] * n_quilts + ["control"] * n_controls:
        planted(kind)

    # boilerplate nav (needs page URLs) and the visible text -----------------
    for site in sites:
        idx = site.page_indices
        nav = [(site.name, f"{site.scheme}://{site.host}/")]
        for j, sec in enumerate(site.sections[1:], start=1):
            # the site's first page in that section (page j is filed under sections[j])
            target = pages[idx[j]].url if j < len(idx) else nav[0][1]
            nav.append((sec, target))
        site.nav = nav
    for p in pages:
        p.text = _visible_text(p, sites[p.site])

    # crawl order: shuffle so that roles are not grouped (ids follow the final position)
    pages.sort(key=lambda p: int(order[p.index]))
    for pos, p in enumerate(pages):
        p.index = pos
        p.date = base_date + timedelta(seconds=pos * 37 + int(rng.integers(0, 30)))
    for site in sites:
        site.page_indices = [int(order[i]) for i in site.page_indices]
    truth.sort(key=lambda t: t.doc_id)
    return Corpus(seed=seed, pages=pages, sites=sites, truth=truth)


# --------------------------------------------------------------------------- rendering


def _visible_text(page: Page, site: Site) -> str:
    parts = [" ".join(a for a, _ in site.nav), page.heading, *page.paragraphs]
    if page.attribution:
        parts.append("Sources: " + ", ".join(a for a, _ in page.attribution))
    parts.append(site.footer)
    return "\n".join(parts)


_STYLE = (
    "body{font-family:Georgia,'Times New Roman',serif;margin:0 auto;max-width:46em;color:#222}"
    "nav ul{list-style:none;display:flex;gap:1em}header,footer{padding:.5em 0}"
    "footer{font-size:small;color:#666;border-top:1px solid #ccc}a{color:#0645ad}"
)


def render_html(page: Page, site: Site) -> str:
    """HTML for ``page``: visible text equals ``page.text`` (script/style carry no visible words)."""
    e = htmlmod.escape
    desc = e(page.paragraphs[0][:150]) if page.paragraphs else ""
    kw = ", ".join(dict.fromkeys(w.lower() for w in WORD_RE.findall(page.heading) if len(w) > 3))
    nav = "".join(f'<li><a href="{e(u)}">{e(a)}</a></li>' for a, u in site.nav)
    body = "\n".join(f"<p>{e(p)}</p>" for p in page.paragraphs)
    attr = ""
    if page.attribution:
        links = ", ".join(f'<a href="{e(u)}">{e(a)}</a>' for a, u in page.attribution)
        attr = f'\n<p class="sources">Sources: {links}</p>'
    script = (
        "var _q=window._q||[];_q.push(['pageview','" + page.id[10:-1] + "']);"
        "document.addEventListener('DOMContentLoaded',function(){var n=document.querySelectorAll('nav a');"
        "for(var i=0;i<n.length;i++){if(n[i].href===location.href){n[i].className='active';}}});"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{e(page.title)}</title>\n"
        f'<meta name="description" content="{desc}">\n'
        f'<meta name="keywords" content="{e(kw)}">\n'
        f"<style>{_STYLE}</style>\n<script>{script}</script>\n</head>\n<body>\n"
        f"<header><nav><ul>{nav}</ul></nav></header>\n<!-- main content -->\n"
        f"<main><article>\n<h1>{e(page.heading)}</h1>\n{body}{attr}\n</article></main>\n"
        f"<footer><p>{e(site.footer)}</p></footer>\n</body>\n</html>\n"
    )


# --------------------------------------------------------------------------- writers


def _warc_date(d: datetime) -> str:
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


def write_warc(corpus: Corpus, path: Path | str) -> int:
    """Write WARC/1.0 (.warc.gz, one gzip member per record): warcinfo, then request+response per page.

    Output is byte-for-byte deterministic. Returns the number of records written.
    """
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=str(path).endswith(".gz"), warc_version="WARC/1.0")
        info = (
            "software: quiltdetect.corpus.generate\r\n"
            "format: WARC File Format 1.0\r\n"
            f"description: synthetic corpus with planted quilts, seed={corpus.seed}, pages={len(corpus.pages)}\r\n"
        ).encode()
        first = corpus.pages[0].date if corpus.pages else datetime(2024, 3, 1, tzinfo=timezone.utc)
        rec = writer.create_warc_record(
            "",
            "warcinfo",
            payload=io.BytesIO(info),
            length=len(info),
            warc_content_type="application/warc-fields",
            warc_headers_dict={
                "WARC-Record-ID": f"<urn:uuid:{uuid.uuid5(NAMESPACE, f'{corpus.seed}:warcinfo')}>",
                "WARC-Date": _warc_date(first),
                "WARC-Filename": path.name,
            },
        )
        writer.write_record(rec)
        n += 1
        for p in corpus.pages:
            date = _warc_date(p.date)
            host = p.url.split("/")[2]
            req_path = "/" + p.url.split("/", 3)[3]
            req_id = f"<urn:uuid:{uuid.uuid5(NAMESPACE, f'{corpus.seed}:request:{p.index}')}>"
            req_headers = StatusAndHeaders(
                f"GET {req_path} HTTP/1.1",
                [("Host", host), ("User-Agent", "quiltdetect-synth/0.1"), ("Accept", "text/html")],
                is_http_request=True,
            )
            req = writer.create_warc_record(
                p.url,
                "request",
                http_headers=req_headers,
                warc_headers_dict={
                    "WARC-Record-ID": req_id,
                    "WARC-Date": date,
                    "WARC-IP-Address": p.ip,
                },
            )
            body = p.html.encode("utf-8")
            http_headers = StatusAndHeaders(
                "200 OK",
                [
                    ("Date", p.date.strftime("%a, %d %b %Y %H:%M:%S GMT")),
                    ("Server", "nginx"),
                    ("Content-Type", "text/html; charset=utf-8"),
                    ("Content-Length", str(len(body))),
                ],
                protocol="HTTP/1.1",
            )
            resp = writer.create_warc_record(
                p.url,
                "response",
                payload=io.BytesIO(body),
                length=len(body),
                http_headers=http_headers,
                warc_headers_dict={
                    "WARC-Record-ID": p.id,
                    "WARC-Date": date,
                    "WARC-IP-Address": p.ip,
                    "WARC-Concurrent-To": req_id,
                },
            )
            writer.write_record(req)
            writer.write_record(resp)
            n += 2
    return n


def write_table(corpus: Corpus, path: Path | str, fmt: str) -> Path:
    """Write ``id, url, text, ip`` as ``jsonl`` (one file) or ``parquet`` (a directory with one part)."""
    path = Path(path)
    if fmt == "jsonl":
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            for p in corpus.pages:
                fh.write(
                    json.dumps(
                        {"id": p.id, "url": p.url, "text": p.text, "ip": p.ip}, ensure_ascii=False
                    )
                )
                fh.write("\n")
        return path
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        path.mkdir(parents=True, exist_ok=True)
        table = pa.table(
            {
                "id": pa.array([p.id for p in corpus.pages], pa.string()),
                "url": pa.array([p.url for p in corpus.pages], pa.string()),
                "text": pa.array([p.text for p in corpus.pages], pa.large_string()),
                "ip": pa.array([p.ip for p in corpus.pages], pa.string()),
            }
        )
        table = table.cast(
            pa.schema(
                [
                    ("id", pa.string()),
                    ("url", pa.string()),
                    ("text", pa.string()),
                    ("ip", pa.string()),
                ]
            )
        )
        out = path / "part-00000.parquet"
        pq.write_table(table, out, compression="zstd", row_group_size=20_000)
        return out
    raise ValueError(f"unknown table format: {fmt!r}")


def write_truth(corpus: Corpus, path: Path | str) -> Path:
    """Write the ground truth as JSON Lines (quilts, controls, mirrors, near-copies)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for t in corpus.truth:
            fh.write(json.dumps(t.to_json(), ensure_ascii=False) + "\n")
    return path


# --------------------------------------------------------------------------- CLI


def find_shared_data(start: Path | None = None) -> Path | None:
    """The ``shared/data`` directory: ./shared/data, ../shared/data or ../../shared/data from
    ``start`` (default: the working directory, then this checkout)."""
    starts = [Path(start)] if start is not None else [Path.cwd(), Path(__file__).resolve().parents[1]]
    for begin in starts:
        for up in (begin, begin.parent, begin.parent.parent):
            cand = up / "shared" / "data"
            if (cand / "text_corpora").is_dir():
                return cand
    return None


def _default_truth(out: Path, fmt: str) -> Path:
    name = out.name
    for suffix in (".warc.gz", ".warc", ".jsonl", ".parquet"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return out.parent / f"{name}.truth.jsonl"


def main(argv: list[str] | None = None) -> int:
    """Command line: generate a corpus and write it with its ground truth."""
    ap = argparse.ArgumentParser(
        prog="python bench/corpus.py",
        description="Generate a synthetic web corpus with planted quilts from real prose.",
    )
    ap.add_argument(
        "--shared-data", type=Path, default=None, help="shared data dir (default: found from CWD)"
    )
    ap.add_argument("--pages", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--format", choices=["warc", "parquet", "jsonl"], default="warc")
    ap.add_argument(
        "--out", type=Path, required=True, help="file (warc, jsonl) or directory (parquet)"
    )
    ap.add_argument("--truth", type=Path, default=None, help="truth JSONL (default: beside --out)")
    args = ap.parse_args(argv)

    shared = args.shared_data or find_shared_data()
    if shared is None or not Path(shared).is_dir():
        print("error: shared data not found; pass --shared-data", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    prose = load_prose(Path(shared))
    corpus = generate(prose, args.pages, args.seed)
    if args.format == "warc":
        write_warc(corpus, args.out)
    else:
        write_table(corpus, args.out, args.format)
    truth = args.truth or _default_truth(args.out, args.format)
    write_truth(corpus, truth)
    print(f"{corpus.summary()} -> {args.out} (truth {truth}) in {time.perf_counter() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
