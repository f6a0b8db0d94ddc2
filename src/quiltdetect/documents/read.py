"""The document table: every input format read into one DataFrame (definitions §0).

Files are listed on the driver (paths only), then each WARC/WET file is read by one task with
the pure-Python record readers, so a bad file or record is a counted skip row, never a failed
job. Local files are streamed from disk; files on other Hadoop file systems (s3a://, hdfs://)
come through Spark's ``binaryFile`` source, which uses the cluster's Hadoop configuration.
"""

from __future__ import annotations

import io
import logging
import os
import re
from collections.abc import Iterator
from urllib.parse import unquote

import pandas as pd
from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DoubleType,
    FloatType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from quiltdetect.common import fs
from quiltdetect.common.caching import TEXT_CACHE, cut
from quiltdetect.common.config import ConfigError
from quiltdetect.documents import records
from quiltdetect.documents.inputs import InputFile
from quiltdetect.documents.keys import INPUT_RANK, TIE_BREAK
from quiltdetect.documents.urls import domain_of, host_of

log = logging.getLogger(__name__)

ANCHOR_TYPE = StructType([StructField("text", StringType()), StructField("href", StringType())])
ROW_SCHEMA = StructType(
    [
        StructField("doc_id", StringType()),
        StructField("url", StringType()),
        StructField("host", StringType()),
        StructField("domain", StringType()),
        StructField("ip", StringType()),
        StructField("text", StringType()),
        StructField("title", StringType()),
        StructField("headings", ArrayType(StringType())),
        StructField("anchors", ArrayType(ANCHOR_TYPE)),
        StructField("meta_keywords", StringType()),
        StructField("meta_description", StringType()),
        StructField("images", ArrayType(StringType())),
        StructField("warc_date", StringType()),
        StructField("source", StringType()),
        StructField("offset", LongType()),
        StructField("decode_errors", BooleanType()),
        StructField("skip_reason", StringType()),
        StructField("skip_detail", StringType()),
        # the encoding a page was decoded with when its bytes did not fit its declaration
        # (``html.decode_page``): counted by the ingest stage, not kept in docs/
        StructField("decoded_as", StringType()),
    ]
)
NOT_DOC_COLUMNS = ("skip_reason", "skip_detail", "decoded_as")
# Every row frame of ``read_rows`` carries one more column: the UTF-8 bytes of the row's text as
# read, before the repairs of ``_table_columns`` (null when there is no text). The ingest's count
# of the records (``table.read_documents``) reads it instead of the text: in a Parquet input's
# scan it costs no UTF-8 check of any text (docs/performance.md, "Figures behind choices in the code").
TEXT_BYTES = "text_bytes"
DOC_COLUMNS = [f.name for f in ROW_SCHEMA.fields if f.name not in NOT_DOC_COLUMNS]
SKIP_DUPLICATE_ID = "duplicate_doc_id"
SKIP_MISSING_ID = "missing_id"
SKIP_MISSING_TEXT = "missing_text"
SKIP_BAD_COLUMN_TYPE = "bad_column_type"
TABLE_COLUMNS = ("id", "url", "text", "ip", "date")
DEFAULT_COLUMNS = {name: name for name in TABLE_COLUMNS}  # which input column holds each
ROWS_PER_BATCH = 256

def _rows_frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(rows, columns=list(ROW_SCHEMA.fieldNames()))
    frame["offset"] = frame["offset"].astype("Int64")
    return frame


