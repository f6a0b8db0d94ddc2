"""Spark-free parts of the content-reuse job: chunking, SHA-1, stop list, neighborhoods, mutations, config."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from quiltdetect.cli import main
from quiltdetect.common.config import ConfigError, merge_settings, read_yaml
from quiltdetect.reuse.chunks import (
    builtin_stop_chunks,
    chunk_texts,
    hash_document,
    read_stop_chunks,
    sha1,
    stop_hashes,
)
from quiltdetect.reuse.config import ReuseConfig
from quiltdetect.reuse.mutation import mutate_page, mutation_grid, run_experiment, site_scores
from quiltdetect.reuse.neighborhoods import neighborhood_prefixes, recursion_error

REPO = Path(__file__).resolve().parents[1]


def test_chunks_are_normalised_non_empty_lines_with_duplicates():
    text = "  Hello \t world \n\n\u00a0\nHello world\n<p>\n  \n\u200b\nＨｅｌｌｏ  wo\u00adrld"
    # one Unicode form (issue 61): invisible characters removed, compatibility forms folded, case kept
    assert chunk_texts(text) == ["Hello world", "Hello world", "<p>", "Hello world"]
    assert chunk_texts("") == [] and chunk_texts(None) == []


def test_hash_document_file_hash_and_stop_removal():
    stop = frozenset({sha1("Home")})
    h = hash_document("Home\nA  b\nHome\nc", stop)
    assert h.file_sha1 == hashlib.sha1(b"Home\nA b\nHome\nc").digest()
    assert h.chunks == [hashlib.sha1(b"A b").digest(), hashlib.sha1(b"c").digest()]
    assert h.positions.tolist() == [1, 3] and h.positions.dtype == np.int32
    assert h.lengths.tolist() == [3, 1]
    assert h.n_stop == 2
    # a one-chunk file hashes like its chunk, so the stop list applies to files as well
    assert hash_document(" Home ").file_sha1 == sha1("Home")
    assert hash_document("").file_sha1 == sha1("")  # the empty file


def test_stop_chunk_file_format_and_builtin_list():
    lines = ["# comment", "", "\\e", "\\u00a0", "\\u200b", "\\#hashtag", "back\\\\slash", "  Read   more  "]
    assert read_stop_chunks(lines) == ["", "", "", "#hashtag", "back\\slash", "Read more"]
    builtin = builtin_stop_chunks()
    assert "" in builtin and "Home" in builtin  # the paper's empty paragraph
    repeated = [c for c in set(builtin) if builtin.count(c) > 1]
    # \e, \u0020, \u00a0 and the invisible characters all normalise to "", and "…" to "..."
    assert sorted(repeated) == ["", "..."]
    assert sha1("") in stop_hashes()


def test_extra_stop_chunk_files(tmp_path):
    extra = tmp_path / "mine.txt"
    extra.write_text("Politics\n# a comment\nHistory\n", encoding="utf-8")
    hashes = stop_hashes([extra], builtin=False)
    assert set(hashes.values()) == {"Politics", "History"}
    assert sha1("Home") in stop_hashes([extra])


@pytest.mark.parametrize(
    ("url", "prefixes"),
    [
        ("http://arxiv.org/archive/physics/x.html?q=/a/b/", ["arxiv.org/archive/physics/", "arxiv.org/archive/", "arxiv.org/"]),
        ("http://arxiv.org/archive/physics/", ["arxiv.org/archive/physics/", "arxiv.org/archive/", "arxiv.org/"]),
        ("http://arxiv.org/archive//physics", ["arxiv.org/archive/", "arxiv.org/"]),
        ("http://arxiv.org", ["arxiv.org/"]),
    ],
)
def test_neighborhood_prefixes(url, prefixes):
    assert neighborhood_prefixes("arxiv.org", url) == prefixes


def test_no_host_no_neighborhood():
    assert neighborhood_prefixes("", "not a url") == []


def test_recursion_errors():
    assert recursion_error("http://h/a/b/a/b/a/b/a/b/", 3, 96) == "repeated_component"
    assert recursion_error("http://h/a/b/a/b/a/b/", 3, 96) is None
    assert recursion_error("http://h/2013/01/01/post.html", 3, 96) is None
    deep = "http://h/" + "".join(f"d{i}/" for i in range(96))
    assert recursion_error(deep, 3, 96) == "too_deep"  # depth 97 with the host
    assert recursion_error(deep, 3, 97) is None
    assert recursion_error(None, 3, 96) is None


def test_mutations():
    rng = np.random.default_rng(0)
    page = np.array([True, True, False, True])
    assert mutate_page(page, "add", 2, rng).tolist() == [True, True, False, True, False, False]
    deleted = mutate_page(page, "delete", 3, rng)
    assert len(deleted) == 1
    assert len(mutate_page(page, "delete", 9, rng)) == 0
    modified = mutate_page(page, "modify", 50, rng)
    assert len(modified) == 4 and not modified.any()  # 50 draws with replacement hit every chunk
    assert mutate_page(page, "modify", 0, rng) is page
    with pytest.raises(ValueError, match="unknown mutation"):
        mutate_page(page, "swap", 1, rng)


def test_site_scores_and_experiment():
    pages = [np.array([True, True]), np.array([True, False, False, False]), np.array([], dtype=bool)]
    s = site_scores(pages, 0.5)
    assert s["pages"] == 2 and s["page_badness"] == pytest.approx((1.0 + 0.25) / 2)
    assert s["pages_detected"] == 1 and s["chunk_ratio"] == pytest.approx(3 / 6)
    grid = mutation_grid(3.0, 2.0, 4)
    assert grid.tolist() == [0, 2, 3, 4, 6]
    res = run_experiment(pages[:2], "add", grid, 3, 7, 0.1)
    assert res["page_badness"].is_monotonic_decreasing
    assert res.loc[0, "page_badness"] == pytest.approx(0.625) and res.loc[0, "page_badness_se"] == 0
    again = run_experiment(pages[:2], "modify", grid, 3, 7, 0.1)
    assert again.equals(run_experiment(pages[:2], "modify", grid, 3, 7, 0.1))  # seeded


def test_conf_file_equals_defaults():
    assert merge_settings(ReuseConfig, read_yaml(REPO / "conf" / "reuse.yaml")) == ReuseConfig()


def test_config_validation_names_the_option():
    ok = ReuseConfig(inputs=["x"], output="y").validate()
    assert ok.mutations == ["add", "delete", "modify"]
    with pytest.raises(ConfigError, match="--chunk-threshold"):
        ReuseConfig(inputs=["x"], output="y", chunk_threshold=-1).validate()
    with pytest.raises(ConfigError, match="--badness-threshold"):
        ReuseConfig(inputs=["x"], output="y", badness_threshold=2).validate()
    with pytest.raises(ConfigError, match="--mutations"):
        ReuseConfig(inputs=["x"], output="y", mutations="add,swap").validate()
    with pytest.raises(ConfigError, match="--site"):
        ReuseConfig(inputs=["x"], output="y").validate(need_site=True)
    assert ReuseConfig(inputs=["x"], output="y", site="h.org").validate(need_site=True).site == "h.org/"


def test_bad_option_is_a_config_error_before_spark_starts(tmp_path, capsys):
    assert main(["reuse", "detect", "--input", str(tmp_path), "--output", str(tmp_path / "o"),
                 "--badness-threshold", "3"]) == 2
    assert "--badness-threshold" in capsys.readouterr().err
