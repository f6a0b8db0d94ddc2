"""End to end through the console entry point: discover, detect with its output, mutate-eval;
and the Python API's ``detect_reuse`` on the same documents under other column names equals the
console's detection (one code path, ``api.run_on``)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from pyspark.sql import functions as F
from test_api import RENAMED, rows

from quiltdetect import detect_reuse
from quiltdetect.cli import main

pytestmark = pytest.mark.spark

SPARK = ["--set", "spark.master=local[2]", "--set", "spark.sql.shuffle.partitions=4"]


def _corpus(path) -> None:
    rows = []
    for i in range(12):  # one template paragraph on every page of twelve sites
        rows.append({"id": f"t{i:02d}", "url": f"http://site{i}.org/news/{i}.html",
                     "text": f"Subscribe to the Daily Planet newsletter\nStory {i} is unique prose.\nMore of {i}."})
    for i in range(4):  # a copying site: four pages of the same two paragraphs
        rows.append({"id": f"c{i}", "url": f"http://copies.net/a/{i}.html",
                     "text": "Copied paragraph one, long enough.\nCopied paragraph two, also long.\nHome"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_discover_detect_mutate_eval(spark, tmp_path, capsys):
    corpus = tmp_path / "c.jsonl"
    _corpus(corpus)
    disc = tmp_path / "disc"
    assert main(["reuse", "discover", "--input", str(corpus), "--output", str(disc), "--chunk-threshold", "3",
                 "--file-threshold", "3", *SPARK]) == 0
    out = capsys.readouterr().out
    assert "most frequent chunks" in out and "Subscribe to the Daily Planet newsletter" in out
    top = pd.read_csv(disc / "top_chunks.tsv", sep="\t")
    assert top.loc[0, "text"] == "Subscribe to the Daily Planet newsletter" and top.loc[0, "occurrences"] == 12
    assert "Home" not in set(top["text"])  # a shipped stop chunk
    assert (disc / "discovery_chunks.png").stat().st_size > 0
    assert "Subscribe to the Daily Planet newsletter" in (disc / "stop_chunk_candidates.txt").read_text()
    labeled = pd.read_parquet(disc / "labeled")
    assert sorted(labeled["occurrences"]) == [4, 4, 4, 12]  # 2 copied chunks, 1 copied file, the template

    det = tmp_path / "det"
    assert main(["reuse", "detect", "--input", str(corpus), "--labeled", str(disc), "--output", str(det),
                 "--badness-threshold", "0.5", *SPARK]) == 0
    hoods = pd.read_parquet(det / "neighborhoods").set_index("neighborhood")
    assert hoods.loc["copies.net/a/", "bad"] and hoods.loc["copies.net/a/", "badness"] == 1.0
    assert not hoods.loc["site3.org/news/", "bad"]  # 1 of 3 chunks is the template
    assert (det / "badness.png").stat().st_size > 0
    assert json.loads((det / "metrics.json").read_text())["stages"]["match"]["join"] == "broadcast"
    assert pd.read_parquet(det / "labeled").equals(labeled)  # the output holds the L it used
    docs = spark.read.parquet(str(det / "docs"))
    renamed = docs.select(F.col("doc_id").alias("record"), F.col("url").alias("address"), F.col("text").alias("body"))
    api = detect_reuse(renamed, output=str(tmp_path / "api"), labeled=str(disc), badness_threshold=0.5, **RENAMED)
    want = spark.read.parquet(str(det / "pages"))
    assert api.pages.columns == want.columns and rows(api.pages) == rows(want)
    assert rows(api.neighborhoods) == rows(spark.read.parquet(str(det / "neighborhoods")))
    assert rows(api.labeled) == rows(spark.read.parquet(str(disc / "labeled")))

    mut = tmp_path / "mut"
    assert main(["reuse", "mutate-eval", "--input", str(corpus), "--site", "copies.net", "--output", str(mut),
                 "--chunk-threshold", "3", "--runs", "2", "--mutations", "add,modify", *SPARK]) == 0
    res = pd.read_csv(mut / "mutate_eval.tsv", sep="\t")
    assert set(res["mutation"]) == {"add", "modify"} and set(res["labeled_set"]) == {"expert", "blind"}
    start = res[res["mutations"] == 0]
    assert (start["page_badness"] == 1.0).all()
    assert (mut / "mutate_add.png").exists() and not (mut / "mutate_delete.png").exists()

