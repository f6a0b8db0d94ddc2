"""Where a run's time went, job by job, from Spark's event log: ``python bench/spark_jobs.py LOG``

Run the job with ``--set spark.eventLog.enabled=true --set spark.eventLog.dir=file:///tmp/ev``
(and ``--set spark.eventLog.compress=false`` where neither the ``zstd`` command nor the
``zstandard`` module is at hand), then give the log: the file, or the directory Spark wrote
(``/tmp/ev`` with one run in it, or its ``eventlog_v2_*`` folder).

One line per Spark job, in order: when it started (seconds after the application started), the
driver's time since the previous job ended (planning, footers, Python), its wall time, its Spark
stages (skipped ones included), tasks, and the task seconds summed over the executors' cores,
then the job's description (``quiltdetect`` names each stage: "quilts: ingest - ...").
``--by-stage`` adds a table of those figures summed per job description. docs/performance.md's
tables of task seconds come from here.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Job:
    """One Spark job as the event log tells it (times in ms since the epoch)."""

    job_id: int
    description: str
    start: int
    end: int = 0
    stages: list[int] = field(default_factory=list)
    tasks: int = 0
    task_ms: int = 0

    @property
    def wall_ms(self) -> int:
        return max(0, self.end - self.start)


def log_files(path: Path) -> list[Path]:
    """The event log's files: ``path`` itself, or the files of the log under the directory
    ``path`` (one file, or a rolling log's ``events_N_*`` parts in order)."""
    if path.is_file():
        return [path]
    files = sorted(p for p in path.rglob("*")
                   if p.is_file() and not p.name.startswith(".") and not p.name.startswith("appstatus"))
    parts = [p for p in files if p.name.startswith("events_")]
    if parts and len({p.parent for p in parts}) == 1 and len(parts) == len(files):
        return sorted(parts, key=lambda p: int(p.name.split("_")[1]) if p.name.split("_")[1].isdigit() else 0)
    if len(files) != 1:
        found = ", ".join(str(p) for p in files[:5]) or "nothing"
        raise SystemExit(f"{path}: expected one run's event log under it, found {found}; give the file")
    return files


def _zstd_text(path: Path) -> str:
    try:
        import zstandard
    except ImportError:
        zstd = shutil.which("zstd")
        if zstd is None:
            raise SystemExit(f"{path} is zstd-compressed and neither the zstd command nor the zstandard module is "
                             "here: install one, or run the job with --set spark.eventLog.compress=false") from None
        return subprocess.run([zstd, "-dc", str(path)], check=True, capture_output=True).stdout.decode()
    with zstandard.ZstdDecompressor().stream_reader(path.open("rb")) as raw:
        return io.TextIOWrapper(raw, encoding="utf-8").read()


def events(paths: Iterable[Path]) -> Iterator[dict]:
    """The events of a log's files, plain JSON lines or zstd-compressed (Spark's default)."""
    for path in paths:
        text = _zstd_text(path) if path.suffix == ".zstd" else path.read_text(encoding="utf-8")
        for line in text.splitlines():
            if line.strip():
                yield json.loads(line)


def jobs_of(stream: Iterable[dict]) -> tuple[int, list[Job]]:
    """(the application's start, its jobs in order) from the events."""
    app_start, jobs, stage_job = 0, {}, {}
    for e in stream:
        kind = e.get("Event")
        if kind == "SparkListenerApplicationStart":
            app_start = int(e["Timestamp"])
        elif kind == "SparkListenerJobStart":
            props = e.get("Properties") or {}
            job = Job(int(e["Job ID"]), props.get("spark.job.description") or "", int(e["Submission Time"]),
                      stages=[int(s) for s in e.get("Stage IDs", [])])
            jobs[job.job_id] = job
            for s in job.stages:
                stage_job[s] = job.job_id
        elif kind == "SparkListenerJobEnd" and int(e["Job ID"]) in jobs:
            jobs[int(e["Job ID"])].end = int(e["Completion Time"])
        elif kind == "SparkListenerTaskEnd" and int(e["Stage ID"]) in stage_job:
            info = e["Task Info"]
            job = jobs[stage_job[int(e["Stage ID"])]]
            job.tasks += 1
            job.task_ms += max(0, int(info["Finish Time"]) - int(info["Launch Time"]))
    ordered = sorted(jobs.values(), key=lambda j: j.job_id)
    return app_start or (ordered[0].start if ordered else 0), ordered


def report(app_start: int, jobs: list[Job], by_stage: bool = False) -> str:
    """The table ``main`` prints."""
    lines = [f"{'job':>4} {'at s':>7} {'gap s':>6} {'wall s':>7} {'stages':>6} {'tasks':>6} {'task s':>7}  description"]
    done = app_start
    for j in jobs:
        lines.append(f"{j.job_id:>4} {(j.start - app_start) / 1000:>7.2f} {max(0, j.start - done) / 1000:>6.2f} "
                     f"{j.wall_ms / 1000:>7.2f} {len(j.stages):>6} {j.tasks:>6} {j.task_ms / 1000:>7.2f}  "
                     f"{j.description[:70]}")
        done = max(done, j.end)
    running = sum(j.wall_ms for j in jobs)
    lines.append(f"{len(jobs)} jobs; {running / 1000:.1f} s of job wall time (jobs may overlap), "
                 f"{sum(j.task_ms for j in jobs) / 1000:.1f} task s; last job ended {(done - app_start) / 1000:.1f} s "
                 "after the application started")
    if by_stage:
        sums: dict[str, list[int]] = {}
        for j in jobs:
            row = sums.setdefault(j.description.split(" - ")[0] or "(no description)", [0, 0, 0])
            row[0] += 1
            row[1] += j.wall_ms
            row[2] += j.task_ms
        lines.append("")
        lines.append(f"{'jobs':>5} {'wall s':>7} {'task s':>7}  stage")
        lines += [f"{n:>5} {w / 1000:>7.2f} {t / 1000:>7.2f}  {name}" for name, (n, w, t) in sums.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", type=Path, help="an event log file, or the directory holding one")
    parser.add_argument("--by-stage", action="store_true", help="also sum the jobs per job description")
    args = parser.parse_args(argv)
    app_start, jobs = jobs_of(events(log_files(args.log)))
    print(report(app_start, jobs, args.by_stage))
    return 0


if __name__ == "__main__":
    sys.exit(main())
