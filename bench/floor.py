"""The floor of the quilt job's dataflow on this machine: what no layout of the job can avoid,
each part done once with nothing else around it.

Issue 21 asked for 2,000 pages/s per core at 100,000 pages: 25 s of wall time on 2 cores for the
whole job. This runs, in one local session with the console's Spark defaults (``local[2]``),
each of these as its own Spark job, and prints each one's wall seconds and what it counted:

  session  the JVM started and the session built (``build_session``)
  warm     a job of 8 Python tasks that do nothing (the Python workers start)
  scan     the input's text column scanned in the JVM (the sum of its lengths)
  write    the input written as a Parquet table with a doc_key, in row groups as docs/ is
           (no shuffle, no checks); ``map`` and ``merge`` then read it, as the grams stage reads docs/
  map      the text sent to Python, each batch's distinct (gram, doc) pairs found by the kernel
           and cut into gram buckets (``bucketed.gram_rows``), the pairs counted: no shuffle
  merge    the same rows shuffled by gram bucket and each bucket merged and sorted
           (``bucketed.merge_gram_bucket``), the pairs counted: every gram's document frequency
           found, exactly; no table written

``--jobs write merge`` is the floor as one run pays it: a session, the document table written
once, the grams stage without its write. The job around it also checks the input, keeps one
record per doc_id, numbers the documents in doc_id order, writes the gram table, and finds patch
grams, patch fractions, sources and quilts. Run it beside the job, in turn, on the same corpus
(``bench/quilts_scale.py --only quilts --only floor`` does) and compare the two as a ratio:

    PYTHONPATH=src python bench/floor.py /tmp/quiltdetect-bench/c100000-s1.parquet --jobs write merge

``cpu_seconds`` is the process tree's (driver, JVM, Python daemon and workers), read from
/proc before the session stops. docs/performance.md, "The floor of the dataflow", has the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from quiltdetect.common.config import local_spark_defaults
from quiltdetect.common.session import build_session
from quiltdetect.documents.table import DOCS_WRITE_OPTIONS
from quiltdetect.quilts.arrays import bucket_count
from quiltdetect.quilts.gram_table import GRAM_BUCKETS_DDL, gram_rows, merge_gram_bucket

JOBS = ("warm", "scan", "write", "map", "merge")


def _tree_cpu() -> float:
    """CPU seconds (user + system, with reaped children's) of this process and every process
    under it so far: the JVM, the Python daemon and its workers, read from /proc (Linux)."""
    ticks = os.sysconf("SC_CLK_TCK")
    parent, cpu = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone since the listing
            continue
        parent[int(entry)] = int(fields[1])
        cpu[int(entry)] = sum(int(f) for f in fields[11:15]) / ticks  # utime stime cutime cstime
    me, total = os.getpid(), 0.0
    for pid, seconds in cpu.items():
        p = pid
        while p not in (me, 0, 1) and p in parent:
            p = parent[p]
        if p == me:
            total += seconds
    return total


def floor_jobs(spark: SparkSession, input_path: str, jobs: list[str], k: int, docs_path: str) -> dict:
    """Run ``jobs`` (of JOBS, each a Spark job of its own) on the Parquet table ``input_path``;
    their wall seconds and what each counted: characters of text (scan), (doc, gram) pairs
    before and after the merge (map, merge: equal, since a batch's pairs are already distinct)."""
    seconds: dict[str, float] = {}

    def timed(name: str, action) -> object:
        if name not in jobs:
            return None
        start = time.perf_counter()
        value = action()
        seconds[name] = round(time.perf_counter() - start, 2)
        return value

    timed("warm", lambda: spark.range(0, 8000, numPartitions=8).mapInArrow(lambda b: b, "id long")
          .agg(F.sum("id")).collect())
    table = spark.read.parquet(input_path)
    chars = timed("scan", lambda: table.agg(F.sum(F.length("text"))).collect()[0][0])
    keyed = table.select(F.monotonically_increasing_id().alias("doc_key"), *table.columns)
    if "write" in jobs:
        timed("write", lambda: keyed.write.options(**DOCS_WRITE_OPTIONS).mode("overwrite").parquet(docs_path))
        keyed = spark.read.parquet(docs_path)
    n = bucket_count(int(spark.conf.get("spark.sql.shuffle.partitions")))
    rows = keyed.select("doc_key", "text").mapInArrow(gram_rows(k, n, False), GRAM_BUCKETS_DDL)
    # (rows of bucket >= n hold each batch's document statistics, not pairs)
    pairs = timed("map", lambda: rows.where(F.col("bucket") < n).agg(F.sum("n")).collect()[0][0])
    merged = rows.groupBy("bucket").applyInArrow(merge_gram_bucket(n, False), GRAM_BUCKETS_DDL)
    merged_pairs = timed("merge", lambda: merged.where(F.col("bucket") < n).agg(F.sum("n")).collect()[0][0])
    return {"characters": chars, "pairs_mapped": pairs, "pairs_merged": merged_pairs, "buckets": n,
            "seconds": seconds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", help="a Parquet table with a text column (the harness's corpus)")
    ap.add_argument("-k", type=int, default=5)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--jobs", nargs="+", choices=JOBS, default=list(JOBS),
                    help="which jobs to run (default: all; they run in the order above); ``--jobs merge`` alone is the "
                         "grams stage's floor as one run pays it")
    ap.add_argument("--docs", default="/tmp/quiltdetect-floor-docs",
                    help="where ``write`` writes the table (replaced); ``map`` and ``merge`` then read it")
    args = ap.parse_args()

    t0 = time.perf_counter()
    spark = build_session("floor", {**local_spark_defaults(), "spark.master": args.master,
                                    "spark.log.level": "ERROR", "spark.ui.enabled": "false"}, local=True)
    session = time.perf_counter() - t0
    figures = floor_jobs(spark, args.input, args.jobs, args.k, args.docs)
    figures["seconds"] = {"session": round(session, 2), **figures["seconds"],
                          "total": round(time.perf_counter() - t0, 2)}
    figures["cpu_seconds"] = round(_tree_cpu(), 1)
    spark.stop()
    print(json.dumps({"input": args.input, **figures}, indent=1))


if __name__ == "__main__":
    main()
