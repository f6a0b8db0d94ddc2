"""File-system helpers that work for local paths and any Hadoop URI (s3a://, hdfs://, file://).

Small files (metrics, config) go through Hadoop's FileSystem API via the JVM, so a run whose
output lives on object storage writes them the same way Spark writes its tables.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq
from py4j.protocol import Py4JError
from pyspark.sql import SparkSession
from pyspark.sql.types import ArrayType, DataType, MapType, StructField, StructType

from quiltdetect.common.config import ConfigError
from quiltdetect.common.paths import check_output_dir, is_uri

HIDDEN_PREFIXES = ("_", ".")


def is_local(uri: str) -> bool:
    """True for plain paths and file:// URIs (read directly by Python, no Hadoop needed)."""
    return not is_uri(uri) or uri.startswith("file:")


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


def matches(spark: SparkSession | None, pattern: str) -> list[str]:
    """The paths (files or directories) a glob matches, sorted, not descended into. A local
    pattern keeps its form (relative stays relative); a Hadoop one comes back qualified."""
    if is_local(pattern):
        return sorted(glob.glob(local_path(pattern)))
    fs, path = _hadoop(spark, pattern)
    return sorted(status.getPath().toString() for status in (fs.globStatus(path) or []))


def exists(spark: SparkSession, uri: str) -> bool:
    """Whether a path exists (local or Hadoop)."""
    if is_local(uri):
        return os.path.exists(local_path(uri))
    fs, path = _hadoop(spark, uri)
    return bool(fs.exists(path))


def children(spark: SparkSession | None, uri: str) -> list[str]:
    """The names of a directory's entries (empty if it does not exist)."""
    if is_local(uri):
        path = local_path(uri)
        return sorted(os.listdir(path)) if os.path.isdir(path) else []
    hfs, path = _hadoop(spark, uri)
    if not hfs.exists(path):
        return []
    return sorted(status.getPath().getName() for status in hfs.listStatus(path))


def delete(spark: SparkSession | None, uri: str) -> None:
    """Remove a path recursively if it exists."""
    if is_local(uri):
        path = local_path(uri)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)
        return
    hfs, path = _hadoop(spark, uri)
    if hfs.exists(path):
        hfs.delete(path, True)


def replace(spark: SparkSession, source: str, target: str) -> None:
    """Move ``source`` to ``target``, replacing it (a rename: atomic on local disks and HDFS)."""
    delete(spark, target)
    if is_local(source):
        os.makedirs(os.path.dirname(local_path(target).rstrip("/")) or ".", exist_ok=True)
        os.rename(local_path(source), local_path(target))
        return
    hfs, src = _hadoop(spark, source)
    _, dst = _hadoop(spark, target)
    hfs.mkdirs(dst.getParent())
    if not hfs.rename(src, dst):
        raise OSError(f"could not move {source} to {target}")


def copy_files(spark: SparkSession, source: str, target: str, prefix: str = "") -> int:
    """Copy the visible files of directory ``source`` into directory ``target`` (made if need
    be), each named ``prefix`` + its name; returns how many. Local files are hard-linked when
    both sides are on one disk (Parquet files are never rewritten in place), else copied byte
    for byte: no file is decoded."""
    if is_local(source) and is_local(target):
        src, dst = local_path(source), local_path(target)
        os.makedirs(dst, exist_ok=True)
        names = [n for n in sorted(os.listdir(src)) if not n.startswith(HIDDEN_PREFIXES)]
        for name in names:
            try:
                os.link(os.path.join(src, name), os.path.join(dst, prefix + name))
            except OSError:
                shutil.copyfile(os.path.join(src, name), os.path.join(dst, prefix + name))
        return len(names)
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    sfs, src = _hadoop(spark, source)
    tfs, dst = _hadoop(spark, target)
    tfs.mkdirs(dst)
    statuses = [st for st in sfs.listStatus(src) if not st.getPath().getName().startswith(HIDDEN_PREFIXES)]
    for st in statuses:
        to = jvm.org.apache.hadoop.fs.Path(dst, prefix + st.getPath().getName())
        if not jvm.org.apache.hadoop.fs.FileUtil.copy(sfs, st.getPath(), tfs, to, False, conf):
            raise OSError(f"could not copy {st.getPath().toString()} to {to.toString()}")
    return len(statuses)


def read_text(spark: SparkSession | None, uri: str) -> str | None:
    """A small UTF-8 file's content, or None if it does not exist."""
    if is_local(uri):
        try:
            with open(local_path(uri), encoding="utf-8") as fh:
                return fh.read()
        except (FileNotFoundError, NotADirectoryError):
            return None
    hfs, path = _hadoop(spark, uri)
    if not hfs.exists(path):
        return None
    stream = hfs.open(path)
    try:
        reader = spark.sparkContext._jvm.java.io.BufferedReader(
            spark.sparkContext._jvm.java.io.InputStreamReader(stream, "UTF-8"))
        lines = []
        line = reader.readLine()
        while line is not None:
            lines.append(line)
            line = reader.readLine()
        return "\n".join(lines)
    finally:
        stream.close()


