"""The quilt job end to end on the bundled sample, through the library entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from quiltdetect.common.config import merge_settings
from quiltdetect.quilts.config import QuiltConfig
from quiltdetect.quilts.job import QuiltsJob

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
TRUTH = REPO / "data" / "truth" / "synthetic-quilts.truth.jsonl"


@pytest.fixture(scope="module")
def sample_run(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("sample") / "run"
    cfg = merge_settings(QuiltConfig, {"inputs": [str(SAMPLE)], "output": str(out)}).validate()
    result = QuiltsJob.run(spark, cfg)
    return out, result, cfg


def test_outputs_exist_with_the_contract_schema(spark, sample_run):
    out, _, _ = sample_run
    quilts = spark.read.parquet(str(out / "quilts"))
    assert quilts.schema.simpleString() == (
        "struct<doc_id:string,url:string,n_grams:int,n_patch_grams:int,patchfrac:double,"
        "sources:array<struct<doc_id:string,url:string,covered:int,shared:int,attributed:boolean>>,"
        "attributed:boolean,n_attributed_sources:int>"
    )
    docs = spark.read.parquet(str(out / "docs"))
    for column in ("doc_key", "doc_id", "url", "host", "domain", "ip", "text", "title", "headings",
                   "anchors", "meta_keywords", "meta_description"):
        assert column in docs.columns
    assert docs.select("doc_id").distinct().count() == docs.count()
    config = yaml.safe_load((out / "config.yaml").read_text())
    assert (config["k"], config["m"], config["c"], config["theta"], config["foreign"]) == (5, 50, 4, 0.5, "none")


def test_metrics_count_every_stage_and_skip_reason(sample_run):
    out, result, _ = sample_run
    metrics = json.loads((out / "metrics.json").read_text())
    stages = metrics["stages"]
    assert list(stages) == ["ingest", "grams", "patch_grams", "patchfrac", "sources", "quilts"]
    ingest = stages["ingest"]
    # 400 synthetic pages + 16 CC pages + 29 ClueWeb pages + 1 WET page + the dolma pages
    assert ingest["files"] == 5
    assert ingest["documents"] >= 446
    assert ingest["skipped"]["request"] >= 400 and ingest["skipped"]["warcinfo"] >= 3
    assert ingest["records"] == ingest["documents"] + sum(ingest["skipped"].values())
    assert stages["patch_grams"]["patch_grams"] <= stages["patch_grams"]["distinct_grams"]
    assert all(s["seconds"] >= 0 for s in stages.values())
    top = result.report["top_quilts"]
    assert top and top[0]["patchfrac"] >= top[-1]["patchfrac"]


def test_every_planted_quilt_is_found_with_its_sources(spark, sample_run):
    out, _, _ = sample_run
    truth = [json.loads(line) for line in TRUTH.read_text().splitlines()]
    quilts = {r["doc_id"]: r.asDict(recursive=True) for r in spark.read.parquet(str(out / "quilts")).collect()}
    copies: dict[str, set[str]] = {}
    for t in truth:  # mirrors and near-copies stand in for their originals
        if t["kind"] in ("mirror", "near_copy"):
            for s in t["sources"]:
                copies.setdefault(s["doc_id"], {s["doc_id"]}).add(t["doc_id"])
                copies.setdefault(t["doc_id"], {t["doc_id"]}).add(s["doc_id"])
    planted = [t for t in truth if t["kind"] == "quilt"]
    assert len(planted) >= 8
    for t in planted:
        assert t["doc_id"] in quilts, t["url"]
        found = {s["doc_id"] for s in quilts[t["doc_id"]]["sources"]}
        for source in t["sources"]:
            assert copies.get(source["doc_id"], {source["doc_id"]}) & found, (t["url"], source["url"])
    for t in truth:
        if t["kind"] == "control":
            assert t["doc_id"] not in quilts, t["url"]


def test_summary_names_top_quilts_and_their_sources(sample_run):
    _, result, cfg = sample_run
    text = result.summary()
    top = result.report["top_quilts"][0]
    assert top["url"] in text and top["sources"][0]["url"] in text
    assert "ingest" in text and "quilts" in text


def test_foreign_domain_run_drops_same_domain_sources(spark, tmp_path):
    cfg = merge_settings(
        QuiltConfig, {"inputs": [str(SAMPLE / "synthetic-quilts.warc.gz")], "output": str(tmp_path / "f"),
                      "foreign": "domain", "top": 0}
    ).validate()
    QuiltsJob.run(spark, cfg)
    docs = {r["doc_id"]: r["domain"] for r in spark.read.parquet(str(tmp_path / "f" / "docs")).select("doc_id", "domain").collect()}
    quilts = spark.read.parquet(str(tmp_path / "f" / "quilts")).collect()
    assert quilts
    for q in quilts:
        assert all(docs[s["doc_id"]] != docs[q["doc_id"]] for s in q["sources"])


def test_attributed_quilts_are_marked(spark, sample_run):
    """The generator's attributed quilts link to their sources; the job must mark them."""
    out, _, _ = sample_run
    truth = [json.loads(line) for line in TRUTH.read_text().splitlines()]
    quilts = {r.doc_id: r for r in spark.read.parquet(str(out / "quilts")).collect()}
    linked = [t["doc_id"] for t in truth if t["kind"] == "quilt" and t.get("attributed")]
    assert linked
    for doc_id in linked:
        quilt = quilts[doc_id]
        assert quilt.attributed and quilt.n_attributed_sources == sum(s.attributed for s in quilt.sources) > 0



