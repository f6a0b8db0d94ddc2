"""The shuffle partitions of a run on a caller's session (the Python API), sized for its input.

The console command and spark-submit build their session with the config class's
``spark.sql.shuffle.partitions`` (``config.local_spark_defaults``: 32) unless spark-submit sets
it. A Python caller's session that does not set it has Spark's default, 200: every bucketed
table of the quilt and near-duplicate jobs is written as 200 tasks and 1,600 to 2,048 buckets, so
the docs' example on the demo's pages, and ``find_quilts`` on an empty DataFrame, took several
times as long as with a few partitions (docs/performance.md, "Figures behind choices in the
code"). A run on such a session (``Job.run(..., frame=docs)``) uses, for its duration only,
one partition per core, more when its text exceeds AQE's advisory partition size (64 MB) per
partition, at most the configured count; the session's own setting, when it has one, is used
as it is.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

from pyspark.sql import SparkSession

from quiltdetect.common.config import local_spark_defaults
from quiltdetect.common.errors import ConfigError

SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
ADVISORY_SIZE = "spark.sql.adaptive.advisoryPartitionSizeInBytes"


def partitions_for(text_bytes: int, partition_bytes: int, parallelism: int, most: int) -> int:
    """One shuffle partition per core (``parallelism``), more when ``text_bytes`` exceed
    ``partition_bytes`` per partition, at most ``most`` (and at least 1)."""
    wanted = math.ceil(max(0, text_bytes) / max(1, partition_bytes))
    return max(1, min(most, max(parallelism, wanted)))


def size_in_bytes(size: str) -> int:
    """A Spark size setting ("64m", "67108864b", "1g") in bytes."""
    text = size.strip().lower()
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    for suffix in ("kb", "mb", "gb", "tb", "b", "k", "m", "g", "t"):
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * units.get(suffix[0], 1))
    return int(text)


def configured_partitions(spark_settings: dict[str, Any]) -> int:
    """The shuffle partitions of a run's ``spark`` settings (the config class's, or a caller's)."""
    value = spark_settings.get(SHUFFLE_PARTITIONS, local_spark_defaults()[SHUFFLE_PARTITIONS])
    try:
        number = int(str(value))
    except ValueError:
        number = 0
    if number < 1:
        raise ConfigError(f"{SHUFFLE_PARTITIONS} must be an integer >= 1, got {value!r}")
    return number


@contextlib.contextmanager
def sized_for_input(spark: SparkSession, most: int, text_bytes: int) -> Iterator[int]:
    """Run the block with the shuffle partitions sized for ``text_bytes`` of input text
    (``partitions_for``, at most ``most``: ``configured_partitions``) when the session does not
    set them itself, and leave the session's setting as it was afterwards, also after an error.
    Yields the partitions the block runs with."""
    own = spark.conf.get(SHUFFLE_PARTITIONS, None)
    if own is not None:
        yield int(own)
        return
    advisory = size_in_bytes(str(spark.conf.get(ADVISORY_SIZE, "64m")))
    n = partitions_for(text_bytes, advisory, spark.sparkContext.defaultParallelism, most)
    spark.conf.set(SHUFFLE_PARTITIONS, str(n))
    try:
        yield n
    finally:
        spark.conf.unset(SHUFFLE_PARTITIONS)
