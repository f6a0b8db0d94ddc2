"""doc_keys with one shuffle of the texts: the document table sorted by doc_id and numbered.

A document's doc_key is the rank of its doc_id among the kept documents (``read.with_doc_keys``
says why). Numbering needs, for each sorted partition of the texts, how many documents come
before it. ``with_doc_keys`` finds that after the texts are sorted: it keeps the sorted rows
(a checkpoint written and read twice more) and counts every partition first. Here the counts
come before the texts move, from narrow rows (doc_id alone):

1. the doc_id ranges are fixed first: bounds drawn from a sample of doc_ids chosen by their
   hash, so the same documents give the same bounds however the input is partitioned;
2. the documents of each range are counted on the narrow rows (distinct doc_ids), which gives
   each range its first key;
3. the texts are shuffled once, range r to partition r exactly (``partition_values``: a value
   that Spark's hash partitioning sends to r), sorted by doc_id in their partition, one row
   kept per doc_id, numbered from the range's first key, and written.

The written table is the same as ``with_doc_keys``' (rows, keys, order), in part files cut at
other doc_ids.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import reduce

import mmh3
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, StringType

from quiltdetect.common.shuffle import size_in_bytes

# Spark's hash partitioning: partition = pmod(murmur3_x86_32(value, seed 42), partitions).
SPARK_HASH_SEED = 42
# Below this much text per core, splitting the documents over the cores costs more (a sample
# job, more and smaller files, more tasks downstream) than the one core saves.
MIN_RANGE_BYTES = 4 << 20
SAMPLE_PER_RANGE = 100  # doc_ids sampled per range (Spark's range exchange samples 100 per partition)
_HASH_SPACE = 1 << 24
# Which of a doc_id's records is kept (definitions §0): the one of the earliest input (the
# position of its --input; an update's previous documents come before every new input), then
# the smallest (source, offset, url, text), nulls last (``read.keep_one_per_id`` keeps the same one).
INPUT_RANK = "input_rank"
TIE_BREAK = (INPUT_RANK, "source", "offset", "url", "text")


def spark_partition_of(value: int, partitions: int) -> int:
    """The partition Spark's hash partitioning (``repartition(n, column)``) sends an int to."""
    return mmh3.hash(int(value).to_bytes(4, "little", signed=True), SPARK_HASH_SEED) % partitions


def partition_values(partitions: int) -> list[int]:
    """For each partition r, the smallest int >= 0 that Spark's hash partitioning sends to r:
    repartitioning on ``partition_values(n)[r]`` puts range r in partition r, in range order."""
    found: dict[int, int] = {}
    value = 0
    while len(found) < partitions:
        found.setdefault(spark_partition_of(value, partitions), value)
        value += 1
    return [found[r] for r in range(partitions)]


