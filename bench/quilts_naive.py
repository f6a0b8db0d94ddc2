"""A straightforward port of the paper's figure 5 to PySpark RDDs: the baseline of the benchmark.

Python string k-grams (words joined by spaces), no kernel, no fingerprints, no Arrow: each
step of figure 5 is one RDD transformation, as someone would first write it from the paper.

    hash grams per doc -> count documents per gram -> keep patch grams -> patch fraction per
    doc -> keep patchy docs -> (target, gram, source) for patchy targets -> group by target ->
    greedy cover -> keep those with >= c sources

Used by ``bench/quilts_scale.py`` (``--port-max``); run alone with

    PYTHONPATH=src python bench/quilts_naive.py /tmp/perf/c10000 --output /tmp/naive
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import time
from collections import Counter
from operator import add

WORD_RE = re.compile(r"[^\W_]+")


def kgram_set(text: str | None, k: int) -> set[str]:
    """The document's k-grams as strings, the way the paper writes them."""
    tokens = WORD_RE.findall((text or "").lower())
    return {" ".join(tokens[i : i + k]) for i in range(len(tokens) - k + 1)}


def greedy(pairs: list[tuple[str, str]]) -> list[tuple[str, int, int]]:
    """definitions §1's greedy cover with its tie-break, written plainly (source, covered, shared)."""
    remaining = set(pairs)
    shared = Counter(s for s, _ in remaining)
    picks = []
    while remaining:
        gain = Counter(s for s, _ in remaining)
        best = min(gain, key=lambda s: (-gain[s], -shared[s], s))
        covered = {g for s, g in remaining if s == best}
        picks.append((best, len(covered), shared[best]))
        remaining = {(s, g) for s, g in remaining if g not in covered}
    return picks


def naive_quilts(spark, inputs: str, output: str, k: int = 5, m: int = 50, c: int = 4, theta: float = 0.5) -> dict:
    """Run the port on a Parquet table of (id, url, text); write the quilts as JSON lines."""
    shutil.rmtree(output, ignore_errors=True)
    t0 = time.perf_counter()
    docs = spark.read.parquet(inputs).select("id", "text").rdd.map(lambda r: (r[0], r[1]))
    grams = docs.flatMap(lambda d: [(g, d[0]) for g in kgram_set(d[1], k)]).cache()  # (gram, doc)
    df = grams.map(lambda x: (x[0], 1)).reduceByKey(add)
    patch = df.filter(lambda x: 1 < x[1] <= m)
    patch_rows = grams.join(patch).map(lambda x: (x[0], x[1][0])).cache()  # (gram, doc) of patch grams
    n_grams = grams.map(lambda x: (x[1], 1)).reduceByKey(add)
    n_patch = patch_rows.map(lambda x: (x[1], 1)).reduceByKey(add)
    frac = n_grams.leftOuterJoin(n_patch).mapValues(lambda v: (v[0], v[1] or 0, (v[1] or 0) / v[0]))
    patchy = frac.filter(lambda x: x[1][2] >= theta and x[1][1] > 0).map(lambda x: (x[0], True))
    targets = patch_rows.map(lambda x: (x[1], x[0])).join(patchy).map(lambda x: (x[1][0], x[0]))  # (gram, target)
    triples = targets.join(patch_rows).filter(lambda x: x[1][0] != x[1][1]).map(
        lambda x: (x[1][0], (x[1][1], x[0]))
    )  # (target, (source, gram))
    covers = triples.groupByKey().mapValues(lambda ps: greedy(list(ps))).filter(lambda x: len(x[1]) >= c)
    quilts = covers.join(frac).map(
        lambda x: json.dumps({"doc_id": x[0], "patchfrac": x[1][1][2], "sources": x[1][0]})
    )
    quilts.saveAsTextFile(output)
    n = spark.read.text(output).count()
    return {"quilts": n, "seconds": round(time.perf_counter() - t0, 3)}


def main() -> None:
    from pyspark.sql import SparkSession

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("--output", required=True)
    args = ap.parse_args()
    spark = SparkSession.builder.master("local[2]").config("spark.driver.memory", "4g").getOrCreate()
    try:
        print(json.dumps(naive_quilts(spark, args.input, args.output)))
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
