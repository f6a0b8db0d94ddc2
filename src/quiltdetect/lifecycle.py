"""The life of one job run, shared by every analysis: claim the output, ingest, publish.

Every job follows the same steps (see ``common/runstate.py`` for the layout on disk):

1. ``start``: check ``--output``, resolve the inputs, fingerprint them, and claim the output
   directory (or find that this exact configuration already completed there);
2. ``docs``: the document table, reused from an earlier run on the same inputs;
3. ``write``: every result table goes to a temporary directory and is renamed into place;
4. ``publish``: metrics.json, config.yaml, then ``_COMPLETE`` last.

A run killed at any point leaves no ``_COMPLETE``; a rerun resumes from its finished stages.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from quiltdetect.common import fs
from quiltdetect.common.config import ConfigError, JobConfig, to_yaml
from quiltdetect.common.metrics import RunMetrics
from quiltdetect.common.runstate import COMPLETE, RunState, fingerprint
from quiltdetect.ingest.read import InputFile, resolve_inputs
from quiltdetect.ingest.table import document_table, ingestion_key

# Settings that never change a result: where it goes, how Spark runs, how much is displayed.
NOT_SHAPING = frozenset({"output", "overwrite", "spark", "top", "hadoop_reader", "inputs"})


def config_key(cfg: JobConfig, extra: Any = None) -> str:
    """Fingerprint of the settings that shape the results (the inputs are fingerprinted apart)."""
    shaping = {k: v for k, v in dataclasses.asdict(cfg).items() if k not in NOT_SHAPING}
    return fingerprint([shaping, extra])


@dataclass
class JobRun:
    """One run of one job into one output directory."""

    spark: SparkSession
    cfg: JobConfig
    state: RunState
    files: list[InputFile]
    metrics: RunMetrics
    key: str
    done: dict[str, Any] | None  # the _COMPLETE record when this configuration already completed

    @property
    def complete_already(self) -> bool:
        return self.done is not None

    def docs(self) -> DataFrame:
        """The document table (docs/), reused when an earlier run ingested the same inputs."""
        return document_table(self.spark, self.cfg, self.metrics, state=self.state, files=self.files)

    def path(self, *parts: str) -> str:
        return fs.join(self.cfg.output, *parts)

    def write(self, frame: DataFrame, table: str) -> DataFrame:
        """Write a result table atomically (temporary directory, then rename) and read it back."""
        self.state.write_table(frame, table)
        return self.spark.read.parquet(self.path(table))

    def publish(self, extra: dict[str, Any] | None = None) -> None:
        """metrics.json and config.yaml, then _COMPLETE last: the output is now complete."""
        metrics_json = self.metrics.to_json(extra)
        fs.write_text(self.spark, self.path("metrics.json"), metrics_json)
        fs.write_text(self.spark, self.path("config.yaml"), to_yaml(self.cfg))
        self.state.complete(self.key, dataclasses.asdict(self.cfg), json.loads(metrics_json))


def start(spark: SparkSession, cfg: JobConfig, job: str, *, extra_key: Any = None,
          report_complete: bool = True) -> JobRun:
    """Claim ``cfg.output`` for ``job``: refuse foreign outputs, clear with ``--overwrite``.

    ``cfg.validate()`` must have run. When the output already holds a complete run of this job
    with the same inputs and settings, the returned run has ``done`` set and the caller reports
    that run's results instead of computing them again (``--overwrite`` recomputes). A job that
    cannot report from its written outputs passes ``report_complete=False``: it recomputes, with
    the document table still reused.
    """
    fs.check_output(spark, cfg.output, overwrite=cfg.overwrite)
    files = resolve_inputs(spark, cfg.inputs, cfg.input_format)
    state = RunState(spark, cfg.output, job, ingestion_key(spark, cfg, files))
    key = config_key(cfg, extra_key)
    done = None if cfg.overwrite or not report_complete else state.completed(key)
    metrics = RunMetrics(job=job)
    if done is None:
        state.begin(overwrite=cfg.overwrite)
    else:
        metrics.stages = dict(done.get("metrics", {}).get("stages", {}))
        metrics.stages["resume"] = {"complete_already": True, "run_id": done.get("run_id"), "seconds": 0.0}
    return JobRun(spark, cfg, state, files, metrics, key, done)


def require_complete(spark: SparkSession, output: str, what: str) -> None:
    """Refuse to read an output that a run has not published (no _COMPLETE marker)."""
    if not fs.exists(spark, fs.join(output, COMPLETE)):
        raise ConfigError(f"{what} {output} is not a complete quiltdetect output (no {COMPLETE}); "
                          "rerun the job that writes it, or point to a finished output")
