"""``quiltdetect ingest``: crawl files -> the document table, once, for every analysis to read.

Parsing WARC and HTML is the costliest step of a small analysis; a pipeline (the Airflow DAG)
ingests once and gives ``<output>/docs`` to every job as a Parquet ``--input``. A document table
read back keeps every field as ingested (source file and offset, HTML fields), so an analysis
of it gives the same results as an analysis of the crawl.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.sql import functions as F

from quiltdetect.common import fs
from quiltdetect.common.config import JobConfig
from quiltdetect.lifecycle import Job, JobResult, JobRun

TOP_HOSTS = 10  # hosts shown in the summary


@dataclass
class IngestConfig(JobConfig):
    """The shared input settings only: a crawl read once into <output>/docs, which every job
    then reads as `--input <output>/docs`."""

    def validate(self, *, need_io: bool = True) -> IngestConfig:
        self.validate_io(need_io=need_io)
        return self


class IngestJob(Job[IngestConfig]):
    """``quiltdetect ingest``: docs/ (and rejects/ with ``write_rejects``), nothing else."""

    name = state_name = "ingest"
    config_class = IngestConfig
    tables = ("docs",)

    def compute(self, run: JobRun) -> None:
        run.docs()

    def report(self, run: JobRun) -> dict[str, Any]:
        """The largest hosts and their page counts."""
        hosts = (run.out.read_table("docs").groupBy("host").agg(F.count(F.lit(1)).alias("n"))
                 .orderBy(F.desc("n"), "host").limit(TOP_HOSTS).collect())
        return {"hosts": [(r["host"] or "", int(r["n"])) for r in hosts]}

    def details(self, result: JobResult) -> list[str]:
        lines = [f"document table: {fs.join(result.output, 'docs')}"]
        if result.report["hosts"]:
            lines.append("largest hosts (pages):")
            lines += [f"  {n:>7}  {host}" for host, n in result.report["hosts"]]
        if result.metrics.stages.get("ingest", {}).get("documents", 1):  # no document: nothing to analyse
            lines.append(f"analyse it with: quiltdetect <job> --input {fs.join(result.output, 'docs')} --output DIR")
        return lines
