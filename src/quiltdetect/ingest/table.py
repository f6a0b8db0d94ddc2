"""Build the document table (SPEC §0) that every analysis starts from, and write it to docs/.

Columns: doc_key (long, unique, monotone in doc_id), doc_id, url, host, domain, ip, text,
title, headings, anchors (text, href), meta_keywords, meta_description, images, warc_date,
source, offset, decode_errors. One row per distinct doc_id.
"""

from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from quiltdetect.common import fs
from quiltdetect.common.config import JobConfig
from quiltdetect.common.metrics import RunMetrics
from quiltdetect.ingest.read import (
    DOC_COLUMNS,
    SKIP_DUPLICATE_ID,
    keep_one_per_id,
    read_rows,
    resolve_inputs,
    with_doc_keys,
)

SPILL = StorageLevel.MEMORY_AND_DISK


def document_table(spark: SparkSession, cfg: JobConfig, metrics: RunMetrics) -> DataFrame:
    """Read every input into the document table, write it to docs/ and read it back.

    Reading it back pins the doc_keys (assigned once, in doc_id order) for every later stage.
    """
    docs_path = fs.join(cfg.output, "docs")
    with metrics.stage(spark, "ingest", "read inputs, parse HTML, write docs/") as counts:
        files = resolve_inputs(spark, cfg.inputs, cfg.input_format)
        counts["files"] = len(files)
        rows = read_rows(spark, files, cfg.max_payload_bytes, hadoop_reader=cfg.hadoop_reader).persist(SPILL)
        by_reason = (
            rows.groupBy("skip_reason")
            .agg(F.count(F.lit(1)).alias("n"), F.sum(F.col("decode_errors").cast("long")).alias("lenient"))
            .collect()
        )
        skipped = {r["skip_reason"]: int(r["n"]) for r in by_reason if r["skip_reason"] is not None}
        candidates = sum(int(r["n"]) for r in by_reason if r["skip_reason"] is None)
        docs = keep_one_per_id(rows.where(F.col("skip_reason").isNull()))
        docs = with_doc_keys(docs.where(F.col("dup_rank") == 1).select(*DOC_COLUMNS))
        docs.write.mode("overwrite").parquet(docs_path)
        rows.unpersist()
        table = spark.read.parquet(docs_path)
        n_docs = table.count()
        if candidates > n_docs:
            skipped[SKIP_DUPLICATE_ID] = candidates - n_docs
        counts["records"] = candidates + sum(skipped.values())
        counts["documents"] = n_docs
        counts["skipped"] = dict(sorted(skipped.items()))
        counts["decoded_leniently"] = sum(int(r["lenient"] or 0) for r in by_reason if r["skip_reason"] is None)
    return table
