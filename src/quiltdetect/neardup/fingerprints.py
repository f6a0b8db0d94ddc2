"""Per-page fingerprints, from one pass over the page's terms: Henzinger's supershingles and
simhash (algorithms B, C, combined), or the shingle set and its LSH bands (lsh)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from quiltdetect.neardup.lsh import band_keys, selectors
from quiltdetect.neardup.shingles import batch_shingles, shingles
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


@dataclass(frozen=True)
class ShingleBatch:
    """The shingle sets of a batch of d pages, one after the other, as the kernel computes them."""

    n_terms: np.ndarray  # int64 (d,)
    values: np.ndarray  # uint64: every page's set, sorted and unique, one after the other
    sizes: np.ndarray  # int64 (d,): each set's size (0 for a page without terms)

    @property
    def present(self) -> np.ndarray:
        """bool (d,): the pages with terms (and so with shingles)."""
        return self.n_terms > 0

    def sets(self) -> list[np.ndarray]:
        """Each page's set (a view)."""
        return np.split(self.values, np.cumsum(self.sizes)[:-1]) if self.sizes.shape[0] else []


def shingle_batch(hashes: np.ndarray, counts: np.ndarray, k: int, wrap: bool) -> ShingleBatch:
    """The shingle sets of a batch given by its term hashes one after the other and terms per page."""
    values, sizes = batch_shingles(hashes, counts, k, wrap=wrap)
    return ShingleBatch(np.asarray(counts, dtype=np.int64), values, sizes)


def _joined(pages: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    counts = np.fromiter(map(len, pages), dtype=np.int64, count=len(pages))
    return np.concatenate([np.empty(0, dtype=np.uint64), *pages]), counts


def fingerprint_batch_arrays(pages: list[np.ndarray], k: int, wrap: bool, n_pieces: int
                             ) -> list[tuple[int, np.ndarray | None, np.ndarray | None, np.ndarray | None]]:
    """``fingerprint_hash_arrays`` of every page of a batch (equal, tested), the min-hashes of all
    pages from shared blocks (``batch_minvalues``)."""
    batch = shingle_batch(*_joined(pages), k, wrap)
    present = np.flatnonzero(batch.present)
    minvals = batch_minvalues(batch.values, batch.sizes[present])
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


def lsh_batch(hashes: np.ndarray, counts: np.ndarray, k: int, wrap: bool, bands: int,
              rows: int) -> tuple[ShingleBatch, np.ndarray]:
    """The shingle sets of a batch (term hashes one after the other, terms per page) and the band
    keys of its pages with terms, uint64 (pages with terms, bands): all min-hashes from shared
    blocks (``batch_minvalues``)."""
    batch = shingle_batch(hashes, counts, k, wrap)
    seeds, multipliers, band_seeds = selectors(bands, rows)
    minvals = batch_minvalues(batch.values, batch.sizes[batch.present], seeds, multipliers)
    return batch, runs_of(minvals, bands, band_seeds)


def lsh_batch_arrays(pages: list[np.ndarray], k: int, wrap: bool, bands: int,
                     rows: int) -> list[tuple[int, np.ndarray | None, np.ndarray | None]]:
    """``lsh_hash_arrays`` of every page of a batch (equal, tested), from ``lsh_batch``."""
    batch, keys = lsh_batch(*_joined(pages), k, wrap, bands, rows)
    out: list[tuple[int, np.ndarray | None, np.ndarray | None]] = []
    next_key = iter(keys)
    for n, s in zip(batch.n_terms.tolist(), batch.sets(), strict=True):
        out.append((n, s, next(next_key)) if n else (0, None, None))
    return out
