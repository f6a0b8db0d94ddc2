"""Greedy set cover of one target's candidate pairs (definitions §1 ``sources``).

Input is the candidate set C of one document d: pairs (source d', patch gram g). Repeat
until C is empty: pick the source that covers the most still-uncovered grams; ties go to the
source sharing the most patch grams with d in total, then to the smallest source id (ids are
assigned in doc_id string order, so this is definitions §1's "smallest doc_id"). Picking a source drops
every pair whose gram it covers.

The loop is incremental: each source's gain is kept in an array and only the pairs of newly
covered grams are subtracted. A small candidate set (most of them: up to ``SMALL_COVER`` pairs)
finds those pairs with one pass over its pairs per pick, cheaper than building an index by
gram; a larger one indexes its pairs by gram once, so its total work is O(|C|) plus
O(|sources|) per pick. Once the best gain is 1 (most picks of a real cover: every source left
holds at most one uncovered gram), the rest of the cover is decided at once: in tie-break order,
the first source holding each still-uncovered gram (``_unit_tail``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Cover:
    """Greedy cover of one document, in pick order.

    sources: int64 (s,) source ids; covered: int64 (s,) grams newly covered at each pick;
    shared: int64 (s,) patch grams each source shares with the document in total.
    """

    sources: np.ndarray
    covered: np.ndarray
    shared: np.ndarray

    def __len__(self) -> int:
        return int(self.sources.shape[0])


_EMPTY = Cover(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64))


def concatenated_ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(start, stop)`` for each pair, vectorised."""
    lengths = stops - starts
    total = int(lengths.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return offsets + np.arange(total, dtype=np.int64)


def _unit_tail(gain: np.ndarray, shared: np.ndarray, source_ptr: np.ndarray, pair_gram: np.ndarray,
               is_covered: np.ndarray) -> list[int]:
    """The remaining picks when no source covers more than one uncovered gram.

    Picking a source then covers its one gram and drops only the sources holding that same
    gram to gain 0, so the greedy order is the tie-break order (most shared, then smallest id)
    of the gain-1 sources, keeping the first source of each gram.
    """
    live = np.flatnonzero(gain > 0)
    starts, stops = source_ptr[live], source_ptr[live + 1]
    at = concatenated_ranges(starts, stops)
    owner = np.repeat(live, stops - starts)
    open_ = ~is_covered[pair_gram[at]]
    owner, gram = owner[open_], pair_gram[at][open_]  # one uncovered gram per live source
    order = np.lexsort((owner, -shared[owner]))
    owner, gram = owner[order], gram[order]
    _, first = np.unique(gram, return_index=True)
    return owner[np.sort(first)].tolist()


# Candidate sets up to this many distinct pairs find a pick's newly covered pairs by a pass over
# all their pairs (a few numpy calls); larger ones through an index by gram, built once.
SMALL_COVER = 8192


def dense_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct values ascending, each value's index among them): ``np.unique`` with
    ``return_inverse``, faster on the short arrays of one cover (a sort and a binary search)."""
    ids = np.sort(values)
    if ids.shape[0] > 1:
        ids = ids[np.concatenate(([True], ids[1:] != ids[:-1]))]
    return ids, np.searchsorted(ids, values)


def greedy_cover(grams: np.ndarray, sources: np.ndarray, labels: np.ndarray | None = None) -> Cover:
    """Greedy cover of the pairs ``(sources[i], grams[i])``; duplicate pairs count once.

    grams: int64 (p,) gram fingerprints; sources: int64 (p,) source ids, ordered like doc_ids.
    labels: int64 (p,), one per source id (pairs of a source carry the same label): the picks
    are reported by label (an update orders sources by rank and reports their keys).
    """
    if grams.shape != sources.shape:
        raise ValueError(f"grams and sources differ in shape: {grams.shape} vs {sources.shape}")
    if grams.shape[0] == 0:
        return _EMPTY
    source_ids, source_code = dense_codes(sources)
    gram_ids, gram_code = dense_codes(grams)
    n_sources, n_grams = source_ids.shape[0], gram_ids.shape[0]
    # One key per distinct pair, sorted by source then gram: a CSR index by source for free.
    pair_key = np.sort(source_code.astype(np.int64) * n_grams + gram_code)
    if pair_key.shape[0] > 1 and not np.all(pair_key[1:] != pair_key[:-1]):
        pair_key = pair_key[np.concatenate(([True], pair_key[1:] != pair_key[:-1]))]
    pair_source, pair_gram = np.divmod(pair_key, n_grams)
    shared = np.bincount(pair_source, minlength=n_sources).astype(np.int64)
    source_ptr = np.concatenate(([0], np.cumsum(shared)))
    indexed = pair_key.shape[0] > SMALL_COVER
    if indexed:  # the same pairs indexed by gram, to find every source that loses a gram when it is covered
        by_gram = np.argsort(pair_gram, kind="stable")
        source_by_gram = pair_source[by_gram]
        gram_ptr = np.concatenate(([0], np.cumsum(np.bincount(pair_gram, minlength=n_grams))))

    gain = shared.copy()
    is_covered = np.zeros(n_grams, dtype=bool)
    picked: list[int] = []
    picked_gain: list[int] = []
    while True:
        best_gain = gain.max()
        if best_gain <= 0:
            break
        if best_gain == 1:
            picked.extend(_unit_tail(gain, shared, source_ptr, pair_gram, is_covered))
            picked_gain.extend([1] * (len(picked) - len(picked_gain)))
            break
        candidates = np.flatnonzero(gain == best_gain)
        if candidates.shape[0] > 1:
            tie_shared = shared[candidates]
            candidates = candidates[tie_shared == tie_shared.max()]
        best = int(candidates[0])  # smallest id among the remaining ties
        new_grams = pair_gram[source_ptr[best] : source_ptr[best + 1]]
        new_grams = new_grams[~is_covered[new_grams]]
        is_covered[new_grams] = True
        if indexed:
            losers = source_by_gram[concatenated_ranges(gram_ptr[new_grams], gram_ptr[new_grams + 1])]
        else:
            newly = np.zeros(n_grams, dtype=bool)
            newly[new_grams] = True
            losers = pair_source[newly[pair_gram]]
        gain -= np.bincount(losers, minlength=n_sources)
        picked.append(best)
        picked_gain.append(int(best_gain))
    order = np.asarray(picked, dtype=np.int64)
    if labels is not None:  # each distinct source's label, from any of its pairs
        source_ids = np.empty(n_sources, dtype=np.int64)
        source_ids[source_code] = labels
    return Cover(
        sources=source_ids[order].astype(np.int64),
        covered=np.asarray(picked_gain, dtype=np.int64),
        shared=shared[order],
    )
