"""A plain in-memory implementation of definitions §3, straight from the definitions.

It works on word tuples (phrases as text, not fingerprints), selects with Python integers,
clusters by union-find over all pairs and builds covering sets by the naive greedy loop. It is
the oracle of the parity tests and small enough to read against the paper.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from quiltdetect.common.reference import RefDoc, server_of
from quiltdetect.kernel.grams import gram_fingerprints
from quiltdetect.kernel.words import term_hashes, words
from quiltdetect.neardup.reference import reference_clusters
from quiltdetect.neardup.supershingles import N_MINHASH, supershingles_of
from quiltdetect.phrases.config import PhrasesConfig
from quiltdetect.phrases.covering import sample_priority
from quiltdetect.phrases.sampling import selectors

MASK = (1 << 64) - 1
Phrase = tuple[str, ...]


@dataclass
class RefPhrases:
    """Everything the job reports, keyed by doc_id / phrase text / host."""

    kept: list[str]  # doc_ids after the near-duplicate collapse, with words
    shingles: dict[str, list[Phrase]]  # doc_id -> the phrase chosen by each selector
    counts: dict[tuple[int, Phrase], int]  # (selector, phrase) -> documents
    n_popular: dict[str, int]  # doc_id -> popular shingles
    phrases: list[tuple[str, int, int, str]]  # ranked (text, n_documents, n_samples, example doc_id)
    covers: dict[str, list[tuple[str, int, int, bool]]] = field(default_factory=dict)  # (donor, covered, shared, foreign)
    hosts: dict[str, tuple[int, float, float, float, float | None]] = field(default_factory=dict)
    # host -> (pages, mean, std, monster score, mean covering-set size of its sampled pages)
    monsters: list[str] = field(default_factory=list)  # ranked hosts


def circle(tokens: list[str], k: int) -> list[Phrase]:
    """The n circular k-phrases of an n-word document."""
    n = len(tokens)
    return [tuple(tokens[(i + j) % n] for j in range(k)) for i in range(n)]


def fingerprint(phrase: Phrase) -> int:
    """The kernel's fingerprint of one phrase, as an unsigned Python int."""
    return int(gram_fingerprints(term_hashes(list(phrase)), len(phrase))[0])


def select_phrases(phrases: set[Phrase], m: int) -> tuple[list[Phrase], list[int]]:
    """(the phrase with the smallest h_i, the 84 minvalues) for selectors i < max(m, 84)."""
    seeds, mults = selectors(m)
    fps = {p: fingerprint(p) for p in phrases}
    chosen, minvals = [], []
    for s, a in zip(seeds.tolist(), mults.tolist(), strict=True):
        p = min(phrases, key=lambda q: ((fps[q] ^ s) * a) & MASK)
        chosen.append(p)
        minvals.append(((fps[p] ^ s) * a) & MASK)
    return chosen[:m], minvals[:N_MINHASH]


def greedy(target: str, popular_at: list[int], shingles: dict[str, list[Phrase]], servers: dict[str, str | None],
           foreign_pref: bool) -> list[tuple[str, int, int, bool]]:
    """The paper's greedy covering set of one document, one donor at a time."""
    mine = shingles[target]
    meets = {g: {i for i in popular_at if s[i] == mine[i]} for g, s in shingles.items() if g != target}
    shared = {g: sum(1 for a, b in zip(s, mine, strict=True) if a == b) for g, s in shingles.items() if g != target}
    foreign = {g: foreign_pref and servers[g] != servers[target] for g in meets}
    uncovered, picks = set(popular_at), []
    while uncovered:
        gains = {g: len(meets[g] & uncovered) for g in meets}
        pool = [g for g in gains if gains[g] and foreign[g]] or [g for g in gains if gains[g]]
        if not pool:
            break
        best = min(pool, key=lambda g: (-gains[g], -shared[g], g))
        picks.append((best, gains[best], shared[best], foreign[best]))
        uncovered -= meets[best]
    return picks