def _file_rows(path: str, fmt: str, content: bytes | None, max_payload_bytes: int) -> Iterator[dict]:
    """Rows of one WARC/WET file; an unopenable file is one ``file_error`` skip row.

    A ``.zst`` file is read through zstandard (``records.zstd_stream``). A WARC gzipped whole
    (``gzip crawl.warc``: one gzip member, not one per record) is read again through a gzip
    stream from the record where warcio stopped: every record is read, and nothing twice."""
    reader = records.iter_wet_rows if fmt == "wet" else records.iter_warc_rows
    path = source_name(path)

    def rows(whole_gzip: bool) -> Iterator[dict]:
        try:
            stream = io.BytesIO(content) if content is not None else open(fs.local_path(path), "rb")
        except OSError as exc:
            yield _skip_row(path, records.SKIP_FILE_ERROR, f"{type(exc).__name__}: {exc}")
            return
        with stream:
            try:
                decoded = records.decompressed(stream, path, whole_gzip=whole_gzip)
            except Exception as exc:  # a broken zstandard header, a dictionary that does not load
                yield _skip_row(path, records.SKIP_FILE_ERROR, f"{type(exc).__name__}: {exc}")
                return
            yield from reader(decoded, path, max_payload_bytes=max_payload_bytes)

    for row in rows(whole_gzip=False):
        if records.is_whole_gzip(row):
            yield from (r for r in rows(whole_gzip=True) if r["offset"] is None or r["offset"] >= row["offset"])
            return
        yield row


_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def source_name(path: str) -> str:
    """The ``source`` recorded for a file: a plain path for local files however they were read
    (``file:/a/b%5B1%5D`` from Hadoop becomes ``/a/b[1]``: Hadoop percent-encodes the names it
    reports), the URI for other file systems. A path with a ``%`` that starts no escape is kept
    as it is."""
    if not path.startswith("file:"):
        return path
    local = fs.local_path(path)
    return local if _BAD_ESCAPE.search(local) else unquote(local, errors="replace")


def _skip_row(source: str, reason: str, detail: str) -> dict:
    row = dict.fromkeys(ROW_SCHEMA.fieldNames())
    row.update(source=source, skip_reason=reason, skip_detail=detail)
    return row


def read_archive_batches(batches: Iterator[pd.DataFrame], max_payload_bytes: int) -> Iterator[pd.DataFrame]:
    """mapInPandas body: (path, format[, content]) rows -> document and skip rows."""
    for batch in batches:
        contents = batch["content"] if "content" in batch.columns else [None] * len(batch)
        for path, fmt, content in zip(batch["path"], batch["format"], contents, strict=True):
            rows: list[dict] = []
            for row in _file_rows(path, fmt, content, max_payload_bytes):
                rows.append(row)
                if len(rows) >= ROWS_PER_BATCH:
                    yield _rows_frame(rows)
                    rows = []
            if rows:
                yield _rows_frame(rows)