def status(spark: SparkSession, uri: str) -> tuple[int, int]:
    """(size in bytes, modification time in seconds) of a Hadoop path."""
    hfs, path = _hadoop(spark, uri)
    st = hfs.getFileStatus(path)
    return int(st.getLen()), int(st.getModificationTime() // 1000)


SPARK_SCHEMA_KEY = b"org.apache.spark.sql.parquet.row.metadata"  # Spark's schema in a footer


def parquet_schema(spark: SparkSession, uri: str) -> StructType | None:
    """The schema Spark would infer for the Parquet table at ``uri``, read on the driver from
    the Spark schema in the footer of the table's first file: Spark infers it with a job of its
    own. None when the table has no data file, or one not written by Spark (its caller then lets
    Spark infer the schema)."""
    try:
        if is_local(uri):
            root = local_path(uri)
            names = sorted(n for n in os.listdir(root) if not n.startswith(HIDDEN_PREFIXES))
            if not names:
                return None
            meta = pq.read_metadata(os.path.join(root, names[0])).metadata or {}
            text = meta.get(SPARK_SCHEMA_KEY)
        else:
            hfs, path = _hadoop(spark, uri)
            names = sorted(st.getPath().getName() for st in hfs.listStatus(path)
                           if not st.getPath().getName().startswith(HIDDEN_PREFIXES))
            if not names:
                return None
            jvm = spark.sparkContext._jvm
            conf = spark.sparkContext._jsc.hadoopConfiguration()
            hadoop_file = jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(
                jvm.org.apache.hadoop.fs.Path(path, names[0]), conf)
            reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(hadoop_file)
            try:
                value = reader.getFooter().getFileMetaData().getKeyValueMetaData().get(SPARK_SCHEMA_KEY.decode())
            finally:
                reader.close()
            text = None if value is None else value.encode()
        if text is None:
            return None
        return _nullable(StructType.fromJson(json.loads(text)))
    except (OSError, ValueError, KeyError, TypeError, Py4JError, pa.ArrowException):
        return None


def _nullable(kind: DataType) -> Any:
    """``kind`` with every field, element and value nullable, as Spark reads any file back."""
    if isinstance(kind, StructType):
        return StructType([StructField(f.name, _nullable(f.dataType), True, f.metadata) for f in kind.fields])
    if isinstance(kind, ArrayType):
        return ArrayType(_nullable(kind.elementType), True)
    if isinstance(kind, MapType):
        return MapType(_nullable(kind.keyType), _nullable(kind.valueType), True)
    return kind


def write_text(spark: SparkSession, uri: str, text: str) -> None:
    """Write a small UTF-8 file, overwriting it, all or nothing (see ``write_bytes``)."""
    write_bytes(spark, uri, text.encode("utf-8"))


def write_bytes(spark: SparkSession | None, uri: str, data: bytes) -> None:
    """Write a small file locally or through the Hadoop file system, overwriting it.

    The bytes go to a hidden ``.<name>.partial`` beside it, which is then renamed over the
    file, so a run killed mid-write never leaves a half-written marker (``_COMPLETE``,
    ``run.json``, a stage marker): readers see the old file, the new one, or none.
    """
    if is_local(uri):
        path = local_path(uri)
        folder, name = os.path.split(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        partial = os.path.join(folder, f".{name}.partial")
        with open(partial, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(partial, path)
        return
    hfs, path = _hadoop(spark, uri)
    partial = path.getParent().suffix(f"/.{path.getName()}.partial")
    out = hfs.create(partial, True)
    try:
        out.write(bytearray(data))
    finally:
        out.close()
    hfs.delete(path, False)
    if not hfs.rename(partial, path):
        raise OSError(f"could not move {partial} to {uri}")


def check_output(spark: SparkSession | None, output: str, *, overwrite: bool) -> None:
    """Refuse to write into a non-empty output unless ``overwrite`` or it is a quiltdetect
    output (which the run then resumes, or refuses if it was made from other inputs).

    Local outputs are checked without Spark (``spark`` may be None), so the error comes first.
    """
    if is_local(output):
        path = local_path(output)
        check_output_dir(output, f"--output {output}")
        ours = os.path.exists(os.path.join(path, "_quiltdetect", "run.json"))
        if os.path.isdir(path) and os.listdir(path) and not ours and not overwrite:
            raise ConfigError(f"--output {output} exists and is not empty; choose another or pass --overwrite")
    elif spark is not None and exists(spark, output) and not overwrite:
        if not exists(spark, join(output, "_quiltdetect", "run.json")):
            raise ConfigError(f"--output {output} exists; choose another or pass --overwrite")


def join(base: str, *parts: str) -> str:
    """Join path parts onto a local path or URI with '/'."""
    return "/".join([base.rstrip("/"), *(p.strip("/") for p in parts)])
