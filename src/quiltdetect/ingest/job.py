"""``quiltdetect ingest``: crawl files -> the document table, once, for every analysis to read.

Parsing WARC and HTML is the costliest step of a small analysis; a pipeline (the Airflow DAG)
ingests once and gives ``<output>/docs`` to every job as a Parquet ``--input``. A document table
read back keeps every field as ingested (source file and offset, HTML fields), so an analysis
of it gives the same results as an analysis of the crawl.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from quiltdetect import lifecycle
from quiltdetect.common.config import JobConfig
from quiltdetect.common.metrics import RunMetrics


@dataclass
class IngestConfig(JobConfig):
    """The shared input settings only (conf/ingest.yaml)."""

    def validate(self) -> IngestConfig:
        self.validate_io()
        return self


@dataclass
class IngestRun:
    output: str
    metrics: RunMetrics
    hosts: list[tuple[str, int]]  # the largest hosts and their page counts


def run(spark: SparkSession, cfg: IngestConfig, top: int = 10) -> IngestRun:
    """Write docs/ (and rejects/ with ``write_rejects``), metrics.json, config.yaml, _COMPLETE."""
    cfg.validate()
    job = lifecycle.start(spark, cfg, "ingest")
    docs = spark.read.parquet(job.path("docs")) if job.complete_already else job.docs()
    if not job.complete_already:
        job.publish()
    hosts = (docs.groupBy("host").agg(F.count(F.lit(1)).alias("n")).orderBy(F.desc("n"), "host").limit(top).collect())
    return IngestRun(cfg.output, job.metrics, [(r["host"] or "", int(r["n"])) for r in hosts])


def format_summary(result: IngestRun) -> str:
    lines = [f"quiltdetect ingest -> {result.output}/docs", "stages:", *result.metrics.summary_lines()]
    if result.hosts:
        lines.append("largest hosts (pages):")
        lines += [f"  {n:>7}  {host}" for host, n in result.hosts]
    lines.append(f"analyse it with: quiltdetect <job> --input {result.output}/docs --output DIR")
    return "\n".join(lines)