def read_archives(
    spark: SparkSession, files: list[InputFile], max_payload_bytes: int, *, hadoop_reader: bool = False
) -> DataFrame:
    """Document and skip rows of WARC/WET files, one task per local file.

    Non-local files (and all files with ``hadoop_reader``) are read by Spark's binaryFile
    source, which loads each file whole into its task: size executors for the largest file.
    """
    def body(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        return read_archive_batches(batches, max_payload_bytes)

    def streamed(f: InputFile) -> bool:
        return fs.is_local(f.path) and not hadoop_reader

    local = [(f.path, f.format) for f in files if streamed(f)]
    remote = [f for f in files if not streamed(f)]
    frames: list[DataFrame] = []
    if local:
        groups = file_groups(local, 4 * spark.sparkContext.defaultParallelism)
        rdd = spark.sparkContext.parallelize(groups, numSlices=len(groups)).flatMap(lambda group: group)
        paths = spark.createDataFrame(rdd, "path string, format string")
        frames.append(paths.mapInPandas(body, ROW_SCHEMA))
    if remote:
        fmt_of = {_hadoop_uri(f.path): f.format for f in remote}
        mapping = F.create_map(*[x for p, fmt in fmt_of.items() for x in (F.lit(p), F.lit(fmt))])
        binary = (
            spark.read.format("binaryFile").load(list(fmt_of))
            .select("path", "content")
            .withColumn("format", F.coalesce(mapping[F.col("path")], F.lit("warc")))
        )
        frames.append(binary.select("path", "format", "content").mapInPandas(body, ROW_SCHEMA))
    rows = _union(frames)
    return rows.withColumn(TEXT_BYTES, F.octet_length("text").cast("long"))  # (decoded in Python: valid UTF-8)


def file_groups(files: list[tuple[str, str]], slots: int) -> list[list[tuple[str, str]]]:
    """Local files dealt into at most ``slots`` tasks, largest first, each to the task with the
    fewest bytes so far: one task per file while there are few (a large WARC gets a core of its
    own), and not one task per file when there are thousands of small ones (each task costs a
    scheduling round trip)."""
    def size(path: str) -> int:
        try:
            return os.path.getsize(fs.local_path(path))
        except OSError:
            return 0

    if len(files) <= slots:
        return [[f] for f in files]
    import heapq

    groups: list[list[tuple[str, str]]] = [[] for _ in range(max(1, slots))]
    loads = [(0, i) for i in range(len(groups))]  # (bytes so far, task): a heap
    for n, f in sorted(((size(f[0]), f) for f in files), key=lambda x: (-x[0], x[1][0])):
        load, i = heapq.heappop(loads)
        groups[i].append(f)
        heapq.heappush(loads, (load + n + 1, i))
    return [g for g in groups if g]


def _hadoop_uri(path: str) -> str:
    """A local path as the file: URI that binaryFile reports back; other URIs unchanged."""
    return "file:" + os.path.abspath(path) if fs.is_local(path) and not path.startswith("file:") else path


@F.pandas_udf(StructType([StructField("host", StringType()), StructField("domain", StringType())]))
def _hosts(urls: pd.Series) -> pd.DataFrame:
    """Host and registered domain of each url (only the url column travels to Python)."""
    domains: dict[str, str] = {}  # per host: a crawl has far fewer hosts than pages
    host_col, domain_col = [], []
    for url in urls:
        host = host_of(url) if isinstance(url, str) else ""
        domain = domains.get(host)
        if domain is None:
            domain = domains[host] = domain_of(host)
        host_col.append(host)
        domain_col.append(domain)
    return pd.DataFrame({"host": host_col, "domain": domain_col})


def source_names(paths: Column) -> Column:
    """``source_name`` of each input file name, in Spark SQL (no Python worker): a ``file:`` URI
    becomes its path (what ``urlsplit`` gives: tabs and line breaks dropped, the authority and
    any ``?`` / ``#`` part left out), any other URI stays as it is. ``tests/test_ingest_urls.py``
    checks it equals ``source_name``."""
    uri = F.regexp_replace(paths, "[\t\r\n]", "")
    path = F.regexp_extract(uri, r"^file:(?://[^/?#]*)?([^?#]*)", 1)
    decoded = F.when(path.rlike("%([^0-9A-Fa-f]|.[^0-9A-Fa-f]|.?$)"), path).otherwise(
        F.try_url_decode(F.regexp_replace(path, r"\+", "%2B")))  # a '+' is a '+', not a space
    return (F.when(paths.startswith("file:"), decoded)
            .when(paths.isNotNull(), paths))  # (a nullable column, as the table's schema has always said)


def without_nul(text: Column) -> Column:
    """NUL characters as spaces; ``translate`` copies every text, so only texts holding one
    (almost none) go through it. The test is ``contains``, a scan for the byte: ``instr`` counts
    characters up to the match and compares the needle at each one, and was a sixth of the JVM's
    CPU samples in a 100,000-page ingest."""
    return F.when(text.contains("\u0000"), F.translate(text, "\u0000", " ")).otherwise(text)


def table_rows(table: DataFrame) -> DataFrame:
    """(id, url, text, ip, date, source, decode_errors, bad_type, text_bytes) table rows -> document
    and skip rows (the date, when the table has one, is the page's crawl date: ``warc_date``),
    in ROW_SCHEMA and ``TEXT_BYTES`` (see ``_table_columns`` for the last three).

    The text stays in the JVM: only url and the file name go through Python (for the host,
    registered domain and source name), so reading a Parquet table costs a scan, not a copy of
    every page to Python and back.
    """
    hosts = _hosts(F.col("url"))
    missing_id = F.col("id").isNull() | (F.col("id") == "")
    reason = (F.when(F.col("bad_type").isNotNull(), F.lit(SKIP_BAD_COLUMN_TYPE))
              .when(missing_id, F.lit(SKIP_MISSING_ID))
              .when(F.col(TEXT_BYTES).isNull(), F.lit(SKIP_MISSING_TEXT)))  # (null as the text is)
    fields = {
        "doc_id": F.col("id"),
        "url": F.col("url"),
        "host": hosts["host"],
        "domain": hosts["domain"],
        "ip": F.col("ip"),
        "warc_date": F.col("date"),
        "text": F.col("text"),
        "source": source_names(F.col("source")),
        "decode_errors": F.col("decode_errors"),
        "skip_reason": reason,
        "skip_detail": F.col("bad_type"),
    }
    return table.select(*[(fields[f.name] if f.name in fields else F.lit(None)).cast(f.dataType).alias(f.name)
                          for f in ROW_SCHEMA.fields], F.col(TEXT_BYTES))


def _table_columns(table: DataFrame) -> list:
    """id, url, text, ip, date of a table of any column types as valid UTF-8 strings, plus
    ``decode_errors`` (some value held invalid UTF-8, now replaced by U+FFFD, as the WARC
    reader decodes leniently), ``bad_type`` (why the file's rows cannot be documents) and
    ``TEXT_BYTES`` (the text's bytes before any repair).

    Strings and binary values are checked and repaired byte for byte (Parquet does not
    validate its strings, and one invalid value would otherwise reach every analysis); numbers,
    booleans, dates become their text; a nested column (struct, array, map) makes every row of
    the file a ``bad_column_type`` skip naming the column, since no text can be taken from it
    without guessing. NUL characters in the text become spaces (they separate words anyway,
    and the review page must not show them).
    """
    cols, repaired, bad = [], [], []
    text_bytes = F.lit(None).cast("long")
    for name in TABLE_COLUMNS:
        if name not in table.columns:
            cols.append(F.lit(None).cast("string").alias(name))
            continue
        dtype = table.schema[name].dataType
        if isinstance(dtype, (ArrayType, MapType, StructType)):
            bad.append(f"column {name} is {dtype.simpleString()}, not text")
            cols.append(F.lit(None).cast("string").alias(name))
            continue
        value = F.col(name).cast("string")
        if isinstance(dtype, (FloatType, DoubleType)):  # NaN is no id (a missing_id skip), nor a text
            value = F.when(~F.isnan(F.col(name)), value)
        if name == "text":
            text_bytes = F.octet_length(value).cast("long")
        if isinstance(dtype, (StringType, BinaryType)):
            repaired.append(F.coalesce(~F.is_valid_utf8(value), F.lit(False)))
            value = F.make_valid_utf8(value)
        if name == "text":
            value = without_nul(value)
        cols.append(value.alias(name))
    flag = F.lit(False)
    for r in repaired:
        flag = flag | r
    detail = F.lit("; ".join(bad)) if bad else F.lit(None).cast("string")
    return [*cols, flag.alias("decode_errors"), detail.alias("bad_type"), text_bytes.alias(TEXT_BYTES)]


def document_table_rows(table: DataFrame, keep: tuple[str, ...] = ()) -> DataFrame:
    """Rows of a document table written by an earlier run (``quiltdetect ingest``'s docs/);
    ``keep``: more of its columns to carry, as they are, after the skip columns.

    Every field is kept as it was ingested (HTML fields, source and offset in the crawl), so
    analyses that read it see exactly what they would have seen reading the crawl itself.
    Rows without a doc_id or text are skipped and counted like any table row.
    """
    present = set(table.columns)
    names = [f.name for f in ROW_SCHEMA.fields if f.name not in NOT_DOC_COLUMNS]
    cols = {f.name: (F.col(f.name) if f.name in present else F.lit(None)).cast(f.dataType)
            for f in ROW_SCHEMA.fields if f.name in names}
    # A docs/ table from elsewhere may hold invalid UTF-8 in any string column (Parquet does not
    # validate strings) and NULs in its text: repaired and flagged like a table's (see _table_columns).
    flag = F.coalesce(cols["decode_errors"], F.lit(False))
    text_bytes = F.octet_length(cols["text"]).cast("long")
    for f in ROW_SCHEMA.fields:
        if f.name in names and isinstance(f.dataType, StringType):
            flag = flag | F.coalesce(~F.is_valid_utf8(cols[f.name]), F.lit(False))
            cols[f.name] = F.make_valid_utf8(cols[f.name])
    cols["decode_errors"] = flag
    cols["text"] = without_nul(cols["text"])
    cols = [cols[n].alias(n) for n in names]
    rows = table.select(*cols, text_bytes.alias(TEXT_BYTES), *keep)
    reason = (F.when(F.col("doc_id").isNull() | (F.col("doc_id") == ""), F.lit(SKIP_MISSING_ID))
              .when(F.col(TEXT_BYTES).isNull(), F.lit(SKIP_MISSING_TEXT)))
    return rows.select(*DOC_COLUMNS, reason.alias("skip_reason"), F.lit(None).cast("string").alias("skip_detail"),
                       F.lit(None).cast("string").alias("decoded_as"), TEXT_BYTES, *keep)


def named_columns(table: DataFrame, columns: dict[str, str]) -> DataFrame:
    """The table's id, url, text, ip columns under those names (``columns``: name -> the table's
    column, from ``--id-col`` etc.); a table named as expected is returned as it is."""
    if all(columns[n] == n for n in TABLE_COLUMNS):
        return table
    return table.select(*[F.col(quoted(columns[n])).alias(n) for n in TABLE_COLUMNS if columns[n] in table.columns])


def quoted(name: str) -> str:
    """A column name as Spark must be given it to take it literally: ``meta.id`` is a column of
    that name, not the field ``id`` of a struct ``meta``."""
    return "`" + name.replace("`", "``") + "`"


def _table_rows(table: DataFrame, source: Column, columns: dict[str, str], what: str) -> DataFrame:
    """Document and skip rows of one table (``source``: the column naming where each row came from)."""
    if "doc_id" in table.columns and columns["id"] not in table.columns:
        return document_table_rows(table)
    table = named_columns(table, columns)
    missing = [c for c in ("id", "text") if c not in table.columns]
    if missing and table.columns:  # no column at all: JSON Lines of no rows (0 bytes, blank lines) or of {}
        raise ConfigError(
            f"{what}: missing column(s) {', '.join(columns[c] for c in missing)}; tables need a document id and "
            "a text column (and optionally url, ip and date): name them with --id-col, --text-col, --url-col, --ip-col, "
            "--date-col"
        )
    return table_rows(table.select(*_table_columns(table), source.alias("source")))


def refuse_ambiguous_columns(frame: DataFrame, columns: dict[str, str]) -> None:
    """A ConfigError when a caller's DataFrame has two columns, differing only in case, for a
    name the run reads (``text`` and ``TEXT``): Spark, which resolves names regardless of case,
    could not tell them apart (its AMBIGUOUS_REFERENCE), nor can we tell which one is meant.
    Tables read from files are refused alike when they are read (``_read_table``)."""
    if str(frame.sparkSession.conf.get("spark.sql.caseSensitive", "false")).lower() == "true":
        return
    read = {name.lower() for name in [*columns.values(), *DOC_COLUMNS, "doc_key"]}
    by_name: dict[str, list[str]] = {}
    for name in frame.columns:
        by_name.setdefault(name.lower(), []).append(name)
    for lower, names in by_name.items():
        if lower in read and len(names) > 1:
            raise ConfigError(f"the DataFrame: two columns named {lower} ({', '.join(names)}: names that differ "
                              "only in case); rename or drop one")


def frame_rows(frame: DataFrame, columns: dict[str, str] = DEFAULT_COLUMNS) -> DataFrame:
    """Document and skip rows of a caller's DataFrame (the Python API), read like a table file
    (one input: ``input_rank`` 0)."""
    return _table_rows(frame, F.lit("dataframe"), columns, "the DataFrame").withColumn(INPUT_RANK, F.lit(0))


def read_tables(spark: SparkSession, files: list[InputFile], columns: dict[str, str] = DEFAULT_COLUMNS) -> DataFrame:
    """Document and skip rows of Parquet / JSON Lines tables: (id, url, text[, ip]) tables, or
    document tables (doc_id, ...) that an earlier run wrote.

    A local file that cannot be read as its format (not Parquet at all, cut before its footer,
    a broken gzip stream) is one ``file_error`` skip row naming the file and the error, and the
    other files are read; Spark would otherwise fail the whole run on it.
    """
    frames = []
    schemas, broken = _parquet_footers([f.path for f in files if f.format == "parquet" and fs.is_local(f.path)])
    broken |= _broken_gzip_tables(spark, files)
    broken |= _unopenable(f.path for f in files if f.format == "jsonl" and fs.is_local(f.path) and f.path not in broken)
    if broken:
        frames.append(spark.createDataFrame(
            [_skip_row(source_name(path), records.SKIP_FILE_ERROR, detail) for path, detail in sorted(broken.items())],
            ROW_SCHEMA).withColumn(TEXT_BYTES, F.lit(None).cast("long")))
    readable = [f for f in files if f.path not in broken]
    json_files = [f.path for f in readable if f.format == "jsonl"]
    arrays = [p for p in json_files if is_json_array(p)]
    groups = [("jsonl", [p for p in json_files if p not in arrays]), ("json array", arrays)]
    groups += [("parquet", paths) for paths in _parquet_groups([f.path for f in readable if f.format == "parquet"],
                                                               schemas)]
    for fmt, paths in groups:
        if not paths:
            continue
        read_as, originals = hadoop_safe(paths)
        table = _read_table(spark, fmt, read_as)
        source = source_names(F.input_file_name())
        if originals:  # the files read through links: their own names as the source
            back = F.create_map(*[F.lit(x) for pair in originals.items() for x in pair])
            source = F.coalesce(back[source], source)
        frames.append(_table_rows(table, source, columns, f"{fmt} input {paths[0]}"))
    return _union(frames)


def hadoop_safe(paths: list[str]) -> tuple[list[str], dict[str, str]]:
    """Paths Spark can read, and for each stand-in the file it stands for. Hadoop's local file
    system cannot take a file whose name holds ``:`` (``t:12:00.jsonl``: it parses the name of
    the checksum file beside it as a URI with a scheme); such a local file is read through a
    symlink of a plain name in a temporary directory of this process."""
    if not any(":" in os.path.basename(p) for p in paths if fs.is_local(p)):
        return paths, {}
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="quiltdetect-links-")
    atexit.register(shutil.rmtree, folder, True)
    read_as, originals = [], {}
    for i, path in enumerate(paths):
        if fs.is_local(path) and ":" in os.path.basename(path):
            link = os.path.join(folder, f"{i}-" + os.path.basename(path).replace(":", "_"))
            os.symlink(os.path.abspath(fs.local_path(path)), link)
            read_as.append(link)
            originals[link] = source_name(path) if path.startswith("file:") else path
        else:
            read_as.append(path)
    return read_as, originals