def range_count(total_bytes: int, partition_bytes: int, parallelism: int, max_ranges: int) -> int:
    """How many doc_id ranges (so part files of docs/) the texts go to: about ``partition_bytes``
    of text each (AQE's advisory partition size), spread over the cores (``parallelism``) while
    each range keeps at least ``MIN_RANGE_BYTES``, at most ``max_ranges`` (the shuffle
    partitions). A small corpus is one range: no sample of its doc_ids, one file."""
    wanted = math.ceil(total_bytes / max(1, partition_bytes))
    spread = min(parallelism, total_bytes // MIN_RANGE_BYTES)
    return max(1, min(max_ranges, max(wanted, spread)))


def range_bounds(sample: list[str], ranges: int) -> list[str]:
    """At most ``ranges - 1`` increasing doc_ids that cut the sorted ``sample`` into ``ranges``
    parts of about equal size (range r holds the doc_ids d with bounds[r-1] <= d < bounds[r])."""
    ids = sorted(set(sample))
    if ranges <= 1 or not ids:
        return []
    bounds = [ids[(len(ids) * r) // ranges] for r in range(1, ranges)]
    return sorted(set(b for b in bounds if b > ids[0]))


def range_of(doc_id: Column, bounds: list[str]) -> Column:
    """The index of the range holding ``doc_id`` (the number of bounds <= it), as a binary search
    of ``when`` expressions: log2(ranges) comparisons per row, in the JVM. The tree holds every
    bound, so it is for up to ``TREE_MAX_BOUNDS`` of them (``with_range`` takes any number)."""

    def search(lo: int, hi: int) -> Column:  # bounds[lo:hi]; the result lies in lo .. hi
        if lo == hi:
            return F.lit(lo)
        mid = (lo + hi) // 2
        return F.when(doc_id < F.lit(bounds[mid]), search(lo, mid)).otherwise(search(mid + 1, hi))

    return search(0, len(bounds)).cast("int")


# A when-tree of thousands of bounds is slow for the driver to build (a py4j call per node) and
# its generated code is past the JVM's 64 KB per method (Spark logs the failure and interprets
# it); 255 bounds (a tree 8 deep, ranges of 64 MB up to 16 GB of text) compile and build quickly.
TREE_MAX_BOUNDS = 255


def with_range(frame: DataFrame, bounds: list[str], name: str, column: str = "doc_id") -> DataFrame:
    """``frame`` with the int column ``name``: ``range_of(column, bounds)`` (nulls in the last
    range). Past ``TREE_MAX_BOUNDS`` (a cluster's thousands of ranges), the same binary search
    one step per projection: the bounds are one array literal (parsed from JSON, folded by
    the optimizer) and each step looks up one bound, so plan and code stay small."""
    if len(bounds) <= TREE_MAX_BOUNDS:
        return frame.withColumn(name, range_of(F.col(column), bounds))
    n, value = len(bounds), F.col(column)
    table = F.from_json(F.lit(json.dumps(bounds)), ArrayType(StringType()))
    frame = frame.withColumn(name, F.when(value.isNull(), F.lit(n)).otherwise(F.lit(0)))
    step = 1 << (n.bit_length() - 1)  # bounds[:r] are <= the value; try r + step, halving
    while step:
        at, probe = F.col(name), F.col(name) + F.lit(step)
        frame = frame.withColumn(name, F.when(probe > n, at).when(F.element_at(table, probe) <= value, probe)
                                 .otherwise(at))
        step >>= 1
    return frame


@dataclass(frozen=True)
class Ranges:
    """The doc_id ranges of a document table and each range's first doc_key."""

    bounds: list[str]
    first_keys: list[int]  # one per range, then the total: documents = first_keys[-1]

    @property
    def documents(self) -> int:
        return self.first_keys[-1]


def doc_id_ranges(candidates: DataFrame, n_candidates: int, total_bytes: int) -> Ranges:
    """The ranges of ``candidates`` (rows with a doc_id, duplicates included; only ``doc_id`` is
    read) and the kept documents in each: two small jobs over the doc_ids, a sample of at most
    about ``SAMPLE_PER_RANGE`` per range to the driver and one count per range."""
    spark = candidates.sparkSession
    n_ranges = range_count(total_bytes, size_in_bytes(spark.conf.get("spark.sql.adaptive.advisoryPartitionSizeInBytes", "64m")),
                           spark.sparkContext.defaultParallelism, int(spark.conf.get("spark.sql.shuffle.partitions")))
    ids = candidates.select("doc_id")
    bounds: list[str] = []
    if n_ranges > 1 and n_candidates > 0:
        rate = min(1.0, SAMPLE_PER_RANGE * n_ranges / n_candidates)
        picked = F.pmod(F.xxhash64("doc_id"), F.lit(_HASH_SPACE)) < F.lit(int(rate * _HASH_SPACE))
        sample = [r[0] for r in ids.where(picked).distinct().collect()]
        bounds = range_bounds(sample, n_ranges)
    counts = {int(r[0]): int(r[1]) for r in
              with_range(ids.distinct(), bounds, "r").groupBy("r").count().collect()}
    first, total = [], 0
    for r in range(len(bounds) + 1):
        first.append(total)
        total += counts.get(r, 0)
    return Ranges(bounds, [*first, total])


def numbered_documents(candidates: DataFrame, ranges: Ranges, columns: list[str], first_key: int = 0) -> DataFrame:
    """``columns`` of one row per doc_id of ``candidates`` (the one with the smallest
    ``TIE_BREAK``, as ``read.keep_one_per_id`` keeps) with its ``doc_key`` (from
    ``first_key`` on: an update keys its new documents after the previous ones), sorted by
    doc_id in part files of one range each: the texts are shuffled once."""
    n = len(ranges.bounds) + 1
    target = F.element_at(F.array(*[F.lit(v) for v in partition_values(n)]), F.col("_r") + 1)
    first = F.element_at(F.array(*[F.lit(first_key + k).cast("long") for k in ranges.first_keys[:-1]]), F.col("_r") + 1)
    moved = with_range(candidates, ranges.bounds, "_r").withColumn("_p", target).repartition(n, "_p")
    # Partitioned by _p (one range each), both windows run within a partition, and the second's
    # order (_p, doc_id) is a prefix of the first's: the texts are sorted once. The first keeps
    # the first row of each doc_id (a ``lag``, not ``row_number() == 1``, which Spark would turn
    # into a group limit that sorts the texts before the shuffle too).
    order = Window.partitionBy("_p").orderBy("doc_id", *[F.col(c).asc_nulls_last() for c in TIE_BREAK])
    previous = F.lag("doc_id").over(order)
    kept = moved.withColumn("_prev", previous)
    kept = kept.where(F.col("_prev").isNull() | (F.col("_prev") != F.col("doc_id")))
    number = Window.partitionBy("_p").orderBy("doc_id")
    # Every column written nullable (a ``when`` on the nullable doc_id, which the optimizer cannot
    # drop), whatever the input's columns are, and the key a long: docs/ has one schema, as an
    # update that adds its files to a previous run's needs.
    known = F.col("doc_id").isNotNull()
    numbered = kept.withColumn("doc_key", (first + F.row_number().over(number) - 1).cast("long"))
    return numbered.select(*[F.col(c) if c == "doc_id" else F.when(known, F.col(c)).alias(c) for c in columns])



def in_key_ranges(frame: DataFrame, first_key: int, n_keys: int, n_ranges: int) -> DataFrame:
    """``frame`` (rows of documents keyed ``first_key`` .. ``first_key + n_keys - 1``, some
    perhaps left out) sorted by doc_key in ``n_ranges`` partitions of about equal key ranges,
    range r (the keys k with ``(k - first_key) * n_ranges // n_keys == r``) in partition r:
    written, part files in doc_key order. Keys are dense, so the ranges need no sample
    (``orderBy``'s range partitioning reads every row once more to sample it), and no row is
    shuffled: each range is ``frame`` filtered to its keys in one task, the ranges side by side,
    sorted within. Meant for a table read from files in doc_key order (docs/, an update's
    segment), where each range's filter reads only the row groups its keys are in (their
    statistics tell): a range that shuffled its texts cost more than reading a few row groups
    twice."""
    n_ranges = max(1, min(n_ranges, n_keys))
    bounds = [first_key + -(-r * n_keys // n_ranges) for r in range(n_ranges + 1)]
    key = F.col("doc_key")
    parts = [frame.where((key >= F.lit(lo)) & (key < F.lit(hi)) if r < n_ranges - 1 else key >= F.lit(lo)).coalesce(1)
             for r, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True))]
    return reduce(DataFrame.union, parts).sortWithinPartitions("doc_key")
