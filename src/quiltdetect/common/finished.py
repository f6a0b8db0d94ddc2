"""A finished run, as another run reads it: the one reader of a complete output's layout.

An update (``--previous``) extends a finished run, an analysis of an ingest run's ``docs/``
trusts the run that wrote it, and ``mwo query`` and the review app read a finished index or
run. They all read it through ``FinishedRun``: its ``_COMPLETE`` record (job, configuration,
inputs key, run id, the definitions it was made under, its metrics), its stage markers
(``_quiltdetect/stages``) and the state tables it keeps for the next update
(``_quiltdetect/work``, see ``common.layout``). Which settings must match and
which state an update needs are the job's to declare (``lifecycle.Job``); checking them is
``lifecycle``'s.
"""

from __future__ import annotations

import glob
import json
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

from quiltdetect.common import fs
from quiltdetect.common.layout import COMPLETE, STAGES_DIR, work_table
from quiltdetect.common.runstate import path_part


@dataclass(frozen=True)
class FinishedRun:
    """A complete output at ``path`` and its ``_COMPLETE`` record (``record``)."""

    spark: SparkSession | None
    path: str
    record: dict[str, Any]

    @classmethod
    def at(cls, spark: SparkSession | None, path: str) -> FinishedRun | None:
        """The finished run at ``path``, or None when it holds none (no readable ``_COMPLETE``)."""
        text = fs.read_text(spark, fs.join(path, COMPLETE))
        try:
            record = json.loads(text) if text is not None else None
        except ValueError:
            return None
        return cls(spark, path, record) if isinstance(record, dict) else None

    @property
    def job(self) -> str | None:
        """The job that made it (``Job.state_name``)."""
        return self.record.get("job")

    @property
    def config(self) -> dict[str, Any]:
        """Its resolved configuration, as config.yaml holds it."""
        return self.record.get("config") or {}

    @property
    def definitions(self) -> dict[str, Any]:
        """What its documents and words were made under (``documents.table.DEFINITIONS``)."""
        return self.record.get("definitions") or {}

    @property
    def run_id(self) -> str:
        return str(self.record.get("run_id"))

    def identity(self) -> list[str]:
        """What identifies it in a fingerprint: its place, its inputs and its run id (a rerun
        there is another run)."""
        return [self.path, str(self.record.get("inputs_key")), self.run_id]

    def counts(self, stage: str) -> dict[str, Any]:
        """The counts its stage ``stage`` recorded in its metrics ({} when it has none)."""
        return self.record.get("metrics", {}).get("stages", {}).get(stage, {}) or {}

    @property
    def documents(self) -> int | None:
        """Its document count (doc_keys 0 .. documents-1), None when not recorded."""
        found = self.counts("ingest").get("documents")
        return None if found is None else int(found)

    def marker(self, name: str) -> dict[str, Any] | None:
        """The counts of its stage marker ``name`` (``JobRun.stage``'s ``marker``), or None."""
        text = fs.read_text(self.spark, fs.join(self.path, STAGES_DIR, f"{name}.json"))
        return None if text is None else json.loads(text).get("counts", {})

    def table(self, name: str) -> str:
        """The URI of the state table (or file) ``name`` it keeps for the next run."""
        return fs.join(self.path, work_table(name))

    def result(self, name: str) -> str:
        """The URI of its result table ``name`` (``docs``, ``pairs``, ...)."""
        return fs.join(self.path, name)

    def has_table(self, name: str) -> bool:
        """Whether its state table ``name`` was written whole."""
        return fs.exists(self.spark, fs.join(self.table(name), "_SUCCESS"))

    def text(self, name: str) -> str | None:
        """The state file ``name`` it keeps (``None`` when absent)."""
        return fs.read_text(self.spark, self.table(name))


def is_complete(spark: SparkSession | None, path: str) -> bool:
    """Whether ``path`` holds a published run (its ``_COMPLETE`` is there)."""
    return fs.exists(spark, fs.join(path, COMPLETE))


def resolve_previous(spark: SparkSession | None, previous: str, output: str | None) -> str:
    """An update's previous run: ``previous`` as given, or for a glob (``<root>/*/quilts``, as a
    scheduled run writes) the last complete run it matches in path order, leaving out
    ``output`` and, when the glob matches ``output`` too, every path after it (a rerun of an
    older date never extends a newer run). '' when it matches none: the run starts afresh,
    and the next one extends it."""
    import fnmatch

    if not glob.has_magic(previous):
        return previous
    here = path_part(output) if output else ""
    ordered = bool(here) and fnmatch.fnmatchcase(here, path_part(previous))
    found = ""
    for path in fs.matches(spark, previous):
        path = path.rstrip("/")
        at = path_part(path)
        if at == here or ordered and at > here:
            continue
        if FinishedRun.at(spark, path) is not None:
            found = path
    return found
