"""Corpus step 1: load the real prose and split it into sentences.

The collections under ``shared/data`` (State of the Union and inaugural addresses,
Wikipedia articles, the Lee news corpus, news article bodies) are read in a fixed order,
split into 4..90-word sentences, and repeated sentences are dropped so that every kept
sentence occurs once in the whole pool: an original page's grams are then rare.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["WORD_RE", "ProseDoc", "find_shared_data", "load_prose", "split_sentences"]

WORD_RE = re.compile(r"[^\W_]+")
# Split after . ! ? (plus closing quotes/brackets) when a capital, digit or opening quote follows.
_SENT_SPLIT = re.compile(r"(?<=[.!?])[\"'\u2019\u201d)\]]*\s+(?=[\"'\u2018\u201c(\[]?[A-Z0-9])")
_WS = re.compile(r"\s+")

MIN_SENT_WORDS = 4
MAX_SENT_WORDS = 90


@dataclass(frozen=True)
class ProseDoc:
    """One real prose document, split into sentences."""

    name: str
    licence: str
    sentences: tuple[str, ...]


def find_shared_data(start: Path | None = None) -> Path | None:
    """The ``shared/data`` directory: ./shared/data, ../shared/data or ../../shared/data from
    ``start`` (default: the working directory, then this checkout)."""
    starts = (
        [Path(start)] if start is not None else [Path.cwd(), Path(__file__).resolve().parents[2]]
    )
    for begin in starts:
        for up in (begin, begin.parent, begin.parent.parent):
            cand = up / "shared" / "data"
            if (cand / "text_corpora").is_dir():
                return cand
    return None


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
    """A text file as UTF-8 (Latin-1 where that fails), with known mangled punctuation repaired."""
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


def _prose_sources(shared_data: Path) -> Iterator[tuple[str, str, str]]:
    """``(name, licence, text)`` of every prose document, collection by collection, in a fixed
    order (the order fixes which sentence survives as the first of its repeats)."""
    tc = shared_data / "text_corpora"
    for sub in ("nltk_state_union", "nltk_inaugural"):
        for p in sorted((tc / sub).glob("*.txt")):
            if p.name.upper().startswith("README"):
                continue
            yield f"{sub}/{p.name}", "public-domain", _read_text(p)
    wiki = tc / "gensim_test_data" / "enwiki_sample_plaintext.jsonl.gz"
    if wiki.exists():
        with gzip.open(wiki, "rt", encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                yield f"enwiki/{rec.get('title', rec.get('id'))}", "CC-BY-SA", rec["text"]
    lee = tc / "gensim_test_data" / "lee_background.cor"
    if lee.exists():
        for i, line in enumerate(_read_text(lee).splitlines()):
            yield f"lee_background/{i}", "Lee-2005-news(LGPL-2.1-package)", line
    gt = shared_data / "article_extraction_benchmark" / "ground-truth.json"
    if gt.exists():
        data = json.loads(gt.read_text(encoding="utf-8"))
        for key in sorted(data):
            body = data[key].get("articleBody") or ""
            yield f"article_benchmark/{key[:12]}", "MIT(benchmark)", body


def _drop_repeated_sentences(docs: list[ProseDoc]) -> list[ProseDoc]:
    """Keep the first occurrence of each sentence (by its lower-cased words) in the whole pool.

    Headers, sign-offs and site chrome repeat in the sources; without them an original
    page's grams are rare. Documents left with fewer than 3 sentences are dropped.
    """
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


def load_prose(shared_data: Path) -> list[ProseDoc]:
    """Load the real prose documents under ``shared_data`` (see module doc), in a fixed order."""
    shared_data = Path(shared_data)
    docs: list[ProseDoc] = []
    for name, licence, text in _prose_sources(shared_data):
        sents = split_sentences(text)
        if len(sents) >= 3:
            docs.append(ProseDoc(name, licence, tuple(sents)))
    if not docs:
        raise FileNotFoundError(f"no prose found under {shared_data}")
    return _drop_repeated_sentences(docs)
