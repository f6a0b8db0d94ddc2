"""Per-page fingerprints, from one pass over the page's terms: Henzinger's supershingles and
simhash (algorithms B, C, combined), or the shingle set and its LSH bands (lsh)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from quiltdetect.neardup.lsh import band_keys, selectors
from quiltdetect.neardup.shingles import shingles
from quiltdetect.neardup.simhash import pieces, simhash
from quiltdetect.neardup.supershingles import (
    batch_minvalues,
    runs_of,
    supershingles,
    supershingles_of,
)
from quiltdetect.neardup.tokens import page_terms, term_hashes


@dataclass(frozen=True)
class PageFingerprint:
    """n_terms; supershingles uint64 (6,) or None (no terms); simhash uint64 (6,)."""

    n_terms: int
    supershingles: np.ndarray | None
    simhash: np.ndarray


def fingerprint(text: str | None, url: str | None = None, images: Iterable[str] | None = None,
                *, k: int = 8, wrap: bool = False) -> PageFingerprint:
    """Henzinger terms -> (supershingles, simhash) of one page."""
    hashes = term_hashes(page_terms(text, url, images))
    return PageFingerprint(int(hashes.shape[0]), supershingles(shingles(hashes, k, wrap=wrap)), simhash(hashes))


def fingerprint_arrays(text: str | None, url: str | None, images: Iterable[str] | None, k: int, wrap: bool,
                       n_pieces: int) -> tuple[int, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """(n_terms, supershingles uint64 (6,), simhash uint64 (6,), simhash pieces int64); Nones for a
    page without terms."""
    return fingerprint_hash_arrays(term_hashes(page_terms(text, url, images)), k, wrap, n_pieces)


def fingerprint_hash_arrays(hashes: np.ndarray, k: int, wrap: bool,
                            n_pieces: int) -> tuple[int, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """``fingerprint_arrays`` of a page given by its term hashes (uint64, in order)."""
    if hashes.shape[0] == 0:
        return 0, None, None, None
    sh = simhash(hashes)
    return int(hashes.shape[0]), supershingles(shingles(hashes, k, wrap=wrap)), sh, pieces(sh, n_pieces)


def shingle_set(text: str | None, url: str | None = None, images: Iterable[str] | None = None,
                *, k: int = 4, wrap: bool = False) -> np.ndarray:
    """The page's set of k-term shingles: uint64, sorted, unique (empty without terms)."""
    return shingles(term_hashes(page_terms(text, url, images)), k, wrap=wrap)


def lsh_arrays(text: str | None, url: str | None, images: Iterable[str] | None, k: int, wrap: bool,
               bands: int, rows: int) -> tuple[int, np.ndarray | None, np.ndarray | None]:
    """(n_terms, shingle set uint64, band keys uint64 (bands,)); Nones for a page without terms."""
    return lsh_hash_arrays(term_hashes(page_terms(text, url, images)), k, wrap, bands, rows)


def lsh_hash_arrays(hashes: np.ndarray, k: int, wrap: bool, bands: int,
                    rows: int) -> tuple[int, np.ndarray | None, np.ndarray | None]:
    """``lsh_arrays`` of a page given by its term hashes (uint64, in order)."""
    if hashes.shape[0] == 0:
        return 0, None, None
    s = shingles(hashes, k, wrap=wrap)
    return int(hashes.shape[0]), s, band_keys(s, bands, rows)


def _batch_minvalues(sets: list[np.ndarray], seeds: np.ndarray | None = None,
                     multipliers: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(positions of the non-empty sets, their minvalues: uint64 (d, n)) of a batch's shingle sets."""
    sizes = np.fromiter(map(len, sets), dtype=np.int64, count=len(sets))
    values = np.concatenate(sets) if sets else np.empty(0, dtype=np.uint64)
    present = np.flatnonzero(sizes > 0)
    extra = {} if seeds is None else {"seeds": seeds, "multipliers": multipliers}
    return present, batch_minvalues(values, sizes[present], **extra)


def fingerprint_batch_arrays(pages: list[np.ndarray], k: int, wrap: bool, n_pieces: int
                             ) -> list[tuple[int, np.ndarray | None, np.ndarray | None, np.ndarray | None]]:
    """``fingerprint_hash_arrays`` of every page of a batch (equal, tested), the min-hashes of all
    pages from shared blocks (``batch_minvalues``)."""
    sets = [shingles(h, k, wrap=wrap) for h in pages]
    present, minvals = _batch_minvalues(sets)
    supers: list[np.ndarray | None] = [None] * len(pages)
    for i, row in zip(present.tolist(), supershingles_of(minvals), strict=True):
        supers[i] = row
    out: list[tuple[int, np.ndarray | None, np.ndarray | None, np.ndarray | None]] = []
    for h, sup in zip(pages, supers, strict=True):
        if h.shape[0] == 0:
            out.append((0, None, None, None))
            continue
        sh = simhash(h)
        out.append((int(h.shape[0]), sup, sh, pieces(sh, n_pieces)))
    return out


def lsh_batch_arrays(pages: list[np.ndarray], k: int, wrap: bool, bands: int,
                     rows: int) -> list[tuple[int, np.ndarray | None, np.ndarray | None]]:
    """``lsh_hash_arrays`` of every page of a batch (equal, tested), the min-hashes of all pages
    from shared blocks (``batch_minvalues``)."""
    sets = [shingles(h, k, wrap=wrap) for h in pages]
    seeds, multipliers, band_seeds = selectors(bands, rows)
    present, minvals = _batch_minvalues(sets, seeds, multipliers)
    keys: list[np.ndarray | None] = [None] * len(pages)
    for i, row in zip(present.tolist(), runs_of(minvals, bands, band_seeds), strict=True):
        keys[i] = row
    return [(int(h.shape[0]), s, key) if h.shape[0] else (0, None, None)
            for h, s, key in zip(pages, sets, keys, strict=True)]
