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


def signed(words: np.ndarray | None) -> list[int] | None:
    """uint64 words as Spark longs (same bits, signed)."""
    return None if words is None else words.view(np.int64).tolist()


def fingerprint_row(text: str | None, url: str | None, images: Iterable[str] | None,
                    k: int, wrap: bool, n_pieces: int) -> tuple[int, list[int] | None, list[int] | None, list[int] | None]:
    """(n_terms, supershingles, simhash, simhash pieces) as Spark longs; Nones for a page without terms."""
    fp = fingerprint(text, url, images, k=k, wrap=wrap)
    if fp.n_terms == 0:
        return 0, None, None, None
    return fp.n_terms, signed(fp.supershingles), signed(fp.simhash), pieces(fp.simhash, n_pieces).tolist()


def shingle_set(text: str | None, url: str | None = None, images: Iterable[str] | None = None,
                *, k: int = 4, wrap: bool = False) -> np.ndarray:
    """The page's set of k-term shingles: uint64, sorted, unique (empty without terms)."""
    return shingles(term_hashes(page_terms(text, url, images)), k, wrap=wrap)


def lsh_row(text: str | None, url: str | None, images: Iterable[str] | None, k: int, wrap: bool,
            bands: int, rows: int) -> tuple[int, list[int] | None, list[int] | None]:
    """(n_terms, shingle set, band keys) as Spark longs; Nones for a page without terms."""
    hashes = term_hashes(page_terms(text, url, images))
    if hashes.shape[0] == 0:
        return 0, None, None
    s = shingles(hashes, k, wrap=wrap)
    return int(hashes.shape[0]), signed(s), signed(band_keys(s, bands, rows))
