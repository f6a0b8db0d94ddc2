"""Plain in-memory near-duplicates of definitions §2, the oracle of the parity tests.

All pairs of pages are compared (no buckets, no caps): a pair is reported when the algorithm's
definition holds for its exact B- and C-similarity, or (lsh) when the two pages share an LSH
band and their exact resemblance or containment passes; clusters come from a union-find.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import combinations

from quiltdetect.documents.urls import host_of, site_of
from quiltdetect.neardup import lsh
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.neardup.fingerprints import fingerprint, shingle_set
from quiltdetect.neardup.simhash import c_similarity
from quiltdetect.neardup.supershingles import b_similarity


@dataclass(frozen=True)
class RefDoc:
    doc_id: str
    text: str
    url: str = ""
    images: tuple[str, ...] = ()
    warc_date: str | None = None


def is_near_duplicate(cfg: NearDupConfig, b: int, c: int, same_site: bool) -> bool:
    """The algorithm's definition on one pair's exact similarities."""
    combined = b >= cfg.b_threshold and c >= cfg.combined_c_threshold
    if cfg.algorithm == "b":
        return b >= cfg.b_threshold
    if cfg.algorithm == "c":
        return c >= cfg.c_threshold
    if cfg.algorithm == "combined":
        return combined
    return combined if same_site else c >= cfg.c_threshold


def reference_pairs(docs: list[RefDoc], cfg: NearDupConfig) -> dict[tuple[str, str], tuple]:
    """(doc_id_a, doc_id_b) with a < b -> (b_similarity, c_similarity, same_site), or for lsh
    (resemblance, containment, same_site)."""
    if cfg.algorithm == "lsh":
        return reference_lsh_pairs(docs, cfg)
    prints = {d.doc_id: fingerprint(d.text, d.url, d.images, k=cfg.k, wrap=cfg.wrap) for d in docs}
    sites = {d.doc_id: site_of(host_of(d.url)) for d in docs}
    out = {}
    for x, y in combinations(sorted(prints), 2):
        px, py = prints[x], prints[y]
        if not px.n_terms or not py.n_terms:
            continue  # a page without terms has no fingerprint: never a near-duplicate
        b = b_similarity(px.supershingles, py.supershingles)
        c = c_similarity(px.simhash, py.simhash)
        same = sites[x] == sites[y] and sites[x] != ""
        if is_near_duplicate(cfg, b, c, same):
            out[(x, y)] = (b, c, same)
    return out


def reference_lsh_pairs(docs: list[RefDoc], cfg: NearDupConfig) -> dict[tuple[str, str], tuple[float, float, bool]]:
    """The lsh algorithm over all pairs: shares a band, then the exact rule."""
    sets = {d.doc_id: shingle_set(d.text, d.url, d.images, k=cfg.k, wrap=cfg.wrap) for d in docs}
    keys = {x: lsh.band_keys(s, cfg.lsh_bands, cfg.lsh_rows) for x, s in sets.items()}
    sites = {d.doc_id: site_of(host_of(d.url)) for d in docs}
    out = {}
    for x, y in combinations(sorted(sets), 2):
        if not lsh.is_candidate(keys[x], keys[y]):
            continue
        r, c = lsh.resemblance_containment(sets[x], sets[y])
        if lsh.is_near_duplicate(r, c, cfg.resemblance_threshold, cfg.containment_threshold):
            out[(x, y)] = (r, c, sites[x] == sites[y] and sites[x] != "")
    return out


def reference_clusters(pairs: list[tuple[str, str]]) -> dict[str, tuple[str, int]]:
    """doc_id -> (cluster_id = smallest doc_id of its component, cluster_size), by union-find."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    roots = {x: find(x) for x in parent}
    sizes: dict[str, int] = {}
    for r in roots.values():
        sizes[r] = sizes.get(r, 0) + 1
    return {x: (r, sizes[r]) for x, r in roots.items()}


def crawl_key(doc: RefDoc) -> tuple[int, datetime | None, str]:
    """A page's place in crawl order: dated pages by date, then pages without a readable date;
    then doc_id."""
    try:
        when = datetime.fromisoformat(doc.warc_date) if doc.warc_date else None
    except ValueError:
        when = None
    if when is not None and when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return (0, when, doc.doc_id) if when is not None else (1, None, doc.doc_id)


def reference_kept(docs: list[RefDoc], pairs: dict[tuple[str, str], tuple],
                   kept_before: frozenset[str] = frozenset(), decided: frozenset[str] = frozenset()
                   ) -> dict[str, tuple[str, tuple]]:
    """The keep rule (definitions §2) over all pages: dropped doc_id -> (the kept page it
    duplicates, the pair's values). Pages in ``kept_before`` count as kept from the start and
    pages in ``decided`` (kept or dropped by an earlier run) are not decided again."""
    partners: dict[str, list[str]] = {}
    for x, y in pairs:
        partners.setdefault(x, []).append(y)
        partners.setdefault(y, []).append(x)
    place = {d.doc_id: crawl_key(d) for d in docs}
    kept = set(kept_before)
    dropped: dict[str, tuple[str, tuple]] = {}
    for doc in sorted(docs, key=crawl_key):
        x = doc.doc_id
        if x in decided or x in kept:
            continue
        keepers = sorted((place[y], y) for y in partners.get(x, ()) if y in kept)
        if keepers:
            y = keepers[0][1]
            dropped[x] = (y, pairs[(min(x, y), max(x, y))])
        else:
            kept.add(x)
    return dropped
