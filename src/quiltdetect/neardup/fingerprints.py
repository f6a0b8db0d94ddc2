"""Per-page fingerprints, from one pass over the page's terms: Henzinger's supershingles and
simhash (algorithms B, C, combined), or the shingle set and its LSH bands (lsh)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from quiltdetect.neardup.lsh import band_keys
from quiltdetect.neardup.shingles import shingles
from quiltdetect.neardup.simhash import pieces, simhash
from quiltdetect.neardup.supershingles import supershingles
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
