"""The output folder's tables: counts observed while a table is written, and tables read back
without the Spark job that infers a Parquet schema (common/folder.py, common/fs.py)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from quiltdetect.common import fs
from quiltdetect.common.folder import OutputFolder

pytestmark = pytest.mark.spark


def _jobs_of(spark, action) -> tuple[object, int]:
    """(what ``action()`` returned, the Spark jobs it ran)."""
    group = f"probe-{uuid.uuid4().hex}"
    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    try:
        result = action()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
    return result, len(sc.statusTracker().getJobIdsForGroup(group))


def test_counts_observed_while_writing_equal_counting_the_table(spark, tmp_path):
    """Under a global sort (whose range sampling runs the rows once more), with a task that fails
    after some of its rows went through the observation and is retried (local[1,2]: one retry), and for an
    empty table: the observed counts are those of the table written."""
    out = OutputFolder(spark, str(tmp_path / "out"))
    flag = tmp_path / "failed-once"

    def flaky(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for i, batch in enumerate(batches):
            if i == 1 and not flag.exists():
                flag.write_text("x")
                raise RuntimeError("injected executor failure after one batch")
            yield batch

    frame = spark.range(0, 3000, numPartitions=3).select(
        (F.col("id") * 7919 % 3000).alias("k"), (F.col("id") % 5).alias("v"))
    previous = spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "100")
    try:
        table, counts = out.write_counted(
            frame.orderBy("k").mapInPandas(flaky, "k long, v long"), "sorted",
            {"rows": F.count(F.lit(1)), "v": F.sum("v"), "fours": F.sum((F.col("v") == 4).cast("long"))})
    finally:
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", previous)
    assert flag.exists()  # the failure happened, and the retry wrote the table
    truth = table.agg(F.count(F.lit(1)), F.sum("v"), F.sum((F.col("v") == 4).cast("long"))).first()
    assert (counts["rows"], counts["v"], counts["fours"]) == (3000, 6000, 600) == tuple(truth)

    empty, n = out.write_rows(frame.where(F.col("k") < 0).orderBy("k"), "empty")
    assert n == 0 and empty.count() == 0


def test_tables_are_read_back_without_inferring_their_schema(spark, tmp_path):
    """A table written by Spark is read with the schema in its first file's footer, as Spark
    would infer it (every field nullable, field metadata kept) but without a job; one that is
    not Spark's (no schema in its footer) is left to Spark."""
    out = OutputFolder(spark, str(tmp_path / "out"))
    frame = spark.range(5).select(
        F.col("id"), F.lit("x").alias("s"), F.array(F.lit(1)).alias("a"),
        F.struct(F.lit(1).alias("q")).alias("st"), F.create_map(F.lit("k"), F.array(F.lit(2))).alias("m"),
    ).withMetadata("s", {"comment": "kept"})
    out.write_table(frame, "t")
    inferred = spark.read.parquet(out.path("t")).schema
    assert fs.parquet_schema(spark, out.path("t")) == inferred
    table, jobs = _jobs_of(spark, lambda: out.read_table("t"))
    assert jobs == 0 and table.schema == inferred
    assert table.schema["s"].metadata == {"comment": "kept"}
    assert sorted(r.id for r in table.collect()) == [0, 1, 2, 3, 4]

    foreign = Path(out.path("foreign"))
    foreign.mkdir(parents=True)
    pq.write_table(pa.table({"n": pa.array([1, 2], pa.int32())}), foreign / "part-0.parquet")
    assert fs.parquet_schema(spark, str(foreign)) is None
    assert [r.n for r in out.read_table("foreign").orderBy("n").collect()] == [1, 2]
    assert fs.parquet_schema(spark, out.path("missing")) is None
