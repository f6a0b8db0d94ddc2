"""doc_keys from doc_id ranges counted first (documents/keys.py) against the sort-then-count way
(``read.with_doc_keys`` after ``read.keep_one_per_id``): the same rows, keys and order."""

from __future__ import annotations

import bisect
import json
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from quiltdetect.documents.keys import (
    TREE_MAX_BOUNDS,
    doc_id_ranges,
    in_key_ranges,
    numbered_documents,
    partition_values,
    range_bounds,
    range_count,
    range_of,
    spark_partition_of,
    with_range,
)
from quiltdetect.documents.read import keep_one_per_id, with_doc_keys

COLUMNS = ["doc_id", "url", "text", "source", "offset"]


def test_partition_values_send_each_range_to_its_own_partition_as_spark_hashes(spark):
    """The values are computed with mmh3 in Python; Spark's hash partitioning must agree, or
    ranges would land in other partitions (and docs/ would not be in doc_id order), and so must
    its buckets (``pmod(hash)``): each part of neardup's packed bucket rows has a Spark bucket of
    its own."""
    sizes = (1, 2, 7, 32, 200)
    rows = [(n, r, v) for n in sizes for r, v in enumerate(partition_values(n))]
    frame = spark.createDataFrame(rows, "n int, r int, v int")
    found = frame.select("n", "r", F.pmod(F.hash("v"), F.col("n"))).collect()
    assert [(n, r) for n, r, _ in rows] == [(x[0], x[2]) for x in found]
    assert all(spark_partition_of(v, n) == r for n, r, v in rows)
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
    # the tree at its limit, and past it (a cluster's thousands of shuffle partitions) the search
    # one step per projection; a null, and quotes in values and bounds
    frame = spark.createDataFrame([(i,) for i in [*ids, None, 'q"\\\'']], "doc_id string")
    for n in (TREE_MAX_BOUNDS, TREE_MAX_BOUNDS + 1, 4_000):
        bounds = sorted([*sorted({f"d{rng.randrange(100_000):06d}" for _ in range(n * 2)})[:n - 1], 'q"'])
        want = [(i, len(bounds) if i is None else bisect.bisect_right(bounds, i)) for i in [*ids, None, 'q"\\\'']]
        assert [(r[0], r[1]) for r in with_range(frame, bounds, "r").collect()] == want, n
        assert with_range(frame, bounds, "r").schema["r"].dataType.simpleString() == "int"


def test_range_bounds_cut_a_sample_into_increasing_bounds():
    assert range_bounds([], 4) == [] and range_bounds(["a", "b"], 1) == []
    bounds = range_bounds([f"{i:04d}" for i in range(1000)], 4)
    assert bounds == ["0250", "0500", "0750"]
    assert range_bounds(["x"] * 50, 8) == []  # one distinct doc_id: one range
    assert range_count(0, 64 << 20, 2, 32) == 1 and range_count(10 << 30, 64 << 20, 2, 32) == 32
    assert range_count(300 << 20, 64 << 20, 2, 32) == 5 and range_count(5, 64, 2, 1) == 1
    # small corpora: one range until each core's range would hold MIN_RANGE_BYTES
    assert range_count(5 << 20, 64 << 20, 2, 32) == 1 and range_count(8 << 20, 64 << 20, 2, 32) == 2
    assert range_count(27 << 20, 64 << 20, 2, 32) == 2 and range_count(27 << 20, 64 << 20, 8, 32) == 6


def _corpus(rng: random.Random, n: int) -> list[tuple]:
    """Records with duplicate doc_ids: same or other input, source, offset or url, nulls, equal ties."""
    rows = []
    for i in range(n):
        doc_id = f"id-{rng.randrange(n // 2 + 1):06d}" if rng.random() < 0.5 else f"u{i}-{rng.random():.6f}"
        url = rng.choice([None, f"http://h{rng.randrange(5)}.example/{i}", "http://same.example/"])
        source = rng.choice(["a.parquet", "b.parquet", None])
        offset = rng.choice([None, rng.randrange(100)])
        rows.append((doc_id, url, f"text {i} {rng.random()}", source, offset, rng.choice([0, 0, 1])))
    return rows


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_numbered_documents_equal_the_sorted_then_counted_keys(spark, seed):
    """Several ranges (the advisory partition size made tiny), duplicates from two inputs and
    duplicates that tie on input, source, offset and url (the text breaks the tie): rows, keys
    and order as before."""
    rng = random.Random(seed)
    frame = spark.createDataFrame(_corpus(rng, 400), "doc_id string, url string, text string, source string, "
                                                     "offset long, input_rank int").repartition(3)
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
    strict = frame.select("doc_id", "url", "text", F.lit("file").alias("source"), F.lit(1).cast("long").alias("offset"),
                          F.lit(0).alias("input_rank"))
    assert not strict.schema["source"].nullable and not strict.schema["offset"].nullable
    table = numbered_documents(strict, doc_id_ranges(strict, 1, 1), [*COLUMNS, "doc_key"])
    assert all(f.nullable for f in table.schema.fields)
    table.write.parquet(str(tmp_path / "t"))  # as the optimised plan writes it
    assert all(f.nullable for f in pq.read_schema(next((tmp_path / "t").glob("*.parquet"))))
    assert [tuple(r) for r in table.collect()] == [("a", "u", "t", "file", 1, 0)]


