"""Parity: the Spark content-reuse job equals the plain in-memory reference of definitions §4.

Random small corpora (hypothesis) with shared and unique paragraphs, stop chunks, whitespace
variants, empty lines, exact duplicate pages, nested URL paths and recursion-error URLs go
through ``DetectJob`` (blind: discovery runs first) and through ``reference``; discovery,
recursion errors, contains per page and badness per neighborhood must agree.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tiers import budgets, examples

from quiltdetect.common.config import merge_settings
from quiltdetect.documents.urls import host_of
from quiltdetect.reuse.chunks import builtin_stop_chunks
from quiltdetect.reuse.config import ReuseConfig
from quiltdetect.reuse.job import DetectJob
from quiltdetect.reuse.reference import (
    RefDoc,
    ref_clean,
    ref_corpus_labeled,
    ref_detect,
    ref_discover,
)

pytestmark = pytest.mark.spark

PARAGRAPHS = [
    "Home", "Read more", "  Read   more ", "\u200b", "Copyright 2024 Example Inc.", "Buy cheap watches now",
    "The quick brown fox jumps over the lazy dog near the river bank.", "naïve café straße 東京",
    "A long labeled paragraph " * 5, "Another paragraph of shared prose, forty two words?", "x", "|",
]
HOSTS = ["a.example.com", "b.example.org", "copies.net"]
PATHS = ["/", "/index.html", "/wiki/A", "/wiki/B/", "/wiki/B/c.html", "/x/y/z/p", "/a/a/a/a/p.html",
         "/d/" + "e/" * 6, "/q?x=/a/b/"]


@st.composite
def corpus(draw) -> list[dict]:
    n = draw(st.integers(3, 60))
    rows = []
    for i in range(n):
        if rows and draw(st.integers(0, 5)) == 0:  # an exact copy of an earlier page elsewhere
            text = draw(st.sampled_from(rows))["text"]
        else:
            parts = draw(st.lists(st.one_of(st.sampled_from(PARAGRAPHS), st.just(""),
                                            st.text("ab \t", min_size=1, max_size=4)), max_size=8))
            text = "\n".join(parts)
        url = f"http://{draw(st.sampled_from(HOSTS))}{draw(st.sampled_from(PATHS))}"
        rows.append({"id": f"d{i:03d}", "url": url if draw(st.integers(0, 12)) else "no url", "text": text})
    return rows


def _sha(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def _run(spark, tmp: Path, rows: list[dict], **params) -> dict:
    table = tmp / "corpus.jsonl"
    table.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    cfg = merge_settings(ReuseConfig, {"inputs": [str(table)], "output": str(tmp / "out"), "overwrite": True,
                                       "top": 0, "top_objects": 5, **params})
    result = DetectJob.run(spark, cfg)
    read = lambda name: [r.asDict() for r in spark.read.parquet(str(tmp / "out" / name)).collect()]  # noqa: E731
    out = {name: read(name) for name in ("pages", "neighborhoods", "recursion_errors", "labeled")}
    if (tmp / "out" / "frequency").exists():
        out["frequency"] = read("frequency")
    out["report"] = result.report
    out["metrics"] = result.metrics.stages
    return out


def _ref_docs(rows: list[dict]) -> list[RefDoc]:
    return [RefDoc(r["id"], r["url"], host_of(r["url"]), r["text"]) for r in rows]


def _compare_detection(got: dict, ref: dict) -> None:
    assert got["report"]["page_threshold"] == pytest.approx(ref["page_threshold"], abs=1e-12)
    assert got["report"]["badness_threshold"] == pytest.approx(ref["badness_threshold"], abs=1e-12)
    pages = {p["doc_id"]: p for p in got["pages"]}
    assert set(pages) == set(ref["pages"])
    for doc_id, want in ref["pages"].items():
        have = pages[doc_id]
        for key in ("n_chunks", "n_labeled_chunks", "contains", "file_match"):
            assert have[key] == want[key], (doc_id, key)
        if want["contains"] is not None and abs(want["contains"] - ref["page_threshold"]) > 1e-9:
            assert have["partial_target"] == want["partial_target"], doc_id
    hoods = {h["neighborhood"]: h for h in got["neighborhoods"]}
    assert set(hoods) == set(ref["neighborhoods"])
    for prefix, want in ref["neighborhoods"].items():
        have = hoods[prefix]
        assert (have["n_pages"], have["n_chunks"], have["bad_chunks"]) == (want["n_pages"], want["n_chunks"], want["bad_chunks"])
        assert have["badness"] == pytest.approx(want["badness"], abs=1e-12)
        assert have["depth"] == prefix.count("/")
        if abs(want["badness"] - ref["badness_threshold"]) > 1e-9:
            assert have["bad"] == want["bad"], prefix


@pytest.mark.parametrize("budget", budgets(1, 3))
def test_blind_discovery_and_detection_equal_reference(spark, tmp_path_factory, budget):
    examples(budget)(given(rows=corpus())(check_blind))(spark, tmp_path_factory)


def check_blind(spark, tmp_path_factory, rows):
    tmp = tmp_path_factory.mktemp("reuse_parity")
    params = {"chunk_threshold": 1, "file_threshold": 1, "max_component_repeats": 2, "max_prefix_depth": 6,
              "broadcast_labeled_rows": 0}  # the shuffle join; the informed test below broadcasts
    got = _run(spark, tmp, rows, **params)
    assert got["metrics"]["match"]["join"] == "shuffle"
    stop = set(builtin_stop_chunks())
    kept, removed = ref_clean(_ref_docs(rows), 2, 6)
    assert {r["doc_id"]: r["reason"] for r in got["recursion_errors"]} == removed
    disc = ref_discover(kept, stop, 1, 1)
    labeled = {(r["kind"], r["sha1"]): r["occurrences"] for r in got["labeled"]}
    want = {("chunk", h): n for h, n in disc["labeled_chunks"].items()}
    want.update({("file", h): n for h, n in disc["labeled_files"].items()})
    assert labeled == want
    freq = {(r["kind"], r["occurrences"]): r["n_objects"] for r in got["frequency"]}
    want_freq = {("chunk", k): v for k, v in disc["chunk_frequency"].items()}
    want_freq.update({("file", k): v for k, v in disc["file_frequency"].items()})
    assert freq == want_freq
    ref = ref_detect(kept, stop, set(disc["labeled_chunks"]), set(disc["labeled_files"]), None, None)
    _compare_detection(got, ref)


def test_informed_detection_equals_reference(spark, tmp_path):
    source = [{"id": f"w{i}", "url": f"http://wiki.example/wiki/{i}",
               "text": f"Article {i} has a long first paragraph about topic number {i} that is well over forty chars.\n"
                       f"short {i}\nHome\nSecond paragraph of article {i}, also long enough to be labeled here."}
              for i in range(6)]
    (tmp_path / "wiki.jsonl").write_text("".join(json.dumps(r) + "\n" for r in source))
    crawl = [
        {"id": "c1", "url": "http://copies.net/w/1.html", "text": source[1]["text"] + "\nBuy watches"},
        {"id": "c2", "url": "http://copies.net/w/2.html", "text": source[2]["text"]},
        {"id": "c3", "url": "http://copies.net/about", "text": "About this site\nHome"},
        {"id": "o1", "url": "http://other.org/p/1", "text": "Independent text one\nshort 1"},
        {"id": "o2", "url": "http://other.org/p/2", "text": "Independent text two\nHome"},
        {"id": "o3", "url": "http://third.org/", "text": "Quoting: " + source[3]["text"].split("\n")[0]},
    ] + [{"id": f"s{i}", "url": f"http://site{i}.org/", "text": f"Site {i} own words\nHome"} for i in range(6)]
    params = {"labeled": str(tmp_path / "wiki.jsonl"), "min_chunk_chars": 40}
    got = _run(spark, tmp_path, crawl, **params)
    stop = set(builtin_stop_chunks())
    l_chunks, l_files = ref_corpus_labeled(_ref_docs(source), stop, 40)
    assert {r["sha1"] for r in got["labeled"] if r["kind"] == "chunk"} == l_chunks
    assert {r["sha1"] for r in got["labeled"] if r["kind"] == "file"} == l_files
    assert _sha("short 1") not in l_chunks  # shorter than min_chunk_chars
    ref = ref_detect(_ref_docs(crawl), stop, l_chunks, l_files, None, None)
    _compare_detection(got, ref)
    pages = {p["doc_id"]: p for p in got["pages"]}
    assert pages["c2"]["file_match"] and pages["c2"]["contains"] == pytest.approx(2 / 3)
    assert pages["c1"]["contains"] == pytest.approx(2 / 4)  # 2 labeled of 4 non-stop chunks
    hoods = {h["neighborhood"]: h for h in got["neighborhoods"]}
    assert hoods["copies.net/w/"]["bad"] and not hoods["other.org/"]["bad"]
    members = spark.read.parquet(str(tmp_path / "out" / "bad_neighborhood_pages")).collect()
    assert sorted(r["doc_id"] for r in members if r["neighborhood"] == "copies.net/w/") == ["c1", "c2"]
    assert {r["neighborhood"] for r in members} == {h for h, v in hoods.items() if v["bad"]}
