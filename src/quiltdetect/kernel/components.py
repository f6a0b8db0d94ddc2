"""Connected components of a graph held in memory, in numpy: the one-task paths of
``neardup.clusters.connected_components`` and of an update's clusters
(``neardup.chain.clusters_in_one_task``) for graphs of up to a few million edges."""

from __future__ import annotations

import numpy as np


def components_of(v: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(every node of the graph with edges (v[i], u[i]), sorted; the smallest node of its
    component), as int64 arrays.

    Minimum-label propagation with pointer jumping: each node's label is the index of a node of
    its component no greater than its own; every round lowers both ends of each edge to the
    smaller of their labels and then follows labels to their roots. It stops when a round
    changes nothing: then both ends of every edge have one label, which is its own root, so a
    component has one label, the smallest of its nodes."""
    v, u = np.asarray(v, dtype=np.int64), np.asarray(u, dtype=np.int64)
    nodes = np.unique(np.concatenate([v, u]))
    a, b = np.searchsorted(nodes, v), np.searchsorted(nodes, u)
    label = np.arange(nodes.shape[0], dtype=np.int64)
    while True:
        before = label.copy()
        lowest = np.minimum(label[a], label[b])
        np.minimum.at(label, a, lowest)
        np.minimum.at(label, b, lowest)
        while True:  # pointer jumping: every label to its root
            jumped = label[label]
            if np.array_equal(jumped, label):
                break
            label = jumped
        if np.array_equal(label, before):
            return nodes, nodes[label]


def _lookup(sorted_from: np.ndarray, to: np.ndarray, wanted: np.ndarray, what: str) -> np.ndarray:
    """``to`` at the positions of ``wanted`` in ``sorted_from`` (each must be there)."""
    at = np.searchsorted(sorted_from, wanted)
    if wanted.shape[0] and (at.max() >= sorted_from.shape[0] or not np.array_equal(sorted_from[at], wanted)):
        raise ValueError(f"a {what} without a rank")
    return to[at]


def updated_components(keys: np.ndarray, ranks: np.ndarray, clustered: np.ndarray, cluster_of: np.ndarray,
                       pair_a: np.ndarray, pair_b: np.ndarray, gone_a: np.ndarray, gone_b: np.ndarray,
                       first_new: int) -> tuple[np.ndarray, np.ndarray, int]:
    """An update's clusters, on doc_keys: (every clustered page, the page of its component with the
    smallest rank, how many previous clusters were rebuilt).

    The graph is the previous clusters as stars (``clustered`` pages with their ``cluster_of``
    page), except those that hold an end of a withdrawn pair (``gone_a``, ``gone_b``): these are
    rebuilt from the pairs that start in them; and the pairs (``pair_a``, ``pair_b``) with a new
    page (doc_key >= ``first_new``). Components are found on the pages' ranks (``keys`` ->
    ``ranks``: doc_id order), so a component's smallest rank names it (``components_of``)."""
    keys, ranks = np.asarray(keys, dtype=np.int64), np.asarray(ranks, dtype=np.int64)
    by_key = np.argsort(keys)
    keys_sorted, ranks_by_key = keys[by_key], ranks[by_key]

    def rank_of(k: np.ndarray) -> np.ndarray:
        return _lookup(keys_sorted, ranks_by_key, np.asarray(k, dtype=np.int64), "page")

    rank, cluster_rank = rank_of(clustered), rank_of(cluster_of)
    ends = rank_of(np.concatenate([np.asarray(gone_a, dtype=np.int64), np.asarray(gone_b, dtype=np.int64)]))
    broken = np.unique(cluster_rank[np.isin(rank, ends)])
    in_broken = np.isin(cluster_rank, broken)
    star = ~in_broken & (rank != cluster_rank)
    pair_a, pair_b = np.asarray(pair_a, dtype=np.int64), np.asarray(pair_b, dtype=np.int64)
    a_rank, b_rank = rank_of(pair_a), rank_of(pair_b)
    taken = np.isin(a_rank, rank[in_broken]) | (pair_a >= first_new) | (pair_b >= first_new)
    v = np.concatenate([rank[star], a_rank[taken]])
    u = np.concatenate([cluster_rank[star], b_rank[taken]])
    if v.shape[0] == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64), int(broken.shape[0])
    nodes, centres = components_of(np.maximum(v, u), np.minimum(v, u))
    by_rank = np.argsort(ranks)
    ranks_sorted, keys_by_rank = ranks[by_rank], keys[by_rank]
    return (_lookup(ranks_sorted, keys_by_rank, nodes, "rank"), _lookup(ranks_sorted, keys_by_rank, centres, "rank"),
            int(broken.shape[0]))