def reference_phrases(docs: list[RefDoc], cfg: PhrasesConfig) -> RefPhrases:
    """definitions §3 on a list of documents (doc_ids distinct)."""
    k, m = cfg.k, cfg.shingles
    tokens = {d.doc_id: words(d.text) for d in docs}
    shingles, supers = {}, {}
    for doc_id in sorted(tokens):
        if tokens[doc_id]:
            chosen, minvals = select_phrases(set(circle(tokens[doc_id], k)), m)
            shingles[doc_id] = chosen
            supers[doc_id] = supershingles_of(np.asarray(minvals, dtype=np.uint64))
    kept = sorted(shingles)
    if cfg.collapse_near_duplicates:
        pairs = [(a, b) for a, b in combinations(kept, 2)
                 if int(np.count_nonzero(supers[a] == supers[b])) >= cfg.near_duplicate_b]
        dropped = {x for x, (root, _) in reference_clusters(pairs).items() if x != root}
        kept = [d for d in kept if d not in dropped]
        shingles = {d: shingles[d] for d in kept}
    counts = Counter((i, p) for s in shingles.values() for i, p in enumerate(s))
    popular = {key for key, n in counts.items() if n >= cfg.popular}
    n_popular = {d: sum((i, p) in popular for i, p in enumerate(s)) for d, s in shingles.items()}

    by_phrase: dict[Phrase, set[str]] = defaultdict(set)
    samples: Counter = Counter()
    for d, s in shingles.items():
        for p in s:
            by_phrase[p].add(d)
            samples[p] += 1
    listed = {p for _, p in popular}
    ranked = sorted(listed, key=lambda p: (-len(by_phrase[p]), -samples[p], " ".join(p), fingerprint(p)))
    phrases = [(" ".join(p), len(by_phrase[p]), samples[p], min(by_phrase[p])) for p in ranked]

    result = RefPhrases(kept, shingles, dict(counts), n_popular, phrases)
    by_id = {d.doc_id: d for d in docs}
    servers = {d: server_of(by_id[d], cfg.foreign) for d in kept}
    eligible = [d for d in kept if n_popular[d] >= cfg.cover_min_popular
                and (not cfg.cover_servers or servers[d] in cfg.cover_servers)]
    result.covers = {d: greedy(d, [i for i, p in enumerate(shingles[d]) if (i, p) in popular], shingles, servers,
                               cfg.foreign != "none")
                     for d in sample_documents(eligible, n_popular, cfg)}

    pages: dict[str, list[int]] = defaultdict(list)
    sizes: dict[str, list[int]] = defaultdict(list)
    for d in kept:
        pages[by_id[d].host or ""].append(n_popular[d])
        if d in result.covers:
            sizes[by_id[d].host or ""].append(len(result.covers[d]))
    for h, v in pages.items():
        if len(v) >= cfg.min_host_pages:
            mean, std = statistics.fmean(v), statistics.pstdev(v)
            result.hosts[h] = (len(v), mean, std, len(v) * max(mean - std, 0.0) / m,
                               statistics.fmean(sizes[h]) if sizes[h] else None)
    candidates = [h for h, (_, mean, std, _, _) in result.hosts.items()
                  if mean >= cfg.monster_min_mean and std < cfg.monster_max_std]
    by_score = cfg.monster_order == "score"
    result.monsters = sorted(candidates, key=lambda h: (-result.hosts[h][3] if by_score else 0, -result.hosts[h][0],
                                                        -result.hosts[h][1], result.hosts[h][2], h))
    return result


def sample_documents(eligible: list[str], n_popular: dict[str, int], cfg: PhrasesConfig) -> list[str]:
    """The covering-set sample: uniform by seeded priority, per popular count, or all."""
    if cfg.cover_sample == "all":
        return sorted(eligible)
    order = sorted(eligible, key=lambda d: (sample_priority(d, cfg.cover_seed), d))
    if cfg.cover_sample == "uniform":
        return order[: cfg.cover_sample_size]
    taken: Counter = Counter()
    out = []
    for d in order:
        if taken[n_popular[d]] < cfg.cover_sample_size:
            taken[n_popular[d]] += 1
            out.append(d)
    return out
