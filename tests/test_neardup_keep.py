"""The keep rule (definitions §2, ``neardup/keep.py``) against its plain reference, without Spark.

Pages in crawl order; a page is kept unless it near-duplicates a page kept before it. Random
graphs with random dates and ties check ``decide`` against ``reference_kept``, with and without
pages fixed by an earlier run; small cases pin what the rule means.
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from quiltdetect.neardup.keep import DECIDE, DROPPED, KEPT, NO_DATE, decide
from quiltdetect.neardup.reference import RefDoc, crawl_key, reference_kept


def run_decide(docs: list[RefDoc], pairs: dict, kept_before=frozenset(), decided=frozenset()) -> dict:
    """``decide`` over the pages as one component (doc_id -> (keeper, pair values))."""
    ids = [d.doc_id for d in docs]
    at = {x: i for i, x in enumerate(ids)}
    keys = [crawl_key(d) for d in docs]
    dates = sorted({k[1] for k in keys if k[0] == 0})
    crawl_time = np.array([dates.index(k[1]) if k[0] == 0 else NO_DATE for k in keys], dtype=np.int64)
    rank = np.array([sorted(ids).index(x) for x in ids], dtype=np.int64)
    edges = list(pairs)
    a = np.array([at[x] for x, _ in edges], dtype=np.int64)
    b = np.array([at[y] for _, y in edges], dtype=np.int64)
    state = np.array([KEPT if x in kept_before else DROPPED if x in decided else DECIDE for x in ids], dtype=np.int8)
    got = decide(crawl_time, rank, a, b, state)
    return {ids[v]: (ids[u], pairs[edges[e]]) for v, u, e in zip(got.dropped, got.keeper, got.edge, strict=True)}


def pages(*specs: tuple[str, str | None]) -> list[RefDoc]:
    return [RefDoc(x, "", warc_date=when) for x, when in specs]


def test_a_chain_keeps_its_ends_when_they_are_no_near_duplicates_of_each_other():
    docs = pages(("a", "2020-01-01T00:00:00Z"), ("b", "2020-01-02T00:00:00Z"), ("c", "2020-01-03T00:00:00Z"))
    pairs = {("a", "b"): (0.7,), ("b", "c"): (0.8,)}
    assert run_decide(docs, pairs) == reference_kept(docs, pairs) == {"b": ("a", (0.7,))}


def test_the_earliest_crawl_is_kept_whatever_its_doc_id_and_undated_pages_come_last():
    docs = pages(("a", None), ("b", "2021-05-01T00:00:00Z"), ("c", "2019-05-01T00:00:00+02:00"))
    pairs = {("a", "b"): (1,), ("a", "c"): (2,), ("b", "c"): (3,)}
    assert run_decide(docs, pairs) == reference_kept(docs, pairs) == {"a": ("c", (2,)), "b": ("c", (3,))}


def test_a_dropped_page_points_at_the_earliest_kept_page_it_duplicates():
    docs = pages(("x", "2020-01-03T00:00:00Z"), ("y", "2020-01-01T00:00:00Z"), ("z", "2020-01-02T00:00:00Z"))
    pairs = {("x", "y"): (1,), ("x", "z"): (2,)}  # y and z are kept (no pair); x duplicates both
    assert run_decide(docs, pairs) == reference_kept(docs, pairs) == {"x": ("y", (1,))}


def test_pages_kept_by_an_earlier_run_stay_kept_and_take_a_late_older_copy():
    """A late segment holds an older copy of a kept page: the kept page stays kept."""
    docs = pages(("old", "2020-06-01T00:00:00Z"), ("late", "2019-01-01T00:00:00Z"))
    pairs = {("late", "old"): (0.9,)}
    assert run_decide(docs, pairs) == {"old": ("late", (0.9,))}  # one pass over both
    fixed = run_decide(docs, pairs, kept_before=frozenset({"old"}))
    assert fixed == reference_kept(docs, pairs, kept_before=frozenset({"old"})) == {"late": ("old", (0.9,))}


def test_a_page_dropped_by_an_earlier_run_keeps_no_one_out():
    docs = pages(("k", "2020-01-01T00:00:00Z"), ("d", "2020-01-02T00:00:00Z"), ("n", "2020-01-03T00:00:00Z"))
    pairs = {("d", "k"): (1,), ("d", "n"): (2,)}
    got = run_decide(docs, pairs, kept_before=frozenset({"k"}), decided=frozenset({"d"}))
    assert got == reference_kept(docs, pairs, kept_before=frozenset({"k"}), decided=frozenset({"d"})) == {}


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 10**9), n=st.integers(1, 30), fixed=st.booleans())
def test_decide_equals_the_reference_on_random_graphs(seed, n, fixed):
    rng = random.Random(seed)
    dates = [None, "garbled", *(f"2020-01-0{d}T00:00:00Z" for d in range(1, 5))]
    docs = pages(*((f"d{i:02d}", rng.choice(dates)) for i in rng.sample(range(100), n)))
    ids = sorted(d.doc_id for d in docs)
    pairs = {(x, y): (rng.random(),) for i, x in enumerate(ids) for y in ids[i + 1:] if rng.random() < 0.3}
    kept_before, decided = frozenset(), frozenset()
    if fixed:
        earlier = set(rng.sample(ids, rng.randint(0, n)))
        kept_before = frozenset(x for x in earlier if rng.random() < 0.5)
        decided = frozenset(earlier - kept_before)
    assert run_decide(docs, pairs, kept_before, decided) == reference_kept(docs, pairs, kept_before, decided)
