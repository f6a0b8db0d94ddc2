"""A run's output folder: one object for the tables, text, bytes and plots a job writes.

The folder is a local path or any Hadoop URI (file://, hdfs://, s3a://, gs://); every write goes
through ``common/fs.py``, so what works locally also reaches a remote output. Tables are written
whole or not at all: Parquet goes to a hidden scratch directory and is renamed into place when
complete; small files are written beside their final name and renamed (``fs.write_bytes``).
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from quiltdetect.common import fs
from quiltdetect.common.layout import SCRATCH


@dataclass(frozen=True)
class OutputFolder:
    """The output directory of one run (``root``: a local path or a Hadoop URI)."""

    spark: SparkSession
    root: str
    tag: str = ""  # names this run's scratch tables (the run id); a random one when empty
    scratch: str = ""  # where tables are written before their rename; <root>/_quiltdetect/tmp when empty
    # called before anything is put in place (a table renamed, a file written): raises when the
    # output is no longer this run's (runstate.RunState.check_owner)
    guard: Callable[[], None] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Spark resolves a relative table location against its warehouse directory, not the
        # working directory: the option layer makes every path absolute (common/paths.py)
        if fs.is_local(self.root) and not os.path.isabs(fs.local_path(self.root)):
            raise ValueError(f"OutputFolder: {self.root!r} is relative; resolve it first (common.paths.absolute)")

    def sub(self, name: str) -> OutputFolder:
        """A folder inside this one, sharing its scratch directory (cleared when the run completes)."""
        return OutputFolder(self.spark, self.path(name), self.tag, self.scratch or self.path(SCRATCH), self.guard)

    def path(self, *parts: str) -> str:
        """The URI of a file or table inside the folder."""
        return fs.join(self.root, *parts)

    def exists(self, *parts: str) -> bool:
        return fs.exists(self.spark, self.path(*parts))

    def children(self, *parts: str) -> list[str]:
        """The names in a sub-directory (empty when it does not exist)."""
        return fs.children(self.spark, self.path(*parts))

    def delete(self, *parts: str) -> None:
        fs.delete(self.spark, self.path(*parts))

    def read_text(self, name: str) -> str | None:
        """A small UTF-8 file's content, or None when it does not exist."""
        return fs.read_text(self.spark, self.path(name))

    def write_text(self, name: str, text: str) -> None:
        """A small UTF-8 file (CSV, TSV, JSON, YAML, HTML), written all or nothing."""
        self.write_bytes(name, text.encode("utf-8"))

    def write_bytes(self, name: str, data: bytes) -> None:
        """A small binary file (a PNG plot from ``common.plots.png_bytes``), all or nothing."""
        self._put_in_place()
        fs.write_bytes(self.spark, self.path(name), data)

    def _put_in_place(self, scratch: str | None = None) -> None:
        """Check the output is still this run's before anything is put in place; when it is
        not, remove what this run wrote to its scratch directory and raise."""
        if self.guard is None:
            return
        try:
            self.guard()
        except BaseException:
            if scratch:
                fs.delete(self.spark, scratch)
            raise

    @contextlib.contextmanager
    def _removed_on_failure(self, scratch: str) -> Iterator[None]:
        """A table half-written to the scratch directory is removed when its write fails or the
        run is interrupted (common/interrupts.py), so that nothing is left of it; best effort:
        the failure itself is what is raised."""
        try:
            yield
        except BaseException:
            with contextlib.suppress(Exception):
                fs.delete(self.spark, scratch)
            raise

    def read_table(self, name: str, schema: str | StructType | None = None) -> DataFrame:
        """A Parquet table of the folder (``schema``, a DDL string or a StructType: read with
        these columns, as a table without rows must be, of which Spark's bucketed writes leave no
        file). Without one, the schema Spark wrote in the first file's footer, read here: Spark's
        own inference of it is a job."""
        return read_parquet(self.spark, self.path(name), schema)

    def _scratch(self, name: str) -> str:
        """Where the table ``name`` is written before it is renamed into place: a directory of
        its own under the scratch folder (the run's tag, or a fresh one, tells writes apart)."""
        tag = self.tag or uuid.uuid4().hex[:12]
        return fs.join(self.scratch or self.path(SCRATCH), f"{name.replace('/', '_')}-{tag}")

    def concat_tables(self, sources: list[str], name: str, schema: str | None = None) -> DataFrame:
        """The table ``name`` made of the files of the Parquet tables ``sources`` (URIs, one
        schema), copied or hard-linked, not decoded (``fs.copy_files``); atomically, like
        ``write_table``. Returns the table read back (with ``schema``: see ``read_table``)."""
        scratch = self._scratch(name)
        fs.delete(self.spark, scratch)
        with self._removed_on_failure(scratch):
            for i, source in enumerate(sources):
                fs.copy_files(self.spark, source, scratch, prefix=f"t{i}-")
            fs.write_bytes(self.spark, fs.join(scratch, "_SUCCESS"), b"")
        self._put_in_place(scratch)
        fs.replace(self.spark, scratch, self.path(name))
        return self.read_table(name, schema)

    def write_bucketed_table(self, frame: DataFrame, name: str, column: str, buckets: int,
                             options: dict[str, str] | None = None) -> DataFrame:
        """``write_table`` as a Spark bucketed table: the rows hashed on ``column`` into
        ``buckets`` files (one or more per bucket, the bucket in each file's name), so that
        ``read_bucketed`` can group the table by ``column`` without a shuffle. Spark writes
        buckets only into a catalog table: one is registered under a unique name for the write
        and dropped again (the files stay; nothing is left in the session's catalog). Returns
        the table read back as a plain table: read bucketed, every scan of it would run one task
        per bucket (slower: docs/performance.md, "Tried and did not help"); ``read_bucketed``
        where the buckets serve."""
        scratch = self._scratch(name)
        fs.delete(self.spark, scratch)
        table = _catalog_name()
        try:
            with self._removed_on_failure(scratch):
                (frame.write.options(**(options or {})).bucketBy(buckets, column).format("parquet")
                 .option("path", scratch).mode("overwrite").saveAsTable(table))
        finally:
            self.spark.sql(f"DROP TABLE IF EXISTS {table}")
        self._put_in_place(scratch)
        fs.replace(self.spark, scratch, self.path(name))
        return self.read_table(name, ", ".join(f"`{f.name}` {f.dataType.simpleString()}" for f in frame.schema.fields))

    def write_table(self, frame: DataFrame, name: str, options: dict[str, str] | None = None) -> DataFrame:
        """Write ``frame`` as the Parquet table ``name`` (writer ``options`` as given), atomically:
        into the scratch directory first, then renamed into place. Returns the table read back."""
        scratch = self._scratch(name)
        with self._removed_on_failure(scratch):
            frame.write.options(**(options or {})).mode("overwrite").parquet(scratch)
        self._put_in_place(scratch)
        fs.replace(self.spark, scratch, self.path(name))
        # read with the schema just written: inferring it from a footer is a Spark job of its own
        return self.read_table(name, frame.schema)

    def write_counted(self, frame: DataFrame, name: str, counts: dict[str, Column],
                      options: dict[str, str] | None = None) -> tuple[DataFrame, dict[str, Any]]:
        """``write_table``, and the aggregates ``counts`` (name: aggregate column) of the rows
        written, observed as the write runs instead of by a pass over the table of their own.

        The observation sits on top of ``frame``, in the write's last stage, whose tasks report
        once each (a retried task's failed attempt does not count). Below a sort it would count
        twice: Spark's range partitioning samples the rows it sorts by running them once more."""
        observation = Observation(f"{name}-{uuid.uuid4().hex[:8]}")
        table = self.write_table(frame.observe(observation, *[c.alias(k) for k, c in counts.items()]),
                                 name, options)
        return table, dict(observation.get)

    def write_rows(self, frame: DataFrame, name: str, options: dict[str, str] | None = None) -> tuple[DataFrame, int]:
        """``write_table``, and the number of rows written (see ``write_counted``)."""
        table, counts = self.write_counted(frame, name, {"rows": F.count(F.lit(1))}, options)
        return table, int(counts["rows"])


