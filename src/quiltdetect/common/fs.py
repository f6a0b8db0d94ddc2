"""File-system helpers that work for local paths and any Hadoop URI (s3a://, hdfs://, file://).

Small files (metrics, config) go through Hadoop's FileSystem API via the JVM, so a run whose
output lives on object storage writes them the same way Spark writes its tables.
"""

from __future__ import annotations

import glob
import os
from urllib.parse import urlsplit

from pyspark.sql import SparkSession

from quiltdetect.common.config import ConfigError

HIDDEN_PREFIXES = ("_", ".")


def is_local(uri: str) -> bool:
    """True for plain paths and file:// URIs (read directly by Python, no Hadoop needed)."""
    scheme = urlsplit(uri).scheme
    return scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt")


def local_path(uri: str) -> str:
    """The file-system path of a local URI (``file:///a/b`` -> ``/a/b``)."""
    return urlsplit(uri).path if uri.startswith("file:") else uri


def expand_local(pattern: str) -> list[str]:
    """Files matched by a local path, directory (recursive) or glob; hidden files left out."""
    path = local_path(pattern)
    matches = sorted(glob.glob(path, recursive=True)) if glob.has_magic(path) else [path]
    files: list[str] = []
    for match in matches:
        if os.path.isdir(match):
            for root, dirs, names in os.walk(match):
                dirs[:] = sorted(d for d in dirs if not d.startswith(HIDDEN_PREFIXES))
                files.extend(os.path.join(root, n) for n in sorted(names) if not n.startswith(HIDDEN_PREFIXES))
        elif os.path.isfile(match):
            files.append(match)
    return [os.path.abspath(f) for f in files]


def _hadoop(spark: SparkSession, uri: str):  # -> (FileSystem, Path) JVM objects
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), path


def expand_hadoop(spark: SparkSession, pattern: str) -> list[str]:
    """Files matched by a Hadoop URI, directory (recursive) or glob; hidden files left out."""
    fs, path = _hadoop(spark, pattern)
    statuses = fs.globStatus(path) or []
    files: list[str] = []
    for status in statuses:
        if status.isDirectory():
            it = fs.listFiles(status.getPath(), True)
            while it.hasNext():
                p = it.next().getPath()
                if not p.getName().startswith(HIDDEN_PREFIXES):
                    files.append(p.toString())
        elif not status.getPath().getName().startswith(HIDDEN_PREFIXES):
            files.append(status.getPath().toString())
    return sorted(files)


def exists(spark: SparkSession, uri: str) -> bool:
    """Whether a path exists (local or Hadoop)."""
    if is_local(uri):
        return os.path.exists(local_path(uri))
    fs, path = _hadoop(spark, uri)
    return bool(fs.exists(path))


def delete(spark: SparkSession, uri: str) -> None:
    """Remove a path recursively if it exists."""
    fs, path = _hadoop(spark, uri)
    if fs.exists(path):
        fs.delete(path, True)


def write_text(spark: SparkSession, uri: str, text: str) -> None:
    """Write a small UTF-8 file, overwriting it."""
    if is_local(uri):
        path = local_path(uri)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        return
    fs, path = _hadoop(spark, uri)
    out = fs.create(path, True)
    try:
        out.write(bytearray(text.encode("utf-8")))
    finally:
        out.close()


def check_output(spark: SparkSession | None, output: str, *, overwrite: bool) -> None:
    """Refuse to write into a non-empty output unless ``overwrite``.

    Local outputs are checked without Spark (``spark`` may be None), so the error comes first.
    """
    if is_local(output):
        path = local_path(output)
        if os.path.isfile(path):
            raise ConfigError(f"--output {output} is a file; give a directory")
        if os.path.isdir(path) and os.listdir(path) and not overwrite:
            raise ConfigError(f"--output {output} exists and is not empty; choose another or pass --overwrite")
    elif spark is not None and exists(spark, output) and not overwrite:
        raise ConfigError(f"--output {output} exists; choose another or pass --overwrite")


def join(base: str, *parts: str) -> str:
    """Join path parts onto a local path or URI with '/'."""
    return "/".join([base.rstrip("/"), *(p.strip("/") for p in parts)])
