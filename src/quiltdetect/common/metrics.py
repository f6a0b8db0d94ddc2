"""Per-stage counts and timings of a run, printed as one summary and written as metrics.json."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession

from quiltdetect.common import interrupts
from quiltdetect.common.failures import STAGE_NOTE

# One line per stage as it starts, and the Spark UI address: on stderr unless --quiet (cli.py).
progress = logging.getLogger("quiltdetect.progress")


@dataclass
class RunMetrics:
    """Counts and elapsed seconds per named stage, in the order the stages ran."""

    job: str
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    inputs: list[dict[str, Any]] = field(default_factory=list)  # each --input, how it was taken, its files
    skipped_files: list[dict[str, str]] = field(default_factory=list)  # entries under the inputs not read, why

    @contextmanager
    def stage(self, spark: SparkSession, name: str, description: str) -> Iterator[dict[str, Any]]:
        """Time a stage, name its Spark jobs in the UI and say on the console that it started
        (``<job>: <stage> - <description>``, the same words); yields the dict to put counts in."""
        counts: dict[str, Any] = {}
        label = f"{self.job}: {name} - {description}"
        outer = spark.sparkContext.getLocalProperty("spark.job.description")  # a stage within a stage
        spark.sparkContext.setJobDescription(label)
        t0 = time.perf_counter()
        try:
            interrupts.check()  # a run interrupted between two stages stops here (common/interrupts.py)
            progress.info("%s", label)
            yield counts
            interrupts.check()
        except (Exception, KeyboardInterrupt) as exc:
            if not any(n.startswith(STAGE_NOTE) for n in getattr(exc, "__notes__", [])):
                exc.add_note(f"{STAGE_NOTE}{name}")  # the innermost stage; common/failures.py reads it
            raise
        finally:
            counts["seconds"] = round(time.perf_counter() - t0, 3)
            self.stages[name] = counts
            spark.sparkContext.setJobDescription(outer)

    def total_seconds(self) -> float:
        return round(time.time() - self.started, 3)

    def to_json(self, extra: dict[str, Any] | None = None) -> str:
        body: dict[str, Any] = {"job": self.job, "stages": self.stages, "total_seconds": self.total_seconds()}
        if self.inputs:
            body["inputs"] = self.inputs
        if self.skipped_files:
            body["skipped_files"] = self.skipped_files
        body.update(extra or {})
        return json.dumps(body, indent=2, sort_keys=False, default=str)

    def summary_lines(self) -> list[str]:
        """One line per stage: name, time and its counts."""
        lines = []
        for name, counts in self.stages.items():
            items = ", ".join(f"{k}={_fmt(v)}" for k, v in counts.items() if k != "seconds")
            lines.append(f"  {name:<12} {counts.get('seconds', 0):>8.1f}s  {items}")
        lines.append(f"  {'total':<12} {self.total_seconds():>8.1f}s")
        return lines

    def input_lines(self) -> list[str]:
        """How each --input was taken (``a glob``, ``a path``), and what under it was not read
        (but the files of ``common/ownfiles.py``: the project's own)."""
        lines = [f"input {i['input']}: {'a glob' if i['taken_as'] == 'glob' else 'a path'}, {i['files']:,} files read"
                 for i in self.inputs if i["taken_as"] != "uri"]
        # files the project ships or a run of it wrote are named in metrics.json, not counted here
        left_out = [entry for entry in self.skipped_files if not entry.get("own")]
        if left_out:
            counts: dict[str, int] = {}
            for entry in left_out:
                counts[entry["reason"]] = counts.get(entry["reason"], 0) + 1
            lines.append(f"left out: {len(left_out):,} files ("
                         + ", ".join(f"{reason} {n:,}" for reason, n in sorted(counts.items()))
                         + "; each named in metrics.json, skipped_files)")
        note = no_documents_note(self.stages.get("ingest") or {})
        return [*lines, note] if note else lines


def no_documents_note(ingest: dict[str, Any]) -> str | None:
    """The line a run that read no (new) document prints, saying why: its inputs hold none (an
    empty segment: the run is complete all the same), none of its files could be read, or every
    record was skipped. None when it read documents."""
    update = "new_documents" in ingest
    if not ingest or ingest.get("new_documents" if update else "documents", 1) or ingest.get("already_seen"):
        return None
    files, records = ingest.get("files", 0), ingest.get("records", 0)
    errors = (ingest.get("skipped") or {}).get("file_error", 0)
    what = "0 new documents" if update else "0 documents"
    if not records:
        then = "the results are those of the previous run's documents" if update else "every table is empty"
        return f"{what}: the inputs hold none (empty files or directories); {then}"
    if errors == records and files:
        return (f"warning: {what}: none of the {files:,} files could be read (file_error {errors:,}: broken, or not "
                "the format its name says; --set write_rejects=true writes why to rejects/)")
    return f"{what}: every record was skipped (see skipped= on the ingest line)"


def _fmt(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_fmt(v)}" for k, v in value.items()) + "}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
