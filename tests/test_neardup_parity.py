"""Parity: the Spark near-duplicate pairs and clusters equal the in-memory reference (definitions §2).

Corpora are random pages plus near-copies (a few words changed, inserted or dropped), exact
copies and empty pages, on hosts of a few sites, so every algorithm has pairs on both sides
of its thresholds. The Spark dataflow (buckets, exact verification, large-star/small-star)
must find exactly the all-pairs reference's pairs with the same similarities, and the
reference's union-find clusters, and the keep rule must drop exactly the reference's pages (in
crawl order: dated pages, some dates equal or unreadable, then doc_id) for the same kept pages.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import functions as F
from tiers import budgets, examples

from quiltdetect.common.config import merge_settings
from quiltdetect.documents.urls import host_of
from quiltdetect.neardup.clusters import ONE_TASK_EDGES, connected_components
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.neardup.decisions import crawl_order, dropped_pages, similarity_columns
from quiltdetect.neardup.fingerprints import fingerprint_arrays, lsh_arrays
from quiltdetect.neardup.pairs import (
    fingerprints,
    near_duplicate_pairs,
    pair_columns,
)
from quiltdetect.neardup.reference import (
    RefDoc,
    reference_clusters,
    reference_kept,
    reference_pairs,
)

pytestmark = pytest.mark.spark

URLS = ["http://www.a.example.com/1", "http://b.a.example.com/2", "http://other.org/x", "http://x.other.org/y",
        "http://www.third.net/z", ""]
IMAGES = ["http://www.a.example.com/img/logo.gif", "http://cdn.net/pixel.gif", "/rel/icon.png"]
DOC_SCHEMA = ("doc_key long, doc_id string, url string, host string, text string, images array<string>, "
              "warc_date string")
# Crawl dates as WARC records give them, a few equal, some unreadable (ordered after every date).
DATES = ["2009-01-05T10:00:00Z", "2009-01-05T10:00:00Z", "2013-06-30T23:59:59Z", "2013-07-01T00:00:00.5Z",
         "2020-02-29T12:00:00+01:00", "2024-11-26", None, "2014-02-294T05:02:21Z"]


def make_corpus(seed: int, n_docs: int) -> list[RefDoc]:
    """Random pages and near-copies of them, ids in shuffled order; words and ids tagged by seed."""
    rng = random.Random(seed)
    vocab = [f"s{seed}w{i}" for i in range(rng.choice([8, 40, 200]))]
    docs: list[RefDoc] = []
    ids = rng.sample([f"{seed}/d{i:03d}" for i in range(1000)], n_docs)
    for doc_id in ids:
        kind = rng.choice(["random", "near", "near", "near", "copy", "empty"])
        if kind == "empty" or not docs and kind != "random":
            words = [] if kind == "empty" else [rng.choice(vocab) for _ in range(rng.randint(1, 80))]
        elif kind == "random":
            words = [rng.choice(vocab) for _ in range(rng.randint(1, 80))]
        else:
            words = rng.choice(docs).text.split()
            if kind == "near":
                words = list(words)
                for _ in range(rng.randint(0, 4)):
                    op, at = rng.choice("sid"), rng.randint(0, max(0, len(words) - 1))
                    if op == "s" and words:
                        words[at] = rng.choice(vocab)
                    elif op == "i":
                        words.insert(at, rng.choice(vocab))
                    elif words:
                        del words[at]
        if words and rng.random() < 0.2:
            words.insert(rng.randint(0, len(words)), "http://www.a.example.com/some/path.html")
        images = tuple(rng.sample(IMAGES, rng.randint(0, 2)))
        docs.append(RefDoc(doc_id, " ".join(words), rng.choice(URLS), images))
    return docs


def doc_table(spark, docs: list[RefDoc]):
    rows = [(key, d.doc_id, d.url, host_of(d.url), d.text, list(d.images), d.warc_date)
            for key, d in enumerate(sorted(docs, key=lambda d: d.doc_id))]
    return spark.createDataFrame(rows, DOC_SCHEMA)


def dated(docs: list[RefDoc], seed: int) -> list[RefDoc]:
    """The pages with crawl dates drawn from DATES."""
    rng = random.Random(seed)
    return [RefDoc(d.doc_id, d.text, d.url, d.images, rng.choice(DATES)) for d in docs]


def spark_pairs_and_clusters(spark, docs, cfg, with_dropped: bool = False):
    table = doc_table(spark, docs)
    counts: dict = {}
    fps = fingerprints(table, cfg).persist()
    pairs = near_duplicate_pairs(fps, cfg, counts).persist()
    ids = {r["doc_key"]: r["doc_id"] for r in table.select("doc_key", "doc_id").collect()}
    got = {(ids[r["a"]], ids[r["b"]]): tuple(r[c] for c in pair_columns(cfg.algorithm)) for r in pairs.collect()}
    components = connected_components(pairs.select("a", "b"), checkpoint_every=2).persist()
    clusters = {ids[r["doc_key"]]: ids[r["cluster_key"]] for r in components.collect()}
    if with_dropped:
        names = [n for n, _ in similarity_columns(cfg.algorithm)]
        counts["dropped"] = {
            ids[r["doc_key"]]: (ids[r["keeper"]], tuple(r[n] for n in names))
            for r in dropped_pages(pairs, components, crawl_order(table), cfg.algorithm).collect()}
    components.unpersist()
    pairs.unpersist()
    fps.unpersist()
    return got, clusters, counts


PARAMETERS = [
    dict(algorithm="lsh"),  # the shipped default
    dict(algorithm="lsh", k=2, resemblance_threshold=0.5, containment_threshold=0.8, lsh_bands=6, lsh_rows=4),
    dict(algorithm="combined", k=2, b_threshold=2, combined_c_threshold=330),
    dict(algorithm="b", k=3, b_threshold=1, wrap=True),
    dict(algorithm="c", c_threshold=350),
    dict(algorithm="combined-sites", k=2, b_threshold=1, c_threshold=340, combined_c_threshold=300, wrap=True),
]


def _param_id(p: dict) -> str:
    return "-".join(f"{k}{v}" for k, v in p.items())


def reference_bucket_counts(docs: list[RefDoc], cfg: NearDupConfig) -> dict[str, int]:
    """The bucket counts by their definition: pages with an equal fingerprint at the same
    index share a bucket; buckets of 2+ pages are counted, those over the cap are not expanded."""
    from collections import Counter

    from quiltdetect.neardup.simhash import n_pieces

    kinds = ({"lsh": 2} if cfg.algorithm == "lsh" else
             {name: i for name, i, used in (("b", 1, cfg.algorithm in ("b", "combined", "combined-sites")),
                                            ("c", 3, cfg.algorithm in ("c", "combined-sites"))) if used})
    counts: dict[str, int] = {}
    for name, slot in kinds.items():
        sizes: Counter = Counter()
        for d in docs:
            row = (lsh_arrays(d.text, d.url, d.images, cfg.k, cfg.wrap, cfg.lsh_bands, cfg.lsh_rows)
                   if name == "lsh" else fingerprint_arrays(d.text, d.url, d.images, cfg.k, cfg.wrap,
                                                            n_pieces(cfg.c_threshold)))
            if row[slot] is not None:
                sizes.update((i, int(v)) for i, v in enumerate(row[slot]))
        shared = [n for n in sizes.values() if n > 1]
        over = [n for n in shared if n > cfg.bucket_cap]
        counts.update({f"{name}_buckets": len(shared), f"{name}_capped_buckets": len(over),
                       f"{name}_pairs_not_expanded": sum(n * (n - 1) // 2 - (n - 1) for n in over),
                       f"{name}_largest_bucket": max(shared, default=0)})
    return counts


@pytest.mark.parametrize("params", PARAMETERS, ids=_param_id)
def test_pairs_and_clusters_equal_reference(spark, params):
    """One Spark run over 8 random corpora (sizes 2-60) with disjoint vocabularies."""
    cfg = merge_settings(NearDupConfig, params).validate(need_io=False)
    rng = random.Random(repr(sorted(params.items())))
    docs = [d for seed in rng.sample(range(10**6), 8) for d in make_corpus(seed, rng.randint(2, 60))]
    docs = dated(docs, rng.randrange(10**6))
    got, clusters, counts = spark_pairs_and_clusters(spark, docs, cfg, with_dropped=True)
    expected = reference_pairs(docs, cfg)
    assert got == expected
    ref_clusters = reference_clusters(list(expected))
    assert clusters == {d: c for d, (c, _) in ref_clusters.items()}
    similarity = len(similarity_columns(cfg.algorithm))
    dropped = counts.pop("dropped")
    assert dropped == {x: (y, values[:similarity]) for x, (y, values) in reference_kept(docs, expected).items()}
    assert {k: v for k, v in counts.items() if k != "pairs"} == reference_bucket_counts(docs, cfg)
    assert counts["pairs"] == len(expected)


def test_capped_buckets_give_stars_that_keep_clusters(spark):
    """12 copies of one page and 3 of another, cap 4: no bucket expanded, clusters intact."""
    docs = [RefDoc(f"a{i:02d}", "the same boilerplate page text here and there") for i in range(12)]
    docs += [RefDoc(f"b{i}", "another page entirely with its own words") for i in range(3)]
    cfg = merge_settings(NearDupConfig, {"algorithm": "combined", "bucket_cap": 4}).validate(need_io=False)
    got, clusters, counts = spark_pairs_and_clusters(spark, docs, cfg)
    full = reference_pairs(docs, cfg)
    assert counts["b_capped_buckets"] == 6  # the six supershingle buckets of the a-pages
    assert counts["b_pairs_not_expanded"] == 6 * (66 - 11)
    assert {k: v for k, v in counts.items() if k != "pairs"} == reference_bucket_counts(docs, cfg)
    assert set(got) == {("a00", f"a{i:02d}") for i in range(1, 12)} | set(full).intersection(
        {("b0", "b1"), ("b0", "b2"), ("b1", "b2")})
    assert all(got[p] == full[p] for p in got)
    assert clusters == {d: c for d, (c, _) in reference_clusters(list(full)).items()}


def test_packed_bucket_rows_go_to_a_task_per_core_or_more_when_large(spark, monkeypatch):
    """``parts_in_tasks``: a task per core, more where a task would hold over ``TASK_BYTES`` (a
    persisted frame keeps a task's rows as one column batch), each part in one task."""
    from quiltdetect.neardup import pairs

    rows = spark.createDataFrame([(p, b"", b"", b"") for p in range(40)], pairs.BUCKET_ROWS_DDL)
    cores = spark.sparkContext.defaultParallelism
    assert pairs.parts_in_tasks(rows, 1000).rdd.getNumPartitions() == cores
    monkeypatch.setattr(pairs, "TASK_BYTES", 2000)
    spread = pairs.parts_in_tasks(rows, 1000)  # 20,000 bytes
    assert spread.rdd.getNumPartitions() == max(cores, 10)
    held = spread.rdd.glom().map(lambda part: sorted({r["part"] for r in part})).collect()
    assert sorted(p for part in held for p in part) == list(range(40))


@pytest.mark.parametrize("one_task_edges", [ONE_TASK_EDGES, 0], ids=["one-task", "rounds"])
@pytest.mark.parametrize("budget", budgets(3, 6))
def test_connected_components_equal_union_find(spark, budget, one_task_edges):
    """Random graphs with long paths (many rounds) and scattered ids, several per Spark run: in
    one task (the default for graphs this small) and by rounds of large-star / small-star."""
    examples(budget)(given(graphs=st.lists(st.tuples(st.integers(2, 80), st.integers(0, 10**6)), min_size=1,
                                           max_size=12))(check_components))(spark, one_task_edges)


def check_components(spark, one_task_edges, graphs):
    edges: list[tuple[int, int]] = []
    for g, (n_nodes, seed) in enumerate(graphs):
        rng = random.Random(seed)
        names = [g * 10**6 + x for x in rng.sample(range(10**6), n_nodes)]
        order = list(names)
        rng.shuffle(order)
        edges += [(order[i], order[i + 1]) for i in range(len(order) - 1) if rng.random() < 0.8]  # paths
        edges += [(rng.choice(names), rng.choice(names)) for _ in range(rng.randint(0, n_nodes // 3))]
    frame = spark.createDataFrame(edges or [(1, 1)], "a long, b long")
    got = {r["doc_key"]: r["cluster_key"]
           for r in connected_components(frame, one_task_edges=one_task_edges).collect()}
    expected = reference_clusters([(f"{a:09d}", f"{b:09d}") for a, b in edges if a != b])
    assert got == {int(x): int(c) for x, (c, _) in expected.items()}


def test_connected_components_fail_loudly_when_capped(spark):
    frame = spark.createDataFrame([(i, i + 1) for i in range(20)], "a long, b long").select(
        F.col("a"), F.col("b"))
    with pytest.raises(RuntimeError, match="did not converge"):
        connected_components(frame, max_rounds=2, one_task_edges=0)