def test_find_quilts_on_renamed_columns_equals_the_command_line(spark, tmp_path, sample_run):
    """``from quiltdetect import find_quilts`` on a DataFrame whose columns are named otherwise
    gives the quilts ``quiltdetect quilts --id-col ...`` gives on the same table, and the ones of
    the sample read from its WARC files (bar attribution: a plain table has no links)."""
    from pyspark.sql import functions as F

    from quiltdetect import find_quilts
    from quiltdetect.cli import main

    out, _, _ = sample_run
    pages = (spark.read.parquet(str(out / "docs"))
             .select(F.col("doc_id").alias("warc_record_id"), F.col("url").alias("target_uri"),
                     F.col("text").alias("content"), F.col("ip").alias("server_ip"),
                     F.lit("not the id").alias("id")))  # a column named like a default, not used
    table = tmp_path / "pages.parquet"
    pages.write.parquet(str(table))
    cli_out = tmp_path / "cli"
    assert main(["quilts", "--input", str(table), "--output", str(cli_out), "--id-col", "warc_record_id",
                 "--url-col", "target_uri", "--text-col", "content", "--ip-col", "server_ip",
                 "--write-annotated", "--write-filtered"]) == 0

    quilts = find_quilts(spark.read.parquet(str(table)), output=str(tmp_path / "api"), id_col="warc_record_id",
                         url_col="target_uri", text_col="content", ip_col="server_ip")

    def rows(frame, attribution=True):
        got = sorted((r.asDict(recursive=True) for r in frame.collect()), key=lambda r: r["doc_id"])
        if not attribution:
            for r in got:
                r.pop("attributed"), r.pop("n_attributed_sources")
                for s in r["sources"]:
                    s.pop("attributed")
        return got

    from_cli = spark.read.parquet(str(cli_out / "quilts"))
    assert quilts.columns == from_cli.columns and rows(quilts) == rows(from_cli)
    assert len(rows(quilts)) > 0
    assert rows(quilts, attribution=False) == rows(spark.read.parquet(str(out / "quilts")), attribution=False)

    # annotated/ and filtered/ agree with quilts/: every document once, quilts flagged / removed.
    annotated = {r["doc_id"]: r for r in spark.read.parquet(str(cli_out / "annotated")).collect()}
    quilted = {r["doc_id"]: r["patchfrac"] for r in from_cli.collect()}
    assert len(annotated) == pages.count()
    assert {d for d, r in annotated.items() if r["is_quilt"]} == set(quilted)
    assert all(annotated[d]["patchfrac"] == f for d, f in quilted.items())
    filtered = {r["doc_id"] for r in spark.read.parquet(str(cli_out / "filtered")).collect()}
    assert filtered == set(annotated) - set(quilted)
