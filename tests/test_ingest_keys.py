"""doc_keys from doc_id ranges counted first (ingest/keys.py) against the sort-then-count way
(``read.with_doc_keys`` after ``read.keep_one_per_id``): the same rows, keys and order."""

from __future__ import annotations

import bisect
import random

import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from quiltdetect.ingest.keys import (
    doc_id_ranges,
    numbered_documents,
    partition_values,
    range_bounds,
    range_count,
    range_of,
    spark_partition_of,
)
from quiltdetect.ingest.read import keep_one_per_id, with_doc_keys

COLUMNS = ["doc_id", "url", "text", "source", "offset"]


def test_partition_values_send_each_range_to_its_own_partition_as_spark_hashes(spark):
    """The values are computed with mmh3 in Python; Spark's hash partitioning must agree, or
    ranges would land in other partitions (and docs/ would not be in doc_id order)."""
    for n in (1, 2, 7, 32, 200):
        values = partition_values(n)
        frame = spark.createDataFrame([(v,) for v in values], "v int")
        found = [r[0] for r in frame.select(F.pmod(F.hash("v"), F.lit(n))).collect()]
        assert found == list(range(n)) == [spark_partition_of(v, n) for v in values]
    # and a real repartition puts range r in partition r
    values = partition_values(5)
    frame = spark.createDataFrame([(r, values[r]) for r in range(5) for _ in range(3)], "r int, v int")
    parts = frame.repartition(5, "v").rdd.glom().collect()
    assert [sorted({row["r"] for row in part}) for part in parts] == [[0], [1], [2], [3], [4]]


def test_range_of_counts_the_bounds_at_or_below_each_doc_id(spark):
    rng = random.Random(7)
    ids = [f"d{rng.randrange(10_000):05d}" for _ in range(300)] + ["", "zzz", "d", "é-id", "D00001"]
    for n in (0, 1, 2, 5, 16):
        bounds = sorted(set(rng.sample(ids, n)))
        frame = spark.createDataFrame([(i,) for i in ids], "doc_id string")
        got = [(r[0], r[1]) for r in frame.select("doc_id", range_of(F.col("doc_id"), bounds)).collect()]
        assert got == [(i, bisect.bisect_right(bounds, i)) for i in ids]


def test_range_bounds_cut_a_sample_into_increasing_bounds():
    assert range_bounds([], 4) == [] and range_bounds(["a", "b"], 1) == []
    bounds = range_bounds([f"{i:04d}" for i in range(1000)], 4)
    assert bounds == ["0250", "0500", "0750"]
    assert range_bounds(["x"] * 50, 8) == []  # one distinct doc_id: one range
    assert range_count(0, 64 << 20, 2, 32) == 2 and range_count(10 << 30, 64 << 20, 2, 32) == 32
    assert range_count(300 << 20, 64 << 20, 2, 32) == 5 and range_count(5, 64, 2, 1) == 1


def _corpus(rng: random.Random, n: int) -> list[tuple]:
    """Records with duplicate doc_ids: same or other source, offset or url, nulls, equal ties."""
    rows = []
    for i in range(n):
        doc_id = f"id-{rng.randrange(n // 2 + 1):06d}" if rng.random() < 0.5 else f"u{i}-{rng.random():.6f}"
        url = rng.choice([None, f"http://h{rng.randrange(5)}.example/{i}", "http://same.example/"])
        source = rng.choice(["a.parquet", "b.parquet", None])
        offset = rng.choice([None, rng.randrange(100)])
        rows.append((doc_id, url, f"text {i} {rng.random()}", source, offset))
    return rows


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_numbered_documents_equal_the_sorted_then_counted_keys(spark, seed):
    """Several ranges (the advisory partition size made tiny), duplicates that tie on source,
    offset and url (the text breaks the tie): rows, keys and order as before."""
    rng = random.Random(seed)
    frame = spark.createDataFrame(_corpus(rng, 400), "doc_id string, url string, text string, source string, "
                                                     "offset long").repartition(3)
    before = spark.conf.get("spark.sql.adaptive.advisoryPartitionSizeInBytes")
    spark.conf.set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "2k")
    try:
        n_bytes = frame.agg(F.sum(F.octet_length("text"))).first()[0]
        ranges = doc_id_ranges(frame, frame.count(), n_bytes)
        assert len(ranges.bounds) >= 3
        new = numbered_documents(frame, ranges, [*COLUMNS, "doc_key"])
        old = with_doc_keys(keep_one_per_id(frame).where(F.col("dup_rank") == 1).select(*COLUMNS))
        plan = new._jdf.queryExecution().executedPlan().toString()
        assert plan.count("hashpartitioning(_p") == 1 and plan.count("Sort [") == 1, plan  # texts moved and sorted once
        got = [tuple(r) for r in new.collect()]  # in the written order
        want = [tuple(r) for r in old.select(*COLUMNS, "doc_key").orderBy("doc_key").collect()]
    finally:
        spark.conf.set("spark.sql.adaptive.advisoryPartitionSizeInBytes", before)
    assert got == want
    assert [r[-1] for r in got] == list(range(len(got))) == list(range(ranges.documents))
    assert new.schema["doc_key"].dataType.simpleString() == "bigint" and new.schema["doc_key"].nullable


def test_every_column_of_the_numbered_table_is_nullable(spark, tmp_path):
    """docs/ keeps one schema whatever the input (an update adds its files to a previous run's):
    a column that is not nullable where it comes from (a file's name) is nullable here."""
    frame = spark.createDataFrame([("a", "u", "t", "s", 1)], "doc_id string, url string, text string, "
                                                             "source string, offset long")
    strict = frame.select("doc_id", "url", "text", F.lit("file").alias("source"), F.lit(1).cast("long").alias("offset"))
    assert not strict.schema["source"].nullable and not strict.schema["offset"].nullable
    table = numbered_documents(strict, doc_id_ranges(strict, 1, 1), [*COLUMNS, "doc_key"])
    assert all(f.nullable for f in table.schema.fields)
    table.write.parquet(str(tmp_path / "t"))  # as the optimised plan writes it
    assert all(f.nullable for f in pq.read_schema(next((tmp_path / "t").glob("*.parquet"))))
    assert [tuple(r) for r in table.collect()] == [("a", "u", "t", "file", 1, 0)]


def test_no_documents_and_one_range(spark):
    empty = spark.createDataFrame([], "doc_id string, url string, text string, source string, offset long")
    ranges = doc_id_ranges(empty, 0, 0)
    assert ranges.bounds == [] and ranges.documents == 0
    assert numbered_documents(empty, ranges, [*COLUMNS, "doc_key"]).count() == 0
