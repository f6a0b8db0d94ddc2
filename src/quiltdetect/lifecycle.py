"""The job contract: what every analysis declares, and the life of one run, written once.

An analysis is a ``Job`` subclass (see ``docs/architecture.md``): its ``name``, its config class
(the single source of its defaults), the ``tables`` it writes, and ``compute(run)``. Every run
of every job follows the same steps (``common/runstate.py`` gives the layout on disk):

1. ``start``: check ``--output``, resolve the inputs, fingerprint them, and claim the output
   directory (or find that this exact configuration already completed there);
2. ``compute``: the job's own work. ``run.docs()`` gives the document table, reused from an
   earlier run on the same inputs; ``run.out`` writes tables atomically (a scratch directory,
   then a rename), text, bytes and plots, locally or to any Hadoop URI;
3. ``publish``: metrics.json, config.yaml, then ``_COMPLETE`` last;
4. ``report``: the rows the summary shows, read back from the output.

A run killed at any point leaves no ``_COMPLETE``; a rerun resumes from its finished stages, and
a rerun of a configuration that already completed reports it without computing again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, StringType

from quiltdetect.common import fs
from quiltdetect.common.caching import released
from quiltdetect.common.config import ConfigError, JobConfig, flag_of, to_yaml
from quiltdetect.common.finished import FinishedRun, is_complete, resolve_previous
from quiltdetect.common.folder import OutputFolder
from quiltdetect.common.layout import COMPLETE, work_table
from quiltdetect.common.metrics import RunMetrics
from quiltdetect.common.ownfiles import is_own
from quiltdetect.common.paths import input_paths
from quiltdetect.common.runstate import RunState, fingerprint
from quiltdetect.common.shuffle import SHUFFLE_PARTITIONS, configured_partitions, sized_for_input
from quiltdetect.documents.inputs import InputFile, resolve_inputs
from quiltdetect.documents.read import quoted, refuse_ambiguous_columns
from quiltdetect.documents.table import DEFINITIONS, document_table, ingestion_key

log = logging.getLogger(__name__)

# Settings that never change a result: where it goes, how Spark runs, how much is displayed.
NOT_SHAPING = frozenset({"output", "overwrite", "spark", "top", "hadoop_reader", "inputs"})


T = TypeVar("T")


def config_key(cfg: JobConfig, extra: Any = None) -> str:
    """Fingerprint of the settings that shape the results (the inputs are fingerprinted apart)."""
    shaping = {k: v for k, v in dataclasses.asdict(cfg).items() if k not in NOT_SHAPING}
    return fingerprint([shaping, extra])


@dataclass
class JobRun:
    """One run of one job into one output directory."""

    spark: SparkSession
    job: Job  # which holds the configuration (``cfg``): one holder
    state: RunState
    files: list[InputFile]
    metrics: RunMetrics
    key: str
    done: dict[str, Any] | None  # the _COMPLETE record when this configuration already completed
    frame: DataFrame | None = None  # the documents, when a Python caller gave a DataFrame
    frame_bytes: int = 0  # the bytes of the frame's text (UTF-8)
    previous: FinishedRun | None = None  # the finished run an update extends (``--previous``), checked

    @property
    def cfg(self) -> JobConfig:
        """The run's configuration: its job's."""
        return self.job.cfg

    @property
    def complete_already(self) -> bool:
        return self.done is not None

    def docs(self) -> DataFrame:
        """The document table (docs/), reused when an earlier run ingested the same inputs."""
        tables = ["docs", "rejects"] if self.cfg.write_rejects else ["docs"]
        return self.stage("ingest", "read inputs, parse HTML, write docs/",
                          lambda counts: document_table(self.spark, self.cfg, self.out, counts, files=self.files,
                                                        frame=self.frame),
                          key=self.state.inputs_key, tables=tables, reuse=lambda done: self.out.read_table("docs"))

    def stage(self, name: str, description: str, build: Callable[[dict[str, Any]], T], *,
              key: str | None = None, tables: Sequence[str] = (), reuse: Callable[[dict[str, Any]], T] | None = None,
              marker: str | None = None, needs: Sequence[str] = ()) -> T:
        """One stage of the run: timed, its Spark jobs named ``<job>: <name> - <description>``,
        its counts (``build`` fills the dict it is given) in metrics.json and the summary.

        With a ``key``, the stage is reusable: when an earlier run into this output finished
        the stage ``marker`` (default ``name``) with the same key, its ``tables`` still in
        place and its counts holding ``needs``, the stage is not built again: ``reuse(counts)``
        reads its result back and the counts say ``reused``. Else ``build`` runs, and the stage
        is recorded as finished (with ``tables``) once they are written. Every job reuses its
        stages through here (``tests/test_architecture.py``)."""
        with self.metrics.stage(self.spark, name, description) as counts:
            if key is not None and reuse is not None:
                done = self.state.stage(marker or name, key)
                if done is not None and all(n in done for n in needs):
                    counts.update(done)
                    counts["reused"] = True
                    return reuse(done)
            result = build(counts)
            if key is not None:
                self.state.finish_stage(marker or name, key, list(tables),
                                        {k: v for k, v in counts.items() if k != "seconds"})
        return result

    @property
    def out(self) -> OutputFolder:
        """The output folder: tables (written atomically), text, bytes and plots."""
        return self.state.out

    def path(self, *parts: str) -> str:
        return self.out.path(*parts)

    def publish(self, extra: dict[str, Any] | None = None) -> None:
        """metrics.json and config.yaml, then _COMPLETE last: the output is now complete."""
        metrics_json = self.metrics.to_json(extra)
        self.out.write_text("metrics.json", metrics_json)
        self.out.write_text("config.yaml", to_yaml(self.cfg))
        self.state.complete(self.key, dataclasses.asdict(self.cfg), json.loads(metrics_json), DEFINITIONS)


def start(spark: SparkSession, job: Job, *, frame: DataFrame | None = None) -> JobRun:
    """Claim ``job.cfg.output`` for the job: refuse foreign outputs, clear with ``--overwrite``.

    ``job.validate()`` must have run. When the output already holds a complete run of this job
    with the same inputs and settings (and ``job.key()``), the returned run has ``done`` set and
    the caller reports that run's results instead of computing them again (``--overwrite``
    recomputes). A job that cannot report from its written outputs (``report_complete = False``)
    recomputes, with the document table still reused. With ``frame`` (a DataFrame of documents,
    from the Python API) the inputs are that DataFrame: its run is never taken for another's.
    """
    cfg, name, report_complete = job.cfg, job.state_name, job.report_complete
    fs.check_names(spark, [cfg.output, *input_paths(cfg)])
    fs.check_output(spark, cfg.output, overwrite=cfg.overwrite, inputs=input_paths(cfg))
    previous = job.previous_run(spark)
    frame_bytes = 0
    if frame is not None:
        refuse_ambiguous_columns(frame, cfg.columns())
        files: list[InputFile] = []
        frame_key, frame_bytes = frame_figures(frame, cfg.columns())
        inputs_key = fingerprint(["dataframe", frame_key, DEFINITIONS])
    else:
        files = resolve_inputs(spark, cfg.inputs, cfg.input_format)
        fs.check_names(spark, [f.path for f in files])
        inputs_key = ingestion_key(spark, cfg, files, previous)
    state = RunState(spark, cfg.output, name, inputs_key)
    key = config_key(cfg, job.key())
    done = None if cfg.overwrite or not report_complete else state.completed(key)
    metrics = RunMetrics(job=name)
    if frame is None:
        metrics.inputs = files.described()
        metrics.skipped_files = [{"path": path, "reason": reason, **({"own": True} if is_own(path, reason) else {})}
                                 for path, reason in files.skipped]
    if done is None:
        state.begin(overwrite=cfg.overwrite)
    else:
        metrics.stages = dict(done.get("metrics", {}).get("stages", {}))
        metrics.stages["resume"] = {"complete_already": True, "run_id": done.get("run_id"), "seconds": 0.0}
    return JobRun(spark, job, state, files, metrics, key, done, frame, frame_bytes, previous)


def frame_figures(frame: DataFrame, columns: dict[str, str]) -> tuple[str, int]:
    """What identifies a caller's DataFrame as an input, and the bytes of its text (UTF-8; the
    run's shuffle partitions are sized by them, ``common.shuffle``).

    The key is its columns and a checksum of its rows (their count, and the sum and xor of a
    64-bit hash of each row's id, url, text and ip; in any order, on any partitioning). The same
    rows give the same key, so a second call with the same frame and settings reports the
    finished run, and other rows are refused like other input files. One pass over the frame, a
    Spark job of its own."""
    present = [name for name in columns.values() if name in frame.columns]
    row_hash = F.xxhash64(*[F.col(quoted(name)) for name in present]) if present else F.lit(0)
    text = [f for f in frame.schema.fields if f.name == columns["text"]]
    text_bytes = (F.sum(F.octet_length(F.col(quoted(text[0].name))))
                  if text and isinstance(text[0].dataType, (StringType, BinaryType)) else F.lit(0))
    *row, size = frame.agg(F.count(F.lit(1)), F.sum(row_hash.cast("decimal(38,0)")), F.bit_xor(row_hash),
                           text_bytes).first()
    return fingerprint([present, [str(v) for v in row]]), int(size or 0)


def require_complete(spark: SparkSession, output: str, what: str) -> None:
    """Refuse to read an output that a run has not published (no _COMPLETE marker)."""
    if not is_complete(spark, output):
        raise ConfigError(f"{what} {output} is not a complete quiltdetect output (no {COMPLETE}); "
                          "rerun the job that writes it, or point to a finished output")


C = TypeVar("C", bound=JobConfig)


@dataclass
class JobResult:
    """What every run returns: the job that ran, where it wrote, its metrics, and ``report``,
    the rows its summary shows (read back from the output, so a completed run reports alike)."""

    job: Job
    output: str
    metrics: RunMetrics
    report: dict[str, Any]
    outputs: dict[str, str]  # each result table's name -> its path

    def summary(self) -> str:
        """The end-of-run summary the console command prints."""
        return self.job.summary(self)


class Job(ABC, Generic[C]):
    """One analysis. A subclass declares what it is and does ``compute``; ``run`` is the life cycle.

    ``name`` is its command (``"reuse detect"``), ``state_name`` the job recorded in the output
    (a rerun of another job into the same output is refused), ``config_class`` holds every
    default, ``tables`` names the result tables it writes beside ``docs/`` (documentation and a
    test read it). ``report_complete = False`` for a job whose summary cannot be read back from
    its output: it recomputes on a rerun (the document table is still reused).
    """

    name: ClassVar[str]
    state_name: ClassVar[str]
    config_class: ClassVar[type[JobConfig]]
    tables: ClassVar[tuple[str, ...]] = ()
    report_complete: ClassVar[bool] = True
    # An update (``--previous``, a job whose config has ``previous``): the settings it must share
    # with the run it extends, what of that run's kept state depends on them (for the refusal),
    # and the state's name in messages; ``update_state`` names the state tables it reads.
    update_settings: ClassVar[tuple[str, ...]] = ()
    update_settings_why: ClassVar[str] = ""
    update_state_what: ClassVar[str] = ""

    def __init__(self, cfg: C) -> None:
        self.cfg = cfg

    def update_state(self) -> tuple[str, ...]:
        """The state (``runstate.work_table`` names) an update reads of the run it extends."""
        return ()

    def previous_run(self, spark: SparkSession | None) -> FinishedRun | None:
        """The finished run this run extends: ``--previous`` resolved (a glob: its last complete
        match) and checked (``open_previous``); None for a fresh run, or when a glob matches no
        complete run yet (then the run starts afresh, and the next one extends it)."""
        given = getattr(self.cfg, "previous", "")
        if not given:
            return None
        path = resolve_previous(spark, given, self.cfg.output)
        if not path:
            log.warning("--previous %s matches no complete run: starting afresh", given)
            return None
        return self.open_previous(spark, path)

    def open_previous(self, spark: SparkSession | None, path: str) -> FinishedRun:
        """The finished run at ``path`` when an update of this job with these settings can extend
        it: complete, of this job, made under this version's definitions (else its stored state
        would not match), with the same ``update_settings`` and every ``update_state`` table;
        else a ConfigError that says what to give."""
        done = FinishedRun.at(spark, path)
        if done is None:
            raise ConfigError(f"--previous {path} is not a finished quiltdetect output (no {COMPLETE}); "
                              f"give the --output of a {self.state_name} run that completed")
        if done.job != self.state_name:
            raise ConfigError(f"--previous {path} holds a {done.job} run; an update extends a {self.state_name} run")
        if done.definitions != DEFINITIONS:
            changed = [k for k in DEFINITIONS if done.definitions.get(k) != DEFINITIONS[k]]
            raise ConfigError(
                f"--previous {path} was made under an older definition of {' and '.join(changed)} "
                f"({', '.join(f'{k} {done.definitions.get(k, 1)!s}' for k in changed)}; this version uses "
                f"{', '.join(DEFINITIONS[k] for k in changed)}: docs/definitions.md §0), so its stored "
                f"{self.update_state_what} state does not match; run once without --previous to start afresh, "
                "then update that run")
        for name in self.update_settings:
            mine, theirs = getattr(self.cfg, name), done.config.get(name)
            if theirs != mine:
                option = flag_of(type(self.cfg), name)
                raise ConfigError(
                    f"{option} is {mine!r} but the previous run ({path}) used {theirs!r}: an update keeps "
                    f"{self.update_settings_why}; give the previous run's value, or run without --previous to "
                    "start afresh")
        for name in self.update_state():
            if not (done.has_table(name) or name.endswith(".json") and done.text(name) is not None):
                raise ConfigError(f"--previous {path} has no {self.update_state_what} state ({work_table(name)}); "
                                  "it was made by an older version: run afresh once, then update that run")
        return done

    def validate(self, *, need_inputs: bool = True) -> None:
        """Check the configuration (before any output is touched); ``need_inputs=False`` when
        the documents come as a DataFrame."""
        self.cfg.validate(need_io=need_inputs)

    def key(self) -> Any:
        """What else shapes the results besides the settings (fingerprinted with them)."""
        return None

    def parameters(self) -> dict[str, Any]:
        """The settings that shape the results, written to metrics.json as ``parameters``."""
        base = {f.name for f in dataclasses.fields(JobConfig)}
        return {k: v for k, v in dataclasses.asdict(self.cfg).items() if k not in base and k not in NOT_SHAPING}

    def begin(self, run: JobRun) -> None:
        """Called once the output is claimed, whether or not the run computes (e.g. extra metrics)."""

    @abstractmethod
    def compute(self, run: JobRun) -> dict[str, Any] | None:
        """The analysis: write the result tables. Returns what metrics.json adds (optional)."""

    def report(self, run: JobRun) -> dict[str, Any]:
        """The rows the summary shows, read from the written output."""
        return {}

    def headline(self, result: JobResult) -> str:
        """The first summary line after ``quiltdetect``: the job and its main settings."""
        return self.name

    def details(self, result: JobResult) -> list[str]:
        """The summary lines after the stages (top rows of the results)."""
        return []

    def outputs(self) -> tuple[str, ...]:
        """The tables this run writes, the document table first (``tables`` plus optional ones)."""
        return tuple(dict.fromkeys(("docs", *(("rejects",) if self.cfg.write_rejects else ()), *self.tables)))

    def summary(self, result: JobResult) -> str:
        lines = [f"quiltdetect {self.headline(result)} -> {result.output}", *result.metrics.input_lines(), "stages:",
                 *result.metrics.summary_lines(), *self.details(result),
                 f"outputs in {result.output}: " + ", ".join(f"{name}/" for name in result.outputs)
                 + ", metrics.json, config.yaml"]
        return "\n".join(lines)

    @classmethod
    def run(cls, spark: SparkSession, cfg: C, *, frame: DataFrame | None = None) -> JobResult:
        """Run the job into ``cfg.output``: validate, claim, compute (or resume), publish, report.

        The documents are ``cfg.inputs`` (files), or ``frame``, a DataFrame of the caller's: on
        a session that does not set its shuffle partitions, the run sizes them for the frame's
        text and leaves the session as it was (``common.shuffle``).
        """
        job = cls(cfg)
        job.validate(need_inputs=frame is None)
        if not cfg.output:
            raise ConfigError("no output: give --output DIR")
        most = configured_partitions(cfg.spark) if frame is not None else 0
        # released: what the run persisted is unpersisted when it ends (common/caching.py)
        with released(), contextlib.ExitStack() as session:
            run = start(spark, job, frame=frame)
            try:
                if frame is not None:  # config.yaml says what the run used
                    partitions = session.enter_context(sized_for_input(spark, most, run.frame_bytes))
                    cfg.spark = {**cfg.spark, SHUFFLE_PARTITIONS: partitions}
                run.metrics.job = cls.name
                job.begin(run)
                outputs = {name: run.path(name) for name in job.outputs()}
                if not run.complete_already:
                    try:
                        extra = job.compute(run) or {}
                    except Exception:
                        run.state.check_owner()  # taken over by another run: say so, not what broke
                        raise
                    run.publish({"parameters": {**job.parameters(), **extra.pop("parameters", {})},
                                 "outputs": outputs, **extra})
                spark.sparkContext.setJobDescription(f"{cls.name}: report - the rows the summary shows")
                try:
                    report = job.report(run)
                finally:
                    spark.sparkContext.setJobDescription(None)
            finally:
                run.state.release()  # the output's lock: another run may write it from now on
        return JobResult(job, cfg.output, run.metrics, report, outputs)
