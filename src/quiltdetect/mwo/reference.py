"""Plain in-memory MWO by its definition: the oracle of the parity tests.

No filters, no global order: every pair of records is compared term by term.
"""

from __future__ import annotations

import math
from collections.abc import Mapping


def mwo_of(r: Mapping[str, float], s: Mapping[str, float]) -> float:
    """Σ over terms of min(weight in r, weight in s) (a missing term weighs 0), exact-rounded."""
    return math.fsum(min(w, s[x]) for x, w in r.items() if x in s)


def brute_force_pairs(records: Mapping[str, Mapping[str, float]], t: float) -> dict[tuple[str, str], float]:
    """{(doc_id_a, doc_id_b): MWO} for every pair a < b with MWO >= t that shares a term.

    Sharing a term (MWO > 0) matters only at t = 0, where the paper returns "the records
    which share at least a single word" rather than every pair.
    """
    ids = sorted(records)
    out: dict[tuple[str, str], float] = {}
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            value = mwo_of(records[a], records[b])
            if value >= t and value > 0:
                out[(a, b)] = value
    return out


def brute_force_query(record: Mapping[str, float], records: Mapping[str, Mapping[str, float]], t: float,
                      exclude: str | None = None) -> list[tuple[str, float]]:
    """[(doc_id, MWO)] of the records with MWO >= t against ``record``, ranked by MWO then doc_id."""
    hits = [(d, mwo_of(record, s)) for d, s in records.items() if d != exclude]
    return sorted(((d, v) for d, v in hits if v >= t and v > 0), key=lambda x: (-x[1], x[0]))
