"""A plain in-memory implementation of definitions §1, straight from the definitions.

It works on real word tuples, not fingerprints, so it also checks the kernel's hashing.
It is the oracle of the parity tests and small enough to read against the paper.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from quiltdetect.common.reference import RefDoc, server_of
from quiltdetect.kernel.words import words

__all__ = ["RefDoc", "RefResult", "server_of"]  # RefDoc and server_of: common.reference, shared with phrases


@dataclass
class RefResult:
    """Patch statistics and greedy sources of one document with at least one gram."""

    doc_id: str
    n_grams: int
    n_patch_grams: int
    patchfrac: float
    sources: list[tuple[str, int, int]] = field(default_factory=list)  # (doc_id, covered, shared)


def kgrams(text: str, k: int) -> list[tuple[str, ...]]:
    """The k-grams of a text in order, with repeats."""
    tokens = words(text)
    return [tuple(tokens[i : i + k]) for i in range(len(tokens) - k + 1)]


def greedy_sources(pairs: set[tuple[str, tuple]], shared: Counter) -> list[tuple[str, int, int]]:
    """The greedy cover of definitions §1 over pairs (source doc_id, gram), with its tie-break."""
    remaining = set(pairs)
    picks: list[tuple[str, int, int]] = []
    while remaining:
        gain = Counter(src for src, _ in remaining)
        best = min(gain, key=lambda s: (-gain[s], -shared[s], s))
        covered = {g for s, g in remaining if s == best}
        picks.append((best, len(covered), shared[best]))
        remaining = {(s, g) for s, g in remaining if g not in covered}
    return picks


def reference_quilts(
    docs: list[RefDoc],
    k: int,
    m: int,
    theta: float,
    foreign: str = "none",
    count_occurrences: bool = False,
    phi: float = 0.0,
) -> dict[str, RefResult]:
    """Patch statistics of every document with grams, and sources of every patchy one.

    A document is patchy when patchfrac >= theta; filter ``len(sources) >= c`` for quilts.
    With ``phi``, sources that covered fewer than ``phi * |pgrams(d)|`` grams are dropped.
    """
    grams_of = {d.doc_id: kgrams(d.text, k) for d in docs}
    sets_of = {doc_id: set(gs) for doc_id, gs in grams_of.items()}
    docs_of: dict[tuple, set[str]] = defaultdict(set)
    for doc_id, gs in sets_of.items():
        for g in gs:
            docs_of[g].add(doc_id)
    patch = {g for g, ds in docs_of.items() if 1 < len(ds) <= m}
    by_id = {d.doc_id: d for d in docs}
    results: dict[str, RefResult] = {}
    for d in docs:
        gs = sets_of[d.doc_id]
        if not gs:
            continue
        if count_occurrences:
            n_grams = len(grams_of[d.doc_id])
            n_patch = sum(1 for g in grams_of[d.doc_id] if g in patch)
        else:
            n_grams = len(gs)
            n_patch = len(gs & patch)
        result = RefResult(d.doc_id, n_grams, n_patch, n_patch / n_grams)
        results[d.doc_id] = result
        if result.patchfrac < theta or n_patch == 0:
            continue
        mine = server_of(d, foreign)
        pairs = {
            (src, g)
            for g in gs & patch
            for src in docs_of[g]
            if src != d.doc_id and (mine is None or server_of(by_id[src], foreign) != mine)
        }
        shared = Counter(src for src, _ in pairs)
        result.sources = [s for s in greedy_sources(pairs, shared) if s[1] >= phi * n_patch]
    return results
