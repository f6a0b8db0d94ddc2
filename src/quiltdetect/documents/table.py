"""Build the document table (definitions §0) that every analysis starts from, and write it to docs/.

Columns: doc_key (long, unique, monotone in doc_id), doc_id, url, host, domain, ip, text,
title, headings, anchors (text, href), meta_keywords, meta_description, images, warc_date,
source, offset, decode_errors. One row per distinct doc_id.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from quiltdetect.common import fs
from quiltdetect.common.caching import SPILL, TEXT_CACHE, cut, keep, release
from quiltdetect.common.config import JobConfig
from quiltdetect.common.finished import FinishedRun
from quiltdetect.common.folder import OutputFolder, read_parquet
from quiltdetect.common.runstate import file_fingerprint, fingerprint
from quiltdetect.documents.inputs import InputFile, resolve_inputs
from quiltdetect.documents.keys import INPUT_RANK, doc_id_ranges, numbered_documents
from quiltdetect.documents.read import (
    DOC_COLUMNS,
    SKIP_DUPLICATE_ID,
    TEXT_BYTES,
    document_table_rows,
    frame_rows,
    keep_one_per_id,
    read_rows,
)
from quiltdetect.kernel.words import WORDS_DEFINITION

# docs/ in row groups of 16 MB: every analysis scans it, and a scan splits only at row-group
# boundaries, so small row groups let the text spread over all cores instead of a few tasks.
DOCS_WRITE_OPTIONS = {"parquet.block.size": str(16 << 20)}
REJECT_COLUMNS = ["source", "offset", "doc_id", "url", "skip_reason", "skip_detail"]


# What the stored state of a run was made under: how pages become documents, and what a word is
# (definitions §0). A run stores both (``_COMPLETE``'s ``definitions``); a change of either makes
# every stage recompute (it is part of the inputs' key) and an update refuse a previous run made
# under the other (``lifecycle.Job.open_previous``). "documents-2": charsets detected when a
# page's bytes do not fit its declaration (issue 61).
DOCUMENTS_DEFINITION = "documents-2"
DEFINITIONS = {"documents": DOCUMENTS_DEFINITION, "words": WORDS_DEFINITION}


def ingestion_key(spark: SparkSession | None, cfg: JobConfig, files: list[InputFile],
                  previous: FinishedRun | None = None) -> str:
    """Fingerprint of what the document table depends on: the input files and how they are read
    (and, for an update, the ``previous`` run it extends)."""
    key = {
        "files": file_fingerprint(spark, [f.path for f in files]),
        "formats": sorted({f.format for f in files}),
        "max_payload_bytes": cfg.max_payload_bytes,
        "write_rejects": cfg.write_rejects,
        "columns": cfg.columns(),
        "definitions": DEFINITIONS,
    }
    if len({f.rank for f in files}) > 1:  # the order of the inputs decides between records of one doc_id
        key["input_ranks"] = [f.rank for f in files]
    if previous is not None:
        key["previous"] = previous.identity()
    return fingerprint(key)


def document_table(spark: SparkSession, cfg: JobConfig, out: OutputFolder, counts: dict, *,
                   files: list[InputFile] | None = None, frame: DataFrame | None = None) -> DataFrame:
    """Read every input (``files``, or the caller's ``frame``) into the document table, write it
    to ``out``'s docs/ and read it back; the ingest stage's counts go into ``counts``.

    Reading it back pins the doc_keys (assigned once, in doc_id order) for every later stage.
    The run (``JobRun.docs``) reuses a docs/ table finished by an earlier run on the same inputs.
    """
    ingested = None
    if frame is None:
        files = files if files is not None else resolve_inputs(spark, cfg.inputs, cfg.input_format)
        ingested = ingested_docs(spark, cfg, files)
    if ingested is not None:
        return write_ingested(spark, cfg, out, ingested, len(files), counts)
    read = read_documents(spark, cfg, out, files=files, frame=frame, reread=True)
    ranges = doc_id_ranges(read.candidate_ids, read.candidates, read.candidate_bytes)
    table, written = out.write_counted(numbered_documents(read.candidate_rows, ranges, DOCS_TABLE_COLUMNS), "docs",
                                       {"lenient": lenient()}, DOCS_WRITE_OPTIONS)
    read.release()
    read.count_into(counts, ranges.documents, int(written["lenient"] or 0))
    return table


def lenient() -> Column:
    """The documents decoded leniently (docs/reliability.md: ``decoded_leniently``), counted as
    docs/ (or an update's segment of it) is written: counted with the records before it, every
    text's UTF-8 would be checked once more (``read.TEXT_BYTES``)."""
    return F.sum(F.col("decode_errors").cast("long"))


DOCS_TABLE_COLUMNS = [*DOC_COLUMNS, "doc_key"]  # docs/, as with_doc_keys writes it


def ingested_docs(spark: SparkSession, cfg: JobConfig, files: list[InputFile]) -> str | None:
    """The input, when it is the ``docs/`` table of a complete ``quiltdetect ingest`` run (as
    the Airflow DAG's analysis tasks read it, ``docs/deploy.md``), else None.

    Such a table is already what this stage would make of it: one row per doc_id, valid UTF-8,
    and doc_keys that are the ranks of the doc_ids (``with_doc_keys``). Read through the general
    path, every text would be persisted, shuffled to sort by doc_id and numbered again, to
    arrive at the same rows. Trusted like an update's ``--previous`` run: the run that published
    ``_COMPLETE`` wrote it. A table of any other origin, or with other columns, takes the
    general path.
    """
    if len(cfg.inputs) != 1 or not files or any(f.format != "parquet" for f in files):
        return None
    path = cfg.inputs[0].rstrip("/")
    parent, _, name = path.rpartition("/")
    if name != "docs" or not parent or any(c in path for c in "*?[{"):
        return None
    done = FinishedRun.at(spark, parent)
    if done is None or done.job != "ingest":
        return None
    if read_parquet(spark, path).columns != DOCS_TABLE_COLUMNS:
        return None
    return path


def write_ingested(spark: SparkSession, cfg: JobConfig, out: OutputFolder, source: str, n_files: int,
                   counts: dict, *, link: bool | None = None) -> DataFrame:
    """docs/ from an ingest run's table (``ingested_docs``), with the counts the general path
    gives such a table (every row a document, none skipped).

    ``link`` (default: both sides on local disks): the table's files themselves, hard-linked
    where one disk holds both (copied byte for byte otherwise); else read and written again by
    the executors, in no particular order and without a shuffle, as on s3a:// or hdfs://.
    """
    link = fs.is_local(source) and fs.is_local(out.path("docs")) if link is None else link
    rows = document_table_rows(read_parquet(spark, source), keep=("doc_key",))
    if link:
        table = out.concat_tables([source], "docs")
    else:
        table = out.write_table(rows.select(*DOCS_TABLE_COLUMNS), "docs", DOCS_WRITE_OPTIONS)
    if cfg.write_rejects:  # what the general path writes for such a table: no rejected record
        out.write_table(rows.where(F.lit(False)).select(*REJECT_COLUMNS), "rejects")
    row = table.agg(F.count(F.lit(1)), F.sum(F.col("decode_errors").cast("long"))).first()
    counts.update(files=n_files, records=int(row[0]), documents=int(row[0]), skipped={},
                  decoded_leniently=int(row[1] or 0), ingested_table=True)
    return table


# Local Parquet inputs of at least this many bytes in all (AQE's advisory partition size: one
# range of text) are read twice rather than kept (``rereadable``). Below it a checkpoint costs
# little, and an input of many small files (listed, their footers read, their schema groups
# planned and unioned) pays that again at every scan.
REREAD_MIN_BYTES = 64 << 20


def rereadable(files: list[InputFile] | None, min_bytes: int | None = None) -> bool:
    """Inputs that a second scan reads for less than a checkpoint of their rows costs (written
    once, read twice): local Parquet files of ``REREAD_MIN_BYTES`` or more, whose scan of the
    doc_ids needs no text but its length and validity. WARC/WET records are parsed in Python,
    JSON lines parsed whole, and remote files fetched again, so those are kept."""
    if not files or not all(f.format == "parquet" and fs.is_local(f.path) for f in files):
        return False
    limit = REREAD_MIN_BYTES if min_bytes is None else min_bytes
    return sum(os.path.getsize(fs.local_path(f.path)) for f in files) >= limit


@dataclass
class ReadDocuments:
    """The inputs read once: every record (``rows``, kept until ``release`` unless ``reread``),
    their doc_ids with what the counts need (``narrow``, kept) and the documents without doc_keys
    (``docs``: one row per doc_id), with what was skipped."""

    rows: DataFrame
    narrow: DataFrame  # (doc_id, skip_reason, decoded_as, bytes) of every record, kept
    docs: DataFrame
    files: int
    skipped: dict[str, int]
    candidates: int  # records that were not skipped, before keeping one per doc_id
    candidate_bytes: int  # their texts' UTF-8 bytes as read (``read.TEXT_BYTES``)
    decoded_as: dict[str, int] = field(default_factory=dict)  # pages decoded otherwise than declared

    @property
    def candidate_ids(self) -> DataFrame:
        """The doc_ids of the records not skipped, duplicates included."""
        return self.narrow.where(F.col("skip_reason").isNull()).select("doc_id")

    @property
    def candidate_rows(self) -> DataFrame:
        """The records not skipped, duplicate doc_ids included, in DOC_COLUMNS with the rank of
        their input (which of a doc_id's records is kept: ``keys.TIE_BREAK``)."""
        return self.rows.where(F.col("skip_reason").isNull()).select(*DOC_COLUMNS, INPUT_RANK)

    def release(self) -> None:
        """Let go of the kept records and doc_ids."""
        release(self.rows)
        release(self.narrow)

    def count_into(self, counts: dict, n_docs: int, lenient: int) -> None:
        """The ingest stage's counts, ``n_docs`` being the documents the table kept and
        ``lenient`` those of them decoded leniently (``lenient()``)."""
        skipped = dict(self.skipped)
        if self.candidates > n_docs:
            skipped[SKIP_DUPLICATE_ID] = skipped.get(SKIP_DUPLICATE_ID, 0) + self.candidates - n_docs
        counts["files"] = self.files
        counts["records"] = self.candidates + sum(self.skipped.values())
        counts["documents"] = n_docs
        counts["skipped"] = dict(sorted(skipped.items()))
        counts["decoded_leniently"] = lenient
        if self.decoded_as:  # pages whose bytes did not fit their declared charset, by what was read
            counts["charsets_corrected"] = self.decoded_as


def read_documents(
    spark: SparkSession, cfg: JobConfig, out: OutputFolder, *, files: list[InputFile] | None = None,
    frame: DataFrame | None = None, reread: bool = False,
) -> ReadDocuments:
    """Read every input (or the caller's DataFrame), count skips by reason, keep one record per
    doc_id and write rejects/ when asked: the document table before its doc_keys.

    ``reread``: the caller reads the records twice (the doc_ids, then the texts once), so local
    Parquet inputs are read again rather than kept (``rereadable``)."""
    if frame is not None:  # the Python API: the caller's DataFrame instead of input files
        files = []
        rows = frame_rows(frame, cfg.columns())
    else:
        if files is None:
            files = resolve_inputs(spark, cfg.inputs, cfg.input_format)
        rows = read_rows(spark, files, cfg.max_payload_bytes, hadoop_reader=cfg.hadoop_reader, columns=cfg.columns())
    # Every input is read once and kept (on disk: TEXT_CACHE): the counts below, the
    # range partitioning's sample of doc_ids and the shuffle would otherwise each read and
    # parse it again. A checkpoint, not a persisted frame (which costs more CPU: ``cut``). Local
    # Parquet files read twice cost less than the checkpoint's write and two reads, when the
    # caller needs only the doc_ids before the texts (``reread``).
    if not (reread and rereadable(files)):
        rows = cut(rows, TEXT_CACHE)
    # The doc_ids (and what the counts need) kept apart as they are counted: numbering the
    # documents reads them twice more (``keys.doc_id_ranges``), without reading the texts. The
    # texts' bytes as read (``TEXT_BYTES``): a Parquet input's scan checks no text's UTF-8 here.
    narrow = keep(rows.select("doc_id", "skip_reason", "decoded_as", F.col(TEXT_BYTES).alias("bytes")), SPILL)
    by_reason = (
        narrow.groupBy("skip_reason", "decoded_as")
        .agg(F.count(F.lit(1)).alias("n"), F.sum("bytes").alias("bytes"))
        .collect()
    )
    skipped: dict[str, int] = {}
    decoded_as: dict[str, int] = {}
    for r in by_reason:
        if r["skip_reason"] is not None:
            skipped[r["skip_reason"]] = skipped.get(r["skip_reason"], 0) + int(r["n"])
        elif r["decoded_as"] is not None:
            decoded_as[r["decoded_as"]] = int(r["n"])
    ranked = keep_one_per_id(rows.where(F.col("skip_reason").isNull()))
    if cfg.write_rejects:
        rejects = rows.where(F.col("skip_reason").isNotNull()).select(*REJECT_COLUMNS).unionByName(
            ranked.where(F.col("dup_rank") > 1).select(
                *REJECT_COLUMNS[:4], F.lit(SKIP_DUPLICATE_ID).alias("skip_reason"),
                F.lit("another record with this doc_id was kept").alias("skip_detail")))
        out.write_table(rejects.orderBy("source", "offset", "doc_id"), "rejects")
    return ReadDocuments(
        rows=rows,
        narrow=narrow,
        docs=ranked.where(F.col("dup_rank") == 1).select(*DOC_COLUMNS),
        files=len(files),
        skipped=skipped,
        decoded_as=dict(sorted(decoded_as.items())),
        candidates=sum(int(r["n"]) for r in by_reason if r["skip_reason"] is None),
        candidate_bytes=sum(int(r["bytes"] or 0) for r in by_reason if r["skip_reason"] is None),
    )