def test_a_table_read_twice_gives_the_docs_table_kept_once(spark, tmp_path, monkeypatch):
    """Local Parquet inputs of REREAD_MIN_BYTES or more are scanned twice instead of kept in a
    checkpoint: the same docs/ and counts, with duplicates, skips and several ranges."""
    import quiltdetect.documents.table as table
    from quiltdetect.cli import main

    rng = random.Random(5)
    records = [{"id": None if i % 37 == 0 else f"id-{rng.randrange(120):04d}", "url": f"http://h{i % 7}.example/{i}",
                "text": None if i % 53 == 0 else f"words {i} {rng.random()}"} for i in range(300)]
    pq.write_table(pa.Table.from_pylist(records), tmp_path / "in.parquet")
    assert not table.rereadable([table.InputFile(str(tmp_path / "in.parquet"), "parquet")])
    outputs = {}
    advisory = spark.conf.get("spark.sql.adaptive.advisoryPartitionSizeInBytes")  # --set reaches this session
    try:
        for name, limit in (("kept", table.REREAD_MIN_BYTES), ("read-twice", 0)):
            monkeypatch.setattr(table, "REREAD_MIN_BYTES", limit)
            out = tmp_path / name
            assert main(["ingest", "--input", str(tmp_path / "in.parquet"), "--output", str(out), "-q",
                         "--set", "spark.sql.adaptive.advisoryPartitionSizeInBytes=1k"]) == 0
            stages = json.loads((out / "metrics.json").read_text())["stages"]
            outputs[name] = (pq.read_table(out / "docs").to_pylist(), stages["ingest"]["skipped"],
                             stages["ingest"]["documents"], len(list((out / "docs").glob("*.parquet"))))
    finally:
        spark.conf.set("spark.sql.adaptive.advisoryPartitionSizeInBytes", advisory)
    assert outputs["kept"] == outputs["read-twice"]
    assert outputs["kept"][1].keys() == {"duplicate_doc_id", "missing_id", "missing_text"} and outputs["kept"][3] >= 2


def test_no_documents_and_one_range(spark):
    empty = spark.createDataFrame([], "doc_id string, url string, text string, source string, offset long, "
                                      "input_rank int")
    ranges = doc_id_ranges(empty, 0, 0)
    assert ranges.bounds == [] and ranges.documents == 0
    assert numbered_documents(empty, ranges, [*COLUMNS, "doc_key"]).count() == 0


@pytest.mark.parametrize("first", [0, 1000])
def test_in_key_ranges_sort_dense_keys_into_range_partitions_without_a_sample(spark, first):
    """kept/'s order (neardup): rows of dense doc_keys, some left out, shuffled once into equal
    key ranges, range r in partition r, sorted within: the partitions read one after the other
    are in key order, and the same rows land in the same partitions however the input was
    partitioned."""
    n = 97
    keys = [first + k for k in range(n) if k % 7 != 3]  # the dropped pages left out
    rng = random.Random(first)
    shuffled = keys[:]
    rng.shuffle(shuffled)
    for parts in (1, 3, 8):
        frame = spark.createDataFrame([(k, f"t{k}") for k in shuffled], "doc_key long, text string").repartition(parts)
        got = in_key_ranges(frame, first, n, 4).rdd.glom().collect()
        assert [[r["doc_key"] for r in part] for part in got] == [
            [k for k in keys if (k - first) * 4 // n == r] for r in range(4)]
    one = in_key_ranges(spark.createDataFrame([(first, "a")], "doc_key long, text string"), first, 1, 4)
    assert one.rdd.getNumPartitions() == 1 and [r["doc_key"] for r in one.collect()] == [first]


def test_ranks_in_one_task_order_doc_ids_as_spark_sorts_them(spark):
    """An update ranks the pages it compares in one Arrow sort (``previous.ranks_of``): the
    ranks must be Spark's (``doc_ranks``) for doc_ids in any script, astral characters, case and
    prefixes included (both order UTF-8 bytes; Python's str order is code points, which agrees)."""
    from quiltdetect import previous

    rng = random.Random(11)
    alphabet = ["a", "B", "z", "0", "-", "é", "ß", "ي", "中", "ไ", "𝔸", "😀", "\u0301", "\uffff"]
    ids = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 6))) for _ in range(400)})
    rng.shuffle(ids)
    frame = spark.createDataFrame([(7 * k + 3, i) for k, i in enumerate(ids)], "doc_key long, doc_id string").repartition(3)
    one_task = {r["doc_key"]: r["rank"] for r in previous.ranks_of(frame, len(ids)).collect()}
    by_spark = {r["doc_key"]: r["rank"] for r in previous.ranks_of(frame, previous.ONE_TASK_RANKS + 1).collect()}
    by_bytes = {7 * k + 3: r for r, (k, _) in enumerate(sorted(enumerate(ids), key=lambda x: x[1].encode()))}
    assert one_task == by_spark == by_bytes
    assert previous.ranks_of(frame.limit(0), 0).collect() == []