def read_parquet(spark: SparkSession, uri: str, schema: str | StructType | None = None) -> DataFrame:
    """The Parquet table at ``uri`` (written by Spark), with ``schema`` if given, else the schema
    in its first file's footer (``fs.parquet_schema``), else as Spark infers it."""
    schema = schema or fs.parquet_schema(spark, uri)
    reader = spark.read if schema is None else spark.read.schema(schema)
    return reader.parquet(uri)


def _catalog_name() -> str:
    return f"`quiltdetect_{uuid.uuid4().hex}`"


# Spark's name of a bucketed write's file ends in its bucket (``part-..._00012.c000.snappy.parquet``)
_BUCKET_FILE = re.compile(r"_(\d+)(?:\..*)?$")


def bucket_files(directory: str) -> list[list[str]]:
    """The Parquet files of each bucket of the local table ``directory`` (written by
    ``write_bucketed_table``, or made of such tables' files by ``concat_tables``), bucket by
    bucket, each bucket's in name order; buckets without a file are left out."""
    found: dict[int, list[str]] = {}
    for name in sorted(os.listdir(directory)):
        match = _BUCKET_FILE.search(name)
        if name.endswith(".parquet") and match:
            found.setdefault(int(match.group(1)), []).append(os.path.join(directory, name))
    return [found[b] for b in sorted(found)]


def read_bucketed(spark: SparkSession, uri: str, ddl: str, column: str, buckets: int) -> DataFrame:
    """The Parquet table at ``uri``, written by ``write_bucketed_table`` (or made of such
    tables' files: ``concat_tables`` keeps their names, which carry the bucket), read as hashed
    on ``column`` into ``buckets``: a ``groupBy(column)`` of it runs without a shuffle. The
    catalog table this needs is dropped before returning (the DataFrame keeps its relation).
    ``ddl``: the table's columns (``name type, ...``)."""
    location = uri.replace("\\", "\\\\").replace("'", "\\'")
    table = _catalog_name()
    spark.sql(f"CREATE TABLE {table} ({ddl}) USING parquet CLUSTERED BY (`{column}`) INTO {buckets} BUCKETS "
              f"LOCATION '{location}'")
    try:
        return spark.table(table)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")

