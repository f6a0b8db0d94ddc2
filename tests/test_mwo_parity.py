"""Parity: the Spark self-join and the index query equal brute-force MWO over all pairs.

Random small corpora (near-copies with words added, dropped and repeated, unrelated pages,
exact copies, pages of stop words only, pages without URL) are written as one table; the
reference renders every page with the same rendering kernel and compares all pairs by the
definition of MWO, with no filters. No pair may be lost, none invented, and the MWO values
must be equal bit for bit.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from quiltdetect.common.config import merge_settings
from quiltdetect.mwo.config import MwoConfig
from quiltdetect.mwo.job import MwoJoinJob
from quiltdetect.mwo.join import block_pairs, block_rdd, prefix_blocks, survivors, verified_pairs
from quiltdetect.mwo.query import MwoIndex
from quiltdetect.mwo.reference import brute_force_pairs, brute_force_query
from quiltdetect.mwo.rendering import PageFields, render
from quiltdetect.mwo.tdw import canonical_records, weighted_records

pytestmark = pytest.mark.spark

WORDS = ["river", "stone", "garden", "pixel", "cloud", "harbor", "lantern", "meadow", "quartz", "violet",
         "tiger", "engine", "saddle", "copper", "orbit", "naïve", "東京", "x1"]
STOP = ["the", "and", "of", "to", "is"]


def random_corpora(seed: int, n_corpora: int) -> list[dict]:
    """Table rows (id, url, text) of many small corpora, each on its own vocabulary."""
    rng = random.Random(seed)
    rows: list[dict] = []
    for c in range(n_corpora):
        vocab = [f"c{c}{w}" for w in rng.sample(WORDS, rng.randint(3, len(WORDS)))]
        pages: list[list[str]] = []
        for i in range(rng.randint(2, 9)):
            kind = rng.choice(["random", "near", "near", "near", "copy", "stop"])
            if kind == "random" or not pages:
                tokens = [rng.choice(vocab + STOP) for _ in range(rng.randint(1, 30))]
            elif kind == "stop":
                tokens = [rng.choice(STOP) for _ in range(rng.randint(0, 4))]
            else:
                tokens = list(rng.choice(pages))
                if kind == "near":
                    for _ in range(rng.randint(1, 6)):
                        op = rng.random()
                        if op < 0.4 or not tokens:
                            tokens.insert(rng.randint(0, len(tokens)), rng.choice(vocab))
                        elif op < 0.7:
                            tokens.pop(rng.randrange(len(tokens)))
                        else:
                            tokens.append(rng.choice(tokens))
            pages.append(tokens)
            url = rng.choice([f"http://c{c}.example.org/p{i}", f"https://c{c}.example.org/", None])
            rows.append({"id": f"c{c}-{i}", "url": url, "text": " ".join(tokens)})
    return rows


def reference_records(rows: list[dict]) -> dict[str, dict[str, float]]:
    records = {}
    for r in rows:
        names, weights = render(PageFields(url=r["url"] or "", text=r["text"]))
        if names:
            records[r["id"]] = dict(zip(names, weights.tolist(), strict=True))
    return records


@pytest.fixture(scope="module")
def built(spark, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mwo")
    rows = random_corpora(seed=7, n_corpora=30)
    table = tmp / "corpus.jsonl"
    table.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    cfg = merge_settings(MwoConfig, {"inputs": [str(table)], "output": str(tmp / "out"), "t": 0.5,
                                     "index_threshold": 0.2, "overwrite": True, "top": 3}).validate()
    result = MwoJoinJob.run(spark, cfg)
    return rows, reference_records(rows), cfg, result


def test_join_equals_brute_force(spark, built):
    rows, records, cfg, result = built
    pairs = spark.read.parquet(str(Path(cfg.output) / "pairs")).collect()
    got = {(r["doc_id_a"], r["doc_id_b"]): r["mwo"] for r in pairs}
    truth = brute_force_pairs(records, 0.5)
    assert len(truth) > 20  # the corpora do contain near-duplicates
    assert got == truth
    stages = result.metrics.stages
    assert stages["verify"]["pairs"] == len(truth)
    assert stages["render"]["records"] == len(records)
    assert stages["render"]["documents_without_terms"] == len(rows) - len(records) > 0
    prefix = stages["prefix"]
    assert prefix["all_pairs"] > prefix["sharing_a_term"] >= prefix["candidates"] >= prefix["positional"] >= len(truth)
    assert result.report["top_pairs"][0]["mwo"] == max(truth.values())


@pytest.mark.parametrize(("t", "ell", "block_size"), [(0.35, 1, 7), (0.35, 4, 1000), (0.8, 8, 3), (1.0, 2, 50)])
def test_join_at_other_thresholds(spark, built, t, ell, block_size):
    """Lossless at every threshold, every l of the l-prefix filter (1 = the plain prefix) and
    every block size (3: nearly every pair meets across blocks, 1000: all in one block)."""
    _, records, cfg, _ = built
    canon = spark.read.parquet(str(Path(cfg.output) / "records"))
    blocks = prefix_blocks(canon, t, ell, block_size).cache()
    n_terms = spark.read.parquet(str(Path(cfg.output) / "terms")).count()
    met = block_pairs(spark, block_rdd(spark, blocks, blocks.count()).cache(), t, n_terms)
    pairs = verified_pairs(survivors(met), canon, t).collect()
    assert {(r["doc_id_a"], r["doc_id_b"]): r["mwo"] for r in pairs} == brute_force_pairs(records, t)


def test_canonical_records_the_same_broadcast_or_joined(spark, built):
    """The job canonicalises by broadcasting the global order; the shuffle join it falls back
    to for a vocabulary over ``broadcast_order_terms`` gives the same rows, and both sort each
    record by the term ids of terms/."""
    _, records, cfg, result = built
    out = Path(cfg.output)
    assert result.metrics.stages["canonicalise"]["lookup"] == "broadcast"
    order = spark.read.parquet(str(out / "terms"))
    weighted = weighted_records(spark.read.parquet(str(out / "docs")), cfg.min_weight_ratio)
    ids = {r["term"]: r["term_id"] for r in order.collect()}

    def rows(broadcast: bool) -> list[tuple]:
        canon = canonical_records(spark, weighted, order, broadcast=broadcast).collect()
        return sorted((r["doc_key"], r["doc_id"], r["url"], tuple(r["term_ids"]), tuple(r["weights"])) for r in canon)

    written = rows(True)
    assert written == rows(False)
    assert written == sorted((r["doc_key"], r["doc_id"], r["url"], tuple(r["term_ids"]), tuple(r["weights"]))
                             for r in spark.read.parquet(str(out / "records")).collect())
    for _, doc_id, _, term_ids, weights in written:
        assert sorted(term_ids) == list(term_ids)
        assert {i: w for i, w in zip(term_ids, weights, strict=True)} == {ids[t]: w for t, w in records[doc_id].items()}


def test_query_equals_brute_force_for_every_page(built):
    _, records, cfg, _ = built
    index = MwoIndex(cfg.output)
    assert sorted(index.doc_ids) == sorted(records)
    for t in (0.2, 0.5, 0.9):
        for doc_id in records:
            result = index.query(doc_id, t)
            got = [(m.doc_id, m.mwo) for m in result.matches]
            assert got == brute_force_query(records[doc_id], records, t, exclude=doc_id), (doc_id, t)
            assert result.after_prefix >= result.after_positional >= len(got)
    with pytest.raises(ValueError, match="index_threshold"):
        index.query(next(iter(records)), 0.1)


def test_query_of_an_html_file_renders_like_the_index(built, tmp_path):
    rows, records, cfg, _ = built
    index = MwoIndex(cfg.output)
    row = next(r for r in rows if r["id"] in records and r["url"])
    page = tmp_path / "page.html"
    page.write_text(f"<html><body><p>{row['text']}</p></body></html>", encoding="utf-8")
    result = index.query(str(page), 0.5, url=row["url"])
    # the file is the indexed page itself: it matches with MWO 1, and so does every exact copy
    assert (row["id"], 1.0) in [(m.doc_id, m.mwo) for m in result.matches]
    assert [(m.doc_id, m.mwo) for m in result.matches] == brute_force_query(records[row["id"]], records, 0.5)


def test_cli_query_prints_filter_sizes_and_ranked_matches(built, capsys):
    from quiltdetect.cli import main

    _, records, cfg, _ = built
    doc_id = max(records, key=lambda d: len(brute_force_query(records[d], records, 0.5, exclude=d)))
    truth = brute_force_query(records[doc_id], records, 0.5, exclude=doc_id)
    assert main(["mwo", "query", "--index", cfg.output, "--page", doc_id, "-t", "0.5", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert [(m["doc_id"], m["mwo"]) for m in answer["matches"]] == truth
    assert answer["after_prefix"] >= answer["after_positional"] >= len(truth) > 0
    assert main(["mwo", "query", "--index", cfg.output, "--page", doc_id, "--top", "1"]) == 0
    text = capsys.readouterr().out
    assert f"near-duplicates={len(truth)}" in text and f"{truth[0][1]:.4f}  {truth[0][0]}" in text
    assert main(["mwo", "query", "--index", cfg.output, "--page", "no-such-page"]) == 2
