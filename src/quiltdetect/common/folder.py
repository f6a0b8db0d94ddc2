"""A run's output folder: one object for the tables, text, bytes and plots a job writes.

The folder is a local path or any Hadoop URI (file://, hdfs://, s3a://, gs://); every write goes
through ``common/fs.py``, so what works locally also reaches a remote output. Tables are written
whole or not at all: Parquet goes to a hidden scratch directory and is renamed into place when
complete; small files are written beside their final name and renamed (``fs.write_bytes``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession

from quiltdetect.common import fs

SCRATCH = "_quiltdetect/tmp"  # tables being written, moved into place when complete


@dataclass(frozen=True)
class OutputFolder:
    """The output directory of one run (``root``: a local path or a Hadoop URI)."""

    spark: SparkSession
    root: str
    tag: str = ""  # names this run's scratch tables (the run id); a random one when empty
    scratch: str = ""  # where tables are written before their rename; <root>/_quiltdetect/tmp when empty

    def sub(self, name: str) -> OutputFolder:
        """A folder inside this one, sharing its scratch directory (cleared when the run completes)."""
        return OutputFolder(self.spark, self.path(name), self.tag, self.scratch or self.path(SCRATCH))

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
        fs.write_text(self.spark, self.path(name), text)

    def write_bytes(self, name: str, data: bytes) -> None:
        """A small binary file (a PNG plot from ``common.plots.png_bytes``), all or nothing."""
        fs.write_bytes(self.spark, self.path(name), data)

    def read_table(self, name: str) -> DataFrame:
        """A Parquet table of the folder."""
        return self.spark.read.parquet(self.path(name))

    def concat_tables(self, sources: list[str], name: str) -> DataFrame:
        """The table ``name`` made of the files of the Parquet tables ``sources`` (URIs, one
        schema), copied or hard-linked, not decoded (``fs.copy_files``); atomically, like
        ``write_table``. Returns the table read back."""
        tag = self.tag or uuid.uuid4().hex[:12]
        scratch = fs.join(self.scratch or self.path(SCRATCH), f"{name.replace('/', '_')}-{tag}")
        fs.delete(self.spark, scratch)
        for i, source in enumerate(sources):
            fs.copy_files(self.spark, source, scratch, prefix=f"t{i}-")
        fs.write_bytes(self.spark, fs.join(scratch, "_SUCCESS"), b"")
        fs.replace(self.spark, scratch, self.path(name))
        return self.read_table(name)

    def write_table(self, frame: DataFrame, name: str, options: dict[str, str] | None = None) -> DataFrame:
        """Write ``frame`` as the Parquet table ``name`` (writer ``options`` as given), atomically:
        into the scratch directory first, then renamed into place. Returns the table read back."""
        tag = self.tag or uuid.uuid4().hex[:12]
        scratch = fs.join(self.scratch or self.path(SCRATCH), f"{name.replace('/', '_')}-{tag}")
        frame.write.options(**(options or {})).mode("overwrite").parquet(scratch)
        fs.replace(self.spark, scratch, self.path(name))
        return self.read_table(name)
