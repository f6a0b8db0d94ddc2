"""The robustness experiment of §5.3-5.4 on labeled-chunk flags; numpy only, no Spark.

A page is its vector of flags (bool, one per non-stop chunk: is the chunk in L?). Mutations
are applied independently to every page of the site, ``n`` per page:

* ``add``: append n chunks of new content (not in L), diluting the page (Figs. 4, 8);
* ``delete``: remove n chunks chosen at random without replacement; a page with no chunk left
  ceases to exist (Figs. 5, 9);
* ``modify``: n times pick a chunk at random *with replacement* and rewrite it, so its hash
  leaves L (Figs. 6, 7, 10).

For each n the site is mutated afresh ``runs`` times and the results averaged (standard errors
kept), as the paper does with 10 runs per point.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["mutate_page", "mutation_grid", "run_experiment", "site_scores"]


def mutate_page(flags: np.ndarray, op: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """One page after n mutations of kind ``op`` (flags: bool array, shape (chunks,))."""
    if n <= 0:
        return flags
    if op == "add":
        return np.concatenate([flags, np.zeros(n, dtype=bool)])
    if op == "delete":
        if n >= len(flags):
            return flags[:0]
        drop = rng.choice(len(flags), size=n, replace=False)
        keep = np.ones(len(flags), dtype=bool)
        keep[drop] = False
        return flags[keep]
    if op == "modify":
        if len(flags) == 0:
            return flags
        out = flags.copy()
        out[rng.integers(0, len(flags), size=n)] = False
        return out
    raise ValueError(f"unknown mutation {op!r}: use add, delete or modify")


def site_scores(pages: Sequence[np.ndarray], page_threshold: float) -> dict[str, float]:
    """contains per surviving page, its mean, pages above the threshold, and badness of the site.

    The site's badness is the mean of contains over its pages (definitions §4), so it equals the mean
    page badness of the same pages; ``chunk_ratio`` pools the chunks instead (§3.3).
    """
    sizes = np.fromiter((len(p) for p in pages), dtype=np.int64, count=len(pages))
    labeled = np.fromiter((int(p.sum()) for p in pages), dtype=np.int64, count=len(pages))
    alive = sizes > 0
    contains = labeled[alive] / sizes[alive]
    return {
        "pages": float(alive.sum()),
        "chunks_per_page": float(sizes[alive].mean()) if alive.any() else 0.0,
        "page_badness": float(contains.mean()) if alive.any() else 0.0,
        "pages_detected": float((contains > page_threshold).sum()),
        "neighborhood_badness": float(contains.mean()) if alive.any() else 0.0,
        "chunk_ratio": float(labeled[alive].sum() / sizes[alive].sum()) if alive.any() else 0.0,
    }


def mutation_grid(cpp: float, max_mutations_cpp: float, steps: int) -> np.ndarray:
    """Distinct integer mutation counts per page from 0 to max_mutations_cpp * cpp (int64)."""
    top = max(1, int(round(max_mutations_cpp * cpp)))
    return np.unique(np.round(np.linspace(0, top, steps + 1)).astype(np.int64))


def run_experiment(
    pages: Sequence[np.ndarray],
    op: str,
    grid: Sequence[int],
    runs: int,
    seed: int,
    page_threshold: float,
) -> pd.DataFrame:
    """Mean and standard error over ``runs`` of the site scores at each mutation count.

    The random stream depends only on (seed, op, n, run), so every point is reproducible alone.
    """
    op_code = {"add": 1, "delete": 2, "modify": 3}[op]
    rows = []
    for n in grid:
        samples = []
        for run in range(runs):
            rng = np.random.default_rng([seed, op_code, int(n), run])
            mutated = [mutate_page(p, op, int(n), rng) for p in pages]
            samples.append(site_scores(mutated, page_threshold))
        frame = pd.DataFrame(samples)
        row = {"mutation": op, "mutations": int(n)}
        for column in frame.columns:
            row[column] = float(frame[column].mean())
            row[column + "_se"] = float(frame[column].std(ddof=1) / np.sqrt(runs)) if runs > 1 else 0.0
        rows.append(row)
    return pd.DataFrame(rows)
