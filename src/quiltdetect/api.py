"""The Python API: every analysis on a DataFrame of documents, on the caller's SparkSession.

Each function runs the same job as the console command (``lifecycle.Job.run``, one code path)
with the caller's DataFrame as its input, and returns the job's result tables as DataFrames read
back from its output. Settings are the job's own, by the names of its config class and with its
defaults (``QuiltConfig``, ``NearDupConfig``, ...); ``id_col``, ``url_col``, ``text_col`` and
``ip_col`` name the DataFrame's columns::

    from quiltdetect import find_quilts

    quilts = find_quilts(pages, k=5, theta=0.5, id_col="warc_record_id", text_col="content")
    quilts.select("url", "patchfrac", "sources.url").show()

The analyses run when called (the figure-5 dataflow writes its intermediate tables, so it cannot
stay a lazy plan); what they return is read lazily from ``output``. Without ``output`` a local
session writes to a fresh temporary directory; on a cluster give a directory every executor can
write (``hdfs://``, ``s3a://``, ...).
"""

from __future__ import annotations

import tempfile
from typing import Any, NamedTuple

from pyspark.sql import DataFrame

from quiltdetect.common.config import ConfigError, merge_settings
from quiltdetect.common.folder import OutputFolder
from quiltdetect.lifecycle import Job, JobResult

__all__ = ["NearDuplicates", "ReuseDetection", "detect_reuse", "find_near_duplicates", "find_quilts",
           "mwo_pairs", "popular_phrases", "run_on"]


def run_on(job: type[Job], docs: DataFrame, output: str | None = None, **settings: Any) -> JobResult:
    """Run ``job`` (a ``lifecycle.Job`` class) on the documents of ``docs`` into ``output``.

    ``settings`` are fields of the job's config class; unknown names fail with the known ones.
    An ``output`` that holds another run is refused unless ``overwrite=True``.
    """
    if docs.isStreaming:
        raise ConfigError("a streaming DataFrame cannot be analysed as it arrives: write it to a table first "
                          "(writeStream ... .toTable or .parquet) and pass spark.read of that table")
    spark = docs.sparkSession
    if output is None:
        if not spark.sparkContext.master.startswith("local"):
            raise ConfigError("output=: give a directory every executor can write (hdfs://, s3a://, ...); "
                              "a temporary directory is only chosen for a local session")
        output = tempfile.mkdtemp(prefix="quiltdetect-")
        settings = {**settings, "overwrite": True}
    cfg = merge_settings(job.config_class, {"top": 0} if "top" in _fields(job) else {}, settings,
                         {"output": output})
    return job.run(spark, cfg, frame=docs)


def _fields(job: type[Job]) -> set[str]:
    import dataclasses

    return {f.name for f in dataclasses.fields(job.config_class)}


def find_quilts(docs: DataFrame, *, output: str | None = None, **settings: Any) -> DataFrame:
    """The (k, m, c, θ)-quilted documents of ``docs`` with their sources (definitions §1).

    Columns as ``quiltdetect quilts`` writes ``quilts/``: doc_id, url, n_grams, n_patch_grams,
    patchfrac, sources (url, doc_id, covered, shared, in pick order), attributed,
    n_attributed_sources. Settings: ``QuiltConfig`` (k=5, m=50, c=4, theta=0.5, foreign="none", ...).
    """
    from quiltdetect.quilts.job import QuiltsJob

    return _read(run_on(QuiltsJob, docs, output, **settings), docs, "quilts")[0]


class NearDuplicates(NamedTuple):
    """The near-duplicate tables: pairs, clusters, kept (the document table without the dropped
    pages) and duplicate_of (each dropped page, the kept page it near-duplicates, and why)."""

    pairs: DataFrame
    clusters: DataFrame
    kept: DataFrame
    duplicate_of: DataFrame


def find_near_duplicates(docs: DataFrame, *, output: str | None = None, **settings: Any) -> NearDuplicates:
    """Near-duplicate pairs and clusters of ``docs`` (definitions §2; Broder, Charikar, Henzinger),
    with the deduplicated corpus. Settings: ``NearDupConfig`` (algorithm="lsh", k=4, ...);
    ``previous="RUN"`` adds ``docs`` to a finished run (an update: docs/neardup.md)."""
    from quiltdetect.neardup.job import NearDupJob

    return NearDuplicates(*_read(run_on(NearDupJob, docs, output, **settings), docs,
                                 "pairs", "clusters", "kept", "duplicate_of"))


def popular_phrases(docs: DataFrame, *, output: str | None = None, **settings: Any) -> DataFrame:
    """The popular phrases of ``docs``, ranked (definitions §3; Fetterly, Manasse, Najork 2005).
    The job's other tables (covering sets, host statistics) sit beside it in ``output``.
    Settings: ``PhrasesConfig``."""
    from quiltdetect.phrases.job import PhrasesJob

    return _read(run_on(PhrasesJob, docs, output, **settings), docs, "popular_phrases")[0]


class ReuseDetection(NamedTuple):
    """Content reuse found by chunk hashing: the labeled set, pages with their ``contains``
    score and ``partial_target`` flag, and neighborhoods with their ``badness`` and ``bad`` flag."""

    labeled: DataFrame
    pages: DataFrame
    neighborhoods: DataFrame


def detect_reuse(docs: DataFrame, *, output: str | None = None, **settings: Any) -> ReuseDetection:
    """Chunk-level content reuse and bad neighborhoods in ``docs`` (definitions §4; Ardi &
    Heidemann 2014): blind discovery, or ``labeled=`` a discovery output or a corpus.
    Settings: ``ReuseConfig``."""
    from quiltdetect.reuse.job import DetectJob

    return ReuseDetection(*_read(run_on(DetectJob, docs, output, **settings), docs,
                                 "labeled", "pages", "neighborhoods"))


def mwo_pairs(docs: DataFrame, *, output: str | None = None, **settings: Any) -> DataFrame:
    """All document pairs whose minimum weight overlap is at least ``t`` (definitions §5; Das,
    Mathew, Vijayaraghavan): doc_id_a, doc_id_b, mwo. The output is also an index for
    ``quiltdetect mwo query``. Settings: ``MwoConfig``."""
    from quiltdetect.mwo.job import MwoJoinJob

    return _read(run_on(MwoJoinJob, docs, output, **settings), docs, "pairs")[0]


def _read(result: JobResult, docs: DataFrame, *names: str) -> list[DataFrame]:
    folder = OutputFolder(docs.sparkSession, result.output)
    return [folder.read_table(name) for name in names]
