"""MinHash LSH by banding, and the exact resemblance and containment that verify its candidates.

Broder 1997 ("On the resemblance and containment of documents") defines both measures on a
page's set of shingles S(d):

- resemblance  r(a, b) = |S(a) ∩ S(b)| / |S(a) ∪ S(b)|  (Jaccard);
- containment  c(a, b) = |S(a) ∩ S(b)| / min(|S(a)|, |S(b)|)  (the share of the smaller page
  found in the larger: an updated article or a page with an inserted passage is contained in
  its other version long before the two resemble each other closely).

Candidates come from banding (Indyk & Motwani; Leskovec, Rajaraman & Ullman, ch. 3): ``bands``
× ``rows`` min-hash selectors (the supershingles' kind, seeded separately), each band's ``rows``
minvalues chained into one fingerprint. Two pages are candidates when any band is equal, which
for resemblance s happens with probability ``1 - (1 - s**rows)**bands`` (the S-curve,
``candidate_probability``). Every candidate is then verified exactly on the shingle sets.
"""

from __future__ import annotations

import functools

import numpy as np

from quiltdetect.neardup.supershingles import MINHASH_SEED, minvalues, runs_of, selector_seeds

LSH_SEED = MINHASH_SEED + 0x100  # the bands' selectors are not the supershingles' 84


@functools.lru_cache(maxsize=8)
def selectors(bands: int, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(seeds, odd multipliers) of the bands × rows min-hash selectors, and the bands' seeds."""
    n = bands * rows
    return (selector_seeds(n, LSH_SEED), selector_seeds(n, LSH_SEED + 1) | np.uint64(1),
            selector_seeds(bands, LSH_SEED + 2))


def band_keys(shingle_set: np.ndarray, bands: int, rows: int) -> np.ndarray | None:
    """The page's band fingerprints, uint64 (bands,); None for a page without shingles."""
    if shingle_set.shape[0] == 0:
        return None
    seeds, multipliers, band_seeds = selectors(bands, rows)
    return runs_of(minvalues(shingle_set, seeds, multipliers), bands, band_seeds)


def is_candidate(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Whether two pages share a band (their band keys are equal at some index)."""
    return a is not None and b is not None and bool(np.any(np.asarray(a) == np.asarray(b)))


def candidate_probability(s: float | np.ndarray, bands: int, rows: int) -> float | np.ndarray:
    """The S-curve: probability that two pages of resemblance s share at least one band."""
    return 1.0 - (1.0 - np.asarray(s, dtype=np.float64) ** rows) ** bands


def intersection_size(a: np.ndarray, b: np.ndarray) -> int:
    """|A ∩ B| of two sorted, duplicate-free shingle arrays."""
    return int(np.intersect1d(a, b, assume_unique=True).shape[0])


def resemblance_containment(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(resemblance, containment) of two shingle sets; (0, 0) when either is empty.

    Computed as the Spark verification does (a double division of integer counts), so the
    in-memory reference and the job agree to the last bit.
    """
    if a.shape[0] == 0 or b.shape[0] == 0:
        return 0.0, 0.0
    common = intersection_size(a, b)
    return common / (a.shape[0] + b.shape[0] - common), common / min(a.shape[0], b.shape[0])


def is_near_duplicate(resemblance: float, containment: float, resemblance_threshold: float,
                      containment_threshold: float) -> bool:
    """The decision rule on a verified candidate: resemblance or containment high enough."""
    return resemblance >= resemblance_threshold or containment >= containment_threshold
