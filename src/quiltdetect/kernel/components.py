"""Connected components of a graph held in memory, in numpy: the one-task path of
``neardup.clusters.connected_components`` for graphs of up to a few million edges."""

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
