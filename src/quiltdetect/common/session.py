"""Building the Spark session for the console command (spark-submit builds its own)."""

from __future__ import annotations

import os
import sys
from typing import Any

from pyspark.sql import SparkSession

# Settings every quiltdetect session gets unless the user or spark-submit set them already.
BASE_CONF: dict[str, str] = {
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.adaptive.coalescePartitions.enabled": "true",
    # coalesce small shuffle partitions to the advisory size (64 MB) instead of keeping as many
    # as possible: every task costs a Python round trip, and most shuffles here are small
    "spark.sql.adaptive.coalescePartitions.parallelismFirst": "false",
    # ... also for cached (persisted) plans, which otherwise keep all spark.sql.shuffle.partitions
    "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning": "true",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.ui.showConsoleProgress": "true",
    "spark.sql.session.timeZone": "UTC",
    # Parquet timestamps in nanoseconds (pandas' default) are read as longs: Spark cannot read
    # them otherwise, and one such column anywhere in an input table would fail the whole run.
    "spark.sql.legacy.parquet.nanosAsLong": "true",
}

MIN_SPLITS = "spark.sql.files.minPartitionNum"


def build_session(app_name: str, spark_conf: dict[str, Any], *, local: bool) -> SparkSession:
    """A session named ``app_name`` with ``spark_conf`` applied.

    ``local=True`` (the console command) also makes the executors use this Python, so the
    installed quiltdetect and its native dependencies are found without any packaging.
    Under spark-submit (``local=False``) the master and resources come from spark-submit.
    """
    if local:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    conf = {**BASE_CONF, **{k: str(v) for k, v in spark_conf.items() if v is not None}}
    if not local:
        # spark-submit's own settings (--master, --conf, spark-defaults.conf) win.
        from pyspark import SparkConf

        submitted = SparkConf()
        conf = {k: v for k, v in conf.items() if not submitted.contains(k)}
        conf.pop("spark.master", None)
        conf.pop("spark.driver.memory", None)
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if spark.conf.get(MIN_SPLITS, None) is None:
        # Scans in at least 4 splits per core, so one large file does not leave cores idle.
        spark.conf.set(MIN_SPLITS, str(4 * spark.sparkContext.defaultParallelism))
    spark.sparkContext.setLogLevel(str(conf.get("spark.log.level", "WARN")))
    return spark
