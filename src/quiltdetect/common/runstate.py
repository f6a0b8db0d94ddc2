"""Atomic, resumable outputs: stage markers, a completion marker, and publish-by-rename.

Layout under ``--output``:

    _quiltdetect/run.json        job name and the fingerprint of the inputs it was made from
    _quiltdetect/owner.json      the run writing it now (run id, process, host, start); _quiltdetect/lock
                                 is locked by that run on a local disk (``RunState.claim``)
    _quiltdetect/stages/X.json   one marker per finished stage: its key and its counts
    _quiltdetect/work/           the state a job keeps for the next run (an update reads it)
    _quiltdetect/tmp/            tables being written (moved into place when complete)
    _COMPLETE                    written last: the configuration, input fingerprint, metrics

A table is written to ``_quiltdetect/tmp/<name>-<run>`` and renamed into place only when it is
complete; its stage marker is written after the rename, and ``_COMPLETE`` after everything.
A run that dies leaves no ``_COMPLETE`` and no marker for a stage it did not finish, so no
output looks complete. A rerun into the same directory skips every stage whose marker has the
same key (same inputs, same settings of that stage) and whose table is present, and redoes
the rest; whatever else a former run left (results of another configuration, files of a run
that died) is removed when the new run begins. An output made from other inputs is never
mixed with a new run's: the run refuses unless ``--overwrite``, which clears the directory.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from pyspark.sql import SparkSession

from quiltdetect import __version__
from quiltdetect.common import fs
from quiltdetect.common.config import ConfigError
from quiltdetect.common.folder import SCRATCH, OutputFolder
from quiltdetect.common.layout import COMPLETE, STAGES_DIR, STATE_DIR

log = logging.getLogger(__name__)
LOCK = "lock"  # _quiltdetect/lock: held by the run writing a local output
OWNER = "owner.json"  # _quiltdetect/owner.json: which run the output is


def _describe(owner: dict | None) -> str:
    """``run 2026...-ab12 of quilts, pid 123 on host, started ...`` for a message."""
    if not owner:
        return "a run that has not said who it is yet"
    return (f"run {owner.get('run_id')} of {owner.get('job')}, pid {owner.get('pid')} on {owner.get('host')}, "
            f"started {owner.get('started')}")


def fingerprint(value: Any) -> str:
    """A short stable hash of a JSON-able value (sorted keys)."""
    blob = json.dumps(value, sort_keys=True, default=str).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:20]


def file_fingerprint(spark: SparkSession | None, paths: list[str]) -> str:
    """Fingerprint of the input files: each path with its size and modification time."""
    entries = []
    for path in sorted(paths):
        if fs.is_local(path):
            try:
                st = os.stat(fs.local_path(path))
            except OSError:  # gone since it was listed: its read is a counted file_error
                entries.append((os.path.abspath(fs.local_path(path)), None, None))
                continue
            entries.append((os.path.abspath(fs.local_path(path)), st.st_size, int(st.st_mtime)))
        else:
            status = fs.status(spark, path)
            entries.append((path, status[0], status[1]))
    return fingerprint(entries)


def _read_json(spark: SparkSession, uri: str) -> dict | None:
    text = fs.read_text(spark, uri)
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def refuse_other_runs(spark: SparkSession | None, output: str, inputs_key: str, job: str | None) -> None:
    """Refuse an output that holds a run of other inputs or ingestion settings (or, when
    ``job`` is given, of another job). Local outputs need no Spark (``spark`` may be None),
    so the console command refuses before a session starts."""
    run = _read_json(spark, fs.join(output, STATE_DIR, "run.json"))
    if run is not None and (run.get("inputs_key") != inputs_key or job is not None and run.get("job") != job):
        raise ConfigError(
            f"--output {output} holds a {run.get('job')} run of other inputs or ingestion "
            "settings; choose another --output or pass --overwrite"
        )


def refuse_taken(output: str) -> None:
    """Refuse a local output that another run is writing now (its lock is held), before Spark
    starts; ``RunState.claim`` takes the lock itself later."""
    path = os.path.join(fs.local_path(output), STATE_DIR, LOCK)
    if not os.path.exists(path):
        return
    import fcntl

    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise ConfigError(f"--output {output} is being written by another run ({_describe(_holder(path))}); "
                          "wait for it to end or stop it, or choose another --output") from None
    finally:
        os.close(fd)


def _holder(lock_path: str, wait: float = 3.0) -> dict | None:
    """Who holds a lock file: the holder writes itself into it right after taking the lock and
    empties it when it lets go. Just after the lock is taken the file may still be empty, or
    name a process that was killed while it held the lock: wait a moment for the new holder."""
    deadline = time.monotonic() + wait
    while True:
        try:
            with open(lock_path, encoding="utf-8") as stream:
                holder = json.loads(stream.read() or "null")
        except (OSError, ValueError):
            holder = None
        alive = holder is not None and (holder.get("host") != socket.gethostname() or _alive(holder.get("pid")))
        if alive or time.monotonic() > deadline:
            return holder if alive else None
        time.sleep(0.05)


def _alive(pid: object) -> bool:
    try:
        os.kill(int(pid), 0)  # type: ignore[arg-type]
    except (OSError, TypeError, ValueError):
        return False
    return True


def path_part(uri: str) -> str:
    """What to compare of two ways to write a place: the absolute path of a local one, the
    path of a URI (``hdfs:///x`` and ``hdfs://namenode:8020/x`` are the same place)."""
    if fs.is_local(uri):
        return os.path.abspath(fs.local_path(uri)).rstrip("/")
    return urlsplit(uri).path.rstrip("/")


@dataclass
class RunState:
    """The bookkeeping of one run into one output directory."""

    spark: SparkSession
    output: str
    job: str
    inputs_key: str  # fingerprint of the input files and the ingestion settings
    run_id: str = field(default_factory=lambda: time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8])

    _lock: int | None = field(default=None, repr=False, compare=False)  # the open lock file while claimed
    _owner_written: bool = field(default=False, repr=False, compare=False)
    _started: str = field(default="", repr=False, compare=False)

    @property
    def out(self) -> OutputFolder:
        """The output folder; its tables are written through this run's scratch directory, and
        nothing is put in place once another run has taken the output (``check_owner``)."""
        return OutputFolder(self.spark, self.output, self.run_id, guard=self.check_owner if self._claimed else None)

    @property
    def _claimed(self) -> bool:
        return self._lock is not None or self._owner_written

    def claim(self) -> None:
        """Make the output this run's, or refuse with one line naming the run that holds it.

        On a local disk the run holds an exclusive lock on ``_quiltdetect/lock`` until it ends
        (``release``; the kernel drops it if the process dies): a second run into the same
        output fails at once. Every run also writes ``_quiltdetect/owner.json`` (its run id,
        process, host, start), checked before each table or file is put in place and before
        ``_COMPLETE`` (``check_owner``): on object stores, where no lock exists, a run that
        another has taken over stops without publishing.
        """
        if fs.is_local(self.output):
            import fcntl

            folder = os.path.join(fs.local_path(self.output), STATE_DIR)
            os.makedirs(folder, exist_ok=True)
            fd = os.open(os.path.join(folder, LOCK), os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                refuse_taken(self.output)  # says who holds it
                return self.claim()  # ... unless it let go meanwhile
            self._lock = fd
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(self._who()).encode("utf-8"), 0)  # who holds it (``_holder``)
        fs.write_text(self.spark, self.path(STATE_DIR, OWNER), json.dumps(self._who(), indent=2))
        self._owner_written = True

    def _who(self) -> dict:
        if not self._started:
            self._started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return {"run_id": self.run_id, "job": self.job, "pid": os.getpid(), "host": socket.gethostname(),
                "started": self._started}

    def check_owner(self) -> None:
        """Raise when another run has taken this output since this one claimed it."""
        owner = _read_json(self.spark, self.path(STATE_DIR, OWNER))
        if owner is None or owner.get("run_id") != self.run_id:
            raise ConfigError(f"--output {self.output} was taken over by another run ({_describe(owner)}) while "
                              f"this one ({self.run_id}) ran; this run stops without publishing its results")

    def release(self) -> None:
        """Let go of the output (the lock of a local one)."""
        if self._lock is not None:
            try:
                os.ftruncate(self._lock, 0)  # nobody holds it now
            finally:
                os.close(self._lock)  # closing the descriptor drops its flock
            self._lock = None

    def path(self, *parts: str) -> str:
        return fs.join(self.output, *parts)

    def begin(self, overwrite: bool) -> None:
        """Claim the output (``claim``): clear it with ``overwrite`` (``fs.check_output`` has
        made sure it is a run of this project), else check it holds this job's inputs."""
        self.claim()
        try:
            self._prepare(overwrite)
        except BaseException:
            self.release()  # a refused run leaves the output to the next
            raise

    def _prepare(self, overwrite: bool) -> None:
        if overwrite:
            for name in fs.children(self.spark, self.output):
                if name != STATE_DIR:
                    fs.delete(self.spark, self.path(name))
            for name in fs.children(self.spark, self.path(STATE_DIR)):
                if name not in (LOCK, OWNER):
                    fs.delete(self.spark, self.path(STATE_DIR, name))
        refuse_other_runs(self.spark, self.output, self.inputs_key, self.job)
        fs.delete(self.spark, self.path(COMPLETE))
        fs.delete(self.spark, self.path(SCRATCH))
        self._clear_unfinished()
        fs.write_text(self.spark, self.path(STATE_DIR, "run.json"), json.dumps(
            {"job": self.job, "inputs_key": self.inputs_key, "version": __version__}, indent=2))

    def _clear_unfinished(self) -> None:
        """Remove everything a former run published except the tables of finished stages.

        A new configuration thus never leaves a former one's results beside its own (a sweep
        over other k, a join that becomes an index); reusable stages keep their tables.
        """
        keep: set[str] = set()
        for marker in fs.children(self.spark, self.path(STAGES_DIR)):
            stage = _read_json(self.spark, self.path(STAGES_DIR, marker)) or {}
            keep.update(t.split("/")[0] for t in stage.get("tables", []))
        for name in fs.children(self.spark, self.output):
            if name not in keep and name != STATE_DIR:
                fs.delete(self.spark, self.path(name))

    def completed(self, config_key: str) -> dict | None:
        """The _COMPLETE record if the output is complete for exactly this configuration."""
        done = _read_json(self.spark, self.path(COMPLETE))
        if done and done.get("config_key") == config_key and done.get("inputs_key") == self.inputs_key:
            return done
        return None

    def stage(self, name: str, key: str) -> dict | None:
        """The counts recorded by a finished stage with this key, or None if it must run."""
        marker = _read_json(self.spark, self.path(STAGES_DIR, f"{name}.json"))
        if marker and marker.get("key") == key:
            tables = marker.get("tables", [])
            if all(fs.exists(self.spark, self.path(t, "_SUCCESS")) for t in tables):
                return marker.get("counts", {})
        return None

    def finish_stage(self, name: str, key: str, tables: list[str], counts: dict) -> None:
        """Record a stage as done, after its tables are in place."""
        self.check_owner()
        fs.write_text(self.spark, self.path(STAGES_DIR, f"{name}.json"), json.dumps(
            {"key": key, "tables": tables, "counts": counts, "run_id": self.run_id}, indent=2, default=str))

    def forget_stage(self, name: str) -> None:
        fs.delete(self.spark, self.path(STAGES_DIR, f"{name}.json"))

    def complete(self, config_key: str, config: dict, metrics: dict, definitions: dict | None = None) -> None:
        """Publish the run: write _COMPLETE last, remove temporary files. ``definitions``: what
        its documents and words were made under (``documents.table.DEFINITIONS``)."""
        self.check_owner()
        fs.delete(self.spark, self.path(SCRATCH))
        fs.write_text(self.spark, self.path(COMPLETE), json.dumps(
            {"job": self.job, "config_key": config_key, "inputs_key": self.inputs_key, "run_id": self.run_id,
             "definitions": definitions or {}, "config": config, "metrics": metrics}, indent=2, default=str))
