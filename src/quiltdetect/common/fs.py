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

from quiltdetect.common import listing
from quiltdetect.common.config import ConfigError
from quiltdetect.common.layout import COMPLETE, STATE_DIR
from quiltdetect.common.paths import check_output_dir, is_uri

HIDDEN_PREFIXES = listing.HIDDEN_PREFIXES


def is_local(uri: str) -> bool:
    """True for plain paths and file:// URIs (read directly by Python, no Hadoop needed)."""
    return not is_uri(uri) or uri.startswith("file:")


def local_path(uri: str) -> str:
    """The file-system path of a local URI (``file:///a/b`` -> ``/a/b``)."""
    return urlsplit(uri).path if uri.startswith("file:") else uri


_GLOB_CHARACTERS = "\\{}[]*?"


def hadoop_literal(path: str) -> str:
    """A path as a Hadoop glob that matches exactly that path: Spark reads the paths it is given
    as glob patterns, so ``b[1].jsonl`` would read ``b1.jsonl``. Every glob character is escaped."""
    return "".join("\\" + c if c in _GLOB_CHARACTERS else c for c in path)


def _hadoop(spark: SparkSession, uri: str):  # -> (FileSystem, Path) JVM objects
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), path


def expand_hadoop(spark: SparkSession, pattern: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Files named by a Hadoop URI, directory (recursive) or glob, and the hidden entries left
    out with their reason (``common/listing.py``): a path that exists is taken as it is, only
    one that does not is a glob."""
    hfs, path = _hadoop(spark, pattern)
    globbed = not hfs.exists(path)
    statuses = list(hfs.globStatus(path) or []) if globbed else [hfs.getFileStatus(path)]
    files: list[str] = []
    skipped: list[tuple[str, str]] = []
    for status in statuses:
        if status.isDirectory():
            it = hfs.listFiles(status.getPath(), True)
            while it.hasNext():
                p = it.next().getPath()
                inside = p.toString()[len(status.getPath().toString()):]
                if any(listing.is_hidden(part) for part in inside.split("/") if part):
                    skipped.append((p.toString(), listing.hidden_reason(p.toString())))
                else:
                    files.append(p.toString())
        elif globbed and listing.is_hidden(status.getPath().getName()):
            skipped.append((status.getPath().toString(), listing.hidden_reason(status.getPath().toString())))
        else:
            files.append(status.getPath().toString())
    return sorted(files), skipped


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
        try:
            with open(partial, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(partial, path)
        except Exception as exc:  # (a kill leaves the partial file: readers never take it for the file)
            if os.path.lexists(partial):
                os.remove(partial)
            if isinstance(exc, OSError) and not exc.filename:
                exc.filename = path  # the file being written, for the message
            raise
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


def check_output(spark: SparkSession | None, output: str, *, overwrite: bool, inputs: list[str] = ()) -> None:
    """Refuse an output that cannot be this run's, before anything is written or deleted:

    * an output that lies inside an input (the run would read its own outputs), or that holds
      one (``--overwrite`` would delete it; a run would mix its tables with the input's files);
    * a non-empty output that is not a quiltdetect output, with or without ``overwrite``:
      ``--overwrite`` only ever replaces a run of this project (``_quiltdetect/`` or
      ``_COMPLETE`` in it), never a directory of the user's own files, nor ``/``;
    * a quiltdetect output is resumed or refused later (``runstate.refuse_other_runs``).

    Symlinks are followed on both sides. Local outputs are checked without Spark (``spark``
    may be None), so the error comes first.
    """
    for given in inputs:
        inside, holds = _nested(output, given)
        if inside:
            raise ConfigError(f"--output {output} lies inside the input {given}: the run would read its own "
                              "outputs; choose an output outside every input")
        if holds:
            raise ConfigError(f"--output {output} holds the input {given}"
                              f"{': --overwrite would delete it' if overwrite else ''}; choose another output")
    if is_local(output):
        path = local_path(output)
        check_output_dir(output, f"--output {output}")
        if not os.path.isdir(path) or not os.listdir(path):
            return
        ours = any(os.path.lexists(os.path.join(path, marker)) for marker in RUN_MARKERS)
    elif spark is not None and exists(spark, output):
        if not children(spark, output):
            return
        ours = any(exists(spark, join(output, marker)) for marker in RUN_MARKERS)
    else:
        return
    if not ours:
        raise ConfigError(f"--output {output} exists and is not a quiltdetect output (no _quiltdetect/ or _COMPLETE)"
                          f"{': --overwrite only replaces a run of this project' if overwrite else ''}; "
                          "choose another (a new or empty directory)")


RUN_MARKERS = (STATE_DIR, COMPLETE)  # what only a run of this project writes


def _same_codec(a: str, b: str) -> bool:
    import codecs

    try:
        return codecs.lookup(a).name == codecs.lookup(b).name
    except LookupError:
        return True  # a name Python does not know: the JVM is left to decide, as before


def check_names(spark: SparkSession, paths: list[str]) -> None:
    """Refuse, in one line and before any is touched, local paths whose names the JVM cannot
    encode: a JVM whose locale is not UTF-8 (``LC_ALL=C`` when spark-submit started it; the
    console gives its own JVM a UTF-8 locale, ``session.jvm_locale``) names files in ASCII, so
    it could not find ``données/pages.jsonl`` and would write ``r?sultats/`` for ``résultats/``."""
    import sys

    named = [p for p in paths if p and is_local(p) and not p.isascii()]
    jvm = getattr(spark, "_jvm", None) if named else None  # none under Spark Connect
    if jvm is None:
        return
    encoding = str(jvm.java.lang.System.getProperty("sun.jnu.encoding"))
    if _same_codec(encoding, sys.getfilesystemencoding()):
        return
    raise ConfigError(f"Spark's JVM names files in {encoding}, which cannot name {named[0]} (its locale is not "
                      "UTF-8: LC_ALL, LC_CTYPE or LANG); start it under a UTF-8 one, e.g. "
                      "LC_ALL=C.UTF-8 spark-submit ..., or rename the path with ASCII characters only")


def _nested(output: str, given: str) -> tuple[bool, bool]:
    """(the output lies inside the input or is it, the input lies inside the output): by real
    paths for local ones (symlinks followed), by path for URIs; a glob counts from its fixed
    part (``crawl/*.warc.gz``: ``crawl``)."""
    if is_local(output) != is_local(given):
        return False, False
    if is_local(given):
        base = local_path(given)
        if not os.path.lexists(base) and glob.has_magic(base):
            base = _fixed_part(base)
        out, base = os.path.realpath(local_path(output)), os.path.realpath(base)
    else:
        base = _fixed_part(given) if glob.has_magic(given) else given
        out, base = urlsplit(output)._replace(query="", fragment="").geturl(), base
    out, base = out.rstrip("/") or "/", base.rstrip("/") or "/"
    inside = out == base or out.startswith(base.rstrip("/") + "/")
    holds = base.startswith(out.rstrip("/") + "/")
    return inside, holds


def _fixed_part(pattern: str) -> str:
    """The directories of a glob before its first pattern component."""
    parts = pattern.split("/")
    for i, part in enumerate(parts):
        if glob.has_magic(part):
            return "/".join(parts[:i]) or "/"
    return pattern


def join(base: str, *parts: str) -> str:
    """Join path parts onto a local path or URI with '/'."""
    return "/".join([base.rstrip("/"), *(p.strip("/") for p in parts)])