def _unopenable(paths: Iterator[str]) -> dict[str, str]:
    """Local files that cannot be opened now (gone, or unreadable, since they were listed), with
    why: Spark would fail the whole run on each."""
    found = {}
    for path in paths:
        try:
            with open(fs.local_path(path), "rb") as stream:
                stream.read(1)
        except OSError as exc:
            found[path] = f"{type(exc).__name__}: {exc}"
    return found


def is_json_array(path: str) -> bool:
    """A local ``.json`` file whose first non-blank character is ``[``: an array of objects (a
    common export), read as rows of that array rather than as JSON Lines, where it would be
    one malformed line per line (and no document)."""
    import gzip

    name = path.lower()
    if not fs.is_local(path) or not name.endswith((".json", ".json.gz")):
        return False
    try:
        opener = gzip.open if name.endswith(".gz") else open
        with opener(fs.local_path(path), "rb") as stream:
            head = stream.read(4096)
    except (OSError, EOFError):
        return False
    return head.lstrip(b" \t\r\n\xef\xbb\xbf")[:1] == b"["


def _parquet_footers(paths: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Each local Parquet file's schema (as a comparable key) or, for a file that cannot be
    read as Parquet (not Parquet at all, cut before its footer), why: one footer read per file,
    a few KB, on the driver."""
    import pyarrow.parquet as pq

    schemas, broken = {}, {}
    for path in paths:
        try:
            schema = pq.read_schema(fs.local_path(path))
        except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ... for a broken file
            broken[path] = f"not a readable Parquet file: {type(exc).__name__}: {str(exc)[:300]}"
        else:
            schemas[path] = str([(f.name, str(f.type)) for f in schema])
    return schemas, broken


def gzip_problem(path: str, chunk: int = 1 << 20) -> str | None:
    """Why a local gzip file does not decompress to its end, or None (read in constant memory)."""
    import gzip
    import zlib

    done = 0
    try:
        with gzip.open(fs.local_path(path), "rb") as stream:
            while block := stream.read(chunk):
                done += len(block)
    except (OSError, EOFError, zlib.error) as exc:
        return f"broken gzip stream after {done} decompressed bytes: {type(exc).__name__}: {str(exc)[:300]}"
    return None


def _broken_gzip_tables(spark: SparkSession, files: list[InputFile]) -> dict[str, str]:
    """The local gzip-compressed JSON Lines files that do not decompress to their end, with why:
    each is decompressed once by a Spark task, in parallel. Remote files are left to Spark
    (see docs/reliability.md)."""
    gz = [f.path for f in files if f.format == "jsonl" and fs.is_local(f.path) and f.path.endswith(".gz")]
    if not gz:
        return {}
    checked = spark.sparkContext.parallelize(gz, numSlices=len(gz)).map(lambda p: (p, gzip_problem(p))).collect()
    return {p: problem for p, problem in checked if problem is not None}


def _read_table(spark: SparkSession, fmt: str, paths: list[str]) -> DataFrame:
    """One group of tables as Spark reads it. Columns whose names differ only in case (id and
    ID) are a ConfigError: Spark cannot tell them apart, nor can we tell which one is meant.

    Malformed JSON lines are rows of nulls (missing_id skips); Spark keeps their text in a
    column named here so that a table's own ``_corrupt_record`` (Spark's default name, which
    must then be a string) is just another column.
    """
    literal = [fs.hadoop_literal(p) for p in paths]  # b[1].jsonl is that file, not a pattern matching b1.jsonl
    try:
        if fmt == "parquet":
            return spark.read.parquet(*literal)
        reader = spark.read.option("columnNameOfCorruptRecord", "_quiltdetect_malformed_line")
        if fmt == "json array":  # one JSON array of objects (pretty-printed or not), not JSON Lines
            reader = reader.option("multiLine", "true")
        return reader.json(literal)
    except AnalysisException as exc:
        if exc.getCondition() != "COLUMN_ALREADY_EXISTS":
            raise
        name = (exc.getMessageParameters() or {}).get("columnName", "")
        more = f" (or one of the {len(paths) - 1} other files read with it)" if len(paths) > 1 else ""
        raise ConfigError(f"{fmt} input {paths[0]}{more}: two columns named {name} "
                          "(names that differ only in case); rename one") from None


def _parquet_groups(paths: list[str], schemas: dict[str, str]) -> list[list[str]]:
    """Parquet files grouped by their schema, so one directory may mix column types (ids as
    numbers in one file, strings in another) without Spark failing on the conflict mid-run.

    Local files only (``schemas`` from ``_parquet_footers``); remote files are read as one
    group, with the schema Spark picks.
    """
    if not paths or not all(p in schemas for p in paths):
        return [paths]
    by_schema: dict[str, list[str]] = {}
    for path in paths:
        by_schema.setdefault(schemas[path], []).append(path)
    return [by_schema[k] for k in sorted(by_schema, key=lambda k: by_schema[k][0])]


def _union(frames: list[DataFrame]) -> DataFrame | None:
    if not frames:
        return None
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result


def read_rows(
    spark: SparkSession, files: list[InputFile], max_payload_bytes: int, *, hadoop_reader: bool = False,
    columns: dict[str, str] = DEFAULT_COLUMNS,
) -> DataFrame:
    """All rows (documents and skips) of all inputs, in ROW_SCHEMA (``columns``: see ``named_columns``),
    plus ``input_rank``, the rank of the input each row came from (``InputFile.rank``): the first
    key of ``TIE_BREAK``. The files of each input are read apart only when there are several."""
    ranks = sorted({f.rank for f in files})
    if len(ranks) > 1:
        parts = [_read_files(spark, [f for f in files if f.rank == r], max_payload_bytes, hadoop_reader, columns)
                 .withColumn(INPUT_RANK, F.lit(r)) for r in ranks]
        return _union(parts)
    return _read_files(spark, files, max_payload_bytes, hadoop_reader, columns).withColumn(INPUT_RANK, F.lit(0))


def _read_files(spark: SparkSession, files: list[InputFile], max_payload_bytes: int, hadoop_reader: bool,
                columns: dict[str, str]) -> DataFrame:
    archives = [f for f in files if f.format in ("warc", "wet")]
    tables = [f for f in files if f.format in ("parquet", "jsonl")]
    parts = [
        read_archives(spark, archives, max_payload_bytes, hadoop_reader=hadoop_reader) if archives else None,
        read_tables(spark, tables, columns) if tables else None,
    ]
    rows = _union([p for p in parts if p is not None])
    if rows is None:  # no file, or tables of no rows: an input of no documents
        return spark.createDataFrame([], ROW_SCHEMA).withColumn(TEXT_BYTES, F.lit(None).cast("long"))
    return rows


def keep_one_per_id(docs: DataFrame) -> DataFrame:
    """One row per doc_id: the one with the smallest ``TIE_BREAK`` (the earliest input's, then the
    smallest (source, offset, url, text)); a ``dup_rank`` > 1
    marks the others, which the caller counts as ``duplicate_doc_id`` skips.

    The rows are range-partitioned on doc_id, so the later sort by doc_id (``with_doc_keys``)
    needs no second shuffle of the texts.
    """
    order = Window.partitionBy("doc_id").orderBy(*[F.col(c).asc_nulls_last() for c in TIE_BREAK])
    return docs.repartitionByRange("doc_id").withColumn("dup_rank", F.row_number().over(order))


def with_doc_keys(docs: DataFrame) -> DataFrame:
    """Sort by doc_id and number the documents 0..n-1 in that order: ``doc_key``.

    Keys order like doc_ids, so "smallest doc_id" tie-breaks are done on longs, and they are
    dense and independent of partitioning (the rank of the doc_id), so the document table is
    the same bytes for any partitioning. Computed without collecting documents: a row's key is
    its index inside its sorted partition plus the number of rows in earlier partitions (one
    count per partition comes to the driver).
    """
    ordered = docs.orderBy("doc_id").withColumn("_row", F.monotonically_increasing_id())
    ordered = cut(ordered.withColumn("_part", F.shiftright("_row", 33)), TEXT_CACHE)
    sizes = sorted((r["_part"], r["n"]) for r in ordered.groupBy("_part").agg(F.count(F.lit(1)).alias("n")).collect())
    offsets, total = [], 0
    for part, n in sizes:
        offsets.append((part, total))
        total += n
    spark = docs.sparkSession
    offset_table = spark.createDataFrame(offsets or [(0, 0)], "_part long, _offset long")
    keyed = ordered.join(F.broadcast(offset_table), on="_part").withColumn(
        "doc_key", F.col("_offset") + F.col("_row").bitwiseAND(F.lit((1 << 33) - 1))
    )
    return keyed.drop("_row", "_part", "_offset")
