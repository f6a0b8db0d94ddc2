"""The phrase job end to end: config file, command line, and a run on a crawl built from real
prose with planted slice-and-dice sites, which must head the monster list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from quiltdetect.cli import build_parser, main
from quiltdetect.common.config import ConfigError, merge_settings
from quiltdetect.phrases.cli import phrases_config
from quiltdetect.phrases.config import PhrasesConfig

REPO = Path(__file__).resolve().parents[1]
SPARK_SETTINGS = ["--master", "local[2,2]", "--set", "spark.sql.shuffle.partitions=4",
                  "--set", "spark.ui.showConsoleProgress=false", "--set", "spark.log.level=ERROR"]


@pytest.mark.parametrize(("override", "message"), [
    ({"k": 0}, "-k must be an integer >= 1"),
    ({"popular": 1}, "--popular must be an integer >= 2"),
    ({"near_duplicate_b": 7}, "--near-duplicate-b must be at most 6"),
    ({"server": "rack"}, "--foreign 'rack'"),
    ({"cover_sample": "some"}, "--cover-sample 'some'"),
    ({"server": "none", "cover_servers": ["1.2.3.4"]}, "--cover-server needs a --foreign"),
    ({"monster_max_std": -1}, "--monster-max-std must be a number >= 0"),
    ({"monster_order": "size"}, "--monster-order 'size'"),
    ({"collapse_near_duplicates": "yes"}, "--collapse-near-duplicates must be true or false"),
])
def test_bad_values_name_the_option(override, message):
    with pytest.raises(ConfigError, match=message):
        merge_settings(PhrasesConfig, override).validate(need_io=False)


def test_options_file_and_set_layer(tmp_path):
    conf = tmp_path / "c.yaml"
    conf.write_text("popular: 7\nshingles: 42\n")
    args = build_parser().parse_args(["phrases", "--config", str(conf), "--shingles", "21", "--no-collapse",
                                      "--cover-server", "10.0.0.1", "--cover-server", "10.0.0.2",
                                      "--set", "min_host_pages=3", "--input", "x", "--output", "y"])
    cfg = phrases_config(args)
    assert (cfg.popular, cfg.shingles, cfg.min_host_pages) == (7, 21, 3)
    assert cfg.collapse_near_duplicates is False and cfg.cover_servers == ["10.0.0.1", "10.0.0.2"]
    assert phrases_config(build_parser().parse_args(["phrases", "--input", "x", "--output", "y"])).k == 5


@pytest.fixture(scope="module")
def crawl(shared, tmp_path_factory):
    from testkit.corpus import load_prose
    from testkit.corpus.phrases import build, write_jsonl

    built = build(load_prose(shared), seed=3, normal_sites=5, normal_pages=(10, 14), monster_sites=2,
                  monster_pages=(12, 14), pool_size=25, network_sites=1, mirrors=4, template_pages=12)
    path = write_jsonl(built, tmp_path_factory.mktemp("crawl") / "crawl.jsonl")
    return path, built


# The phrase job's run on the crawl (its three tests) is in the extended tier, for the fast tier's
# time: the fast tier keeps its parity with the reference (test_phrases_parity.py).
@pytest.fixture(scope="module")
def crawl_run(spark, crawl, tmp_path_factory):
    path, built = crawl
    out = tmp_path_factory.mktemp("phrases") / "out"
    argv = ["phrases", "--input", str(path), "--output", str(out), "--cover-min-popular", "20", "--top", "5",
            *SPARK_SETTINGS]
    assert main(argv) == 0
    return out, built, argv


@pytest.mark.spark
def test_planted_slice_and_dice_sites_head_the_monster_list(spark, crawl_run, capsys):
    out, built, _ = crawl_run
    planted = built.truth["slice_and_dice"]
    monsters = [r.asDict() for r in spark.read.parquet(str(out / "monster_sites")).orderBy("rank").collect()]
    assert [m["host"] for m in monsters[: len(planted)]] == sorted(
        planted, key=lambda h: -next(m["monster_score"] for m in monsters if m["host"] == h))
    assert {m["host"] for m in monsters[: len(planted)]} == set(planted)
    hosts = {r["host"]: r.asDict() for r in spark.read.parquet(str(out / "host_stats")).collect()}
    template = hosts[built.truth["template"][0]]
    for host in planted:  # stitched pages need more donors than pages of boilerplate around little text
        assert hosts[host]["mean_popular"] > 40 and hosts[host]["std_popular"] < 15
        assert hosts[host]["mean_cover_size"] > template["mean_cover_size"]


@pytest.mark.spark
def test_outputs_tables_figures_and_metrics(spark, crawl_run):
    out, built, _ = crawl_run
    phrases = [r.asDict() for r in spark.read.parquet(str(out / "popular_phrases")).orderBy("rank").collect()]
    assert phrases and all(len(p["phrase"].split()) == 5 for p in phrases)
    assert [p["n_documents"] for p in phrases] == sorted((p["n_documents"] for p in phrases), reverse=True)
    assert any("rights reserved privacy policy" in p["phrase"] for p in phrases[:10])
    urls = {p.url for p in built.pages}
    assert all(p["example_url"] in urls and p["n_documents"] >= 5 for p in phrases)

    metrics = json.loads((out / "metrics.json").read_text())
    stages = metrics["stages"]
    assert stages["collapse"]["documents_dropped"] >= 4  # the mirrors are exact copies
    counts = spark.read.parquet(str(out / "doc_popular_counts"))
    assert counts.count() == stages["collapse"]["documents_kept"] == stages["popular"]["documents"]
    hist = {r["n_popular"]: r["n_documents"] for r in spark.read.parquet(str(out / "popular_per_document")).collect()}
    assert sum(hist.values()) == counts.count()
    occurrences = spark.read.parquet(str(out / "shingle_occurrences")).collect()
    assert sum(r["n_shingles"] for r in occurrences) == stages["popular"]["popular_shingles"]
    assert min(r["n_documents"] for r in occurrences) >= 5

    covers = [r.asDict(recursive=True) for r in spark.read.parquet(str(out / "covering_sets")).collect()]
    assert covers and all(c["n_popular"] >= 20 and c["uncovered"] == 0 for c in covers)
    assert all(sum(d["covered"] for d in c["donors"]) == c["n_popular"] for c in covers)
    one_ip = {h for h in built.truth["slice_and_dice"] if h.endswith(".de")}  # one operator, one IP
    for c in covers:
        for d in c["donors"]:
            donor_host = d["url"].split("/")[2]
            assert d["foreign"] == (donor_host != c["host"] and not (donor_host in one_ip and c["host"] in one_ip))
        assert c["foreign_contribution"] == sum(d["covered"] for d in c["donors"] if d["foreign"])
    assert any(c["foreign_contribution"] > 0 for c in covers)

    for name in ("fig1_shingle_occurrences", "fig2_popular_per_document", "fig3_covering_sets", "fig8_host_stats"):
        data = (out / f"{name}.png").read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, name
    conf = yaml.safe_load((out / "config.yaml").read_text())
    assert conf["cover_min_popular"] == 20 and conf["spark"]["spark.sql.shuffle.partitions"] == 4
    assert (out / "_COMPLETE").exists()


@pytest.mark.spark
def test_rerun_of_a_complete_output_does_nothing(crawl_run, capsys):
    out, _, argv = crawl_run
    before = (out / "popular_phrases").stat().st_mtime_ns
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "complete_already=1" in printed and "monster candidates" in printed
    assert (out / "popular_phrases").stat().st_mtime_ns == before


def test_popular_shingles_equal_counting_the_exploded_triples(spark):
    """The bucketed count (one sort per group bucket) keeps exactly the groups the row-by-row
    definition counts at >= popular, and its bucket rows add up to every group."""
    import random

    from pyspark.sql import functions as F

    from quiltdetect.phrases.popular import popular_shingles, shingle_counts, shingle_triples

    rng = random.Random(7)
    pool = [rng.getrandbits(64) - (1 << 63) for _ in range(30)] + [-(1 << 63), (1 << 63) - 1, 0, -1]
    rows = [(d, [rng.choice(pool) for _ in range(5)]) for d in range(300)]
    samples = spark.createDataFrame(rows, "doc_key long, shingles array<long>").repartition(3)
    triples = shingle_triples(samples)
    expected = {tuple(r) for r in shingle_counts(triples).where(F.col("n_documents") >= 3).collect()}
    counted = popular_shingles(samples, 5, 3).collect()
    assert {tuple(r) for r in counted if r["selector"] >= 0} == expected
    assert sum(r["n_documents"] for r in counted if r["selector"] < 0) == shingle_counts(triples).count()
