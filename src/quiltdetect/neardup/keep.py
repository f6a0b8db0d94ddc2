"""Which pages of a crawl are kept and which are dropped as near-duplicates (definitions §2).

Pages are taken in crawl order (earliest crawl date first, pages without a date after every
dated one, then the smallest doc_id). A page is **kept** unless it is a near-duplicate (a pair
of ``pairs/``) of a page kept before it; then it is **dropped** as a duplicate of the earliest
such kept page, and the pair's verified similarity is the reason.

Why this rule and not "one page per cluster": a cluster is a connected component, so two of its
pages may share nothing (a chain a ~ b ~ c); dropping c for a would give no reason that passes
the threshold. And the rule can be continued: an update decides only the new pages, against
every page kept so far, and nothing kept is ever dropped later (what an archive has handed on
stays). When segments arrive in crawl order, the continued decisions equal one pass over the
union. Pure Python and numpy, one component at a time (``neardup/collapse.py`` runs it per
cluster in Spark).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# crawl_time of a page without a (readable) date: after every dated page
NO_DATE = np.iinfo(np.int64).max
# A page's state before the pass: to decide, or fixed by an earlier run of the chain.
DECIDE, KEPT, DROPPED = 0, 1, 2


@dataclass(frozen=True)
class Decisions:
    """For the pages decided in one component: ``dropped`` (indices into its nodes), the node
    each duplicates (``keeper``) and the edge that says so (``edge``: an index into a, b)."""

    dropped: np.ndarray
    keeper: np.ndarray
    edge: np.ndarray


def decide(crawl_time: np.ndarray, rank: np.ndarray, a: np.ndarray, b: np.ndarray,
           state: np.ndarray | None = None) -> Decisions:
    """The keep rule over one component: nodes 0..n-1 with their crawl time and doc_id rank,
    pairs (a[i], b[i]) between them, ``state`` (DECIDE, KEPT or DROPPED per node; all DECIDE
    when None). Fixed pages keep their state: a KEPT one counts as kept before every page
    decided here, a DROPPED one is never kept."""
    n = crawl_time.shape[0]
    state = np.zeros(n, dtype=np.int8) if state is None else state.astype(np.int8, copy=True)
    order = np.lexsort((rank, crawl_time))  # crawl time, then doc_id
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    neighbours: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        neighbours[x].append((y, i))
        neighbours[y].append((x, i))
    kept = state == KEPT
    dropped, keeper, edge = [], [], []
    for v in order.tolist():
        if state[v] != DECIDE:
            continue
        best, best_edge = -1, -1
        for u, i in neighbours[v]:
            if kept[u] and (best < 0 or position[u] < position[best]):
                best, best_edge = u, i
        if best < 0:
            kept[v] = True
        else:
            dropped.append(v)
            keeper.append(best)
            edge.append(best_edge)
    as_array = lambda xs: np.asarray(xs, dtype=np.int64)  # noqa: E731
    return Decisions(as_array(dropped), as_array(keeper), as_array(edge))
