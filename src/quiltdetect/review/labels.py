"""Judgments in SQLite, with a note: of quilts (spam / not spam / undecided) and Table 2, and of
a near-duplicate run's dropped pages (duplicate / not a duplicate / undecided) and the precision
of its decisions.

Every statement is parameterised. One database can hold the labels of several runs: a
label is keyed by (run, doc_id), where run is the run directory's resolved path, and a run's
kind (``quilts`` or ``neardup``) is kept in the ``runs`` table beside ``labels``. A database
written before near-duplicate labels existed is widened the first time one is saved (the
``labels`` table rebuilt with the same columns and rows; ``runs`` created).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

# The labels of each kind of run: a quilt is spam or not; a dropped page is a duplicate of the
# page kept in its place or not.
LABEL_KINDS = {"quilts": ("spam", "not_spam", "undecided"), "neardup": ("duplicate", "not_duplicate", "undecided")}
LABELS = LABEL_KINDS["quilts"]
ALL_LABELS = ("spam", "not_spam", "duplicate", "not_duplicate", "undecided")
_TABLE = """
CREATE TABLE IF NOT EXISTS {name} (
    run TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    label TEXT NOT NULL CHECK (label IN ({labels})),
    note TEXT NOT NULL DEFAULT '',
    judged_at TEXT NOT NULL,
    PRIMARY KEY (run, doc_id)
)
"""
SCHEMA = _TABLE.format(name="labels", labels=", ".join(f"'{v}'" for v in ALL_LABELS))
RUNS = """
CREATE TABLE IF NOT EXISTS runs (
    run TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('quilts', 'neardup'))
)
"""


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score 95% interval of a proportion (sane at 0, n and small n, unlike Wald's)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class RunSummary:
    """Table 2 for one run: judged pages, spam share and its 95% interval."""

    run: str
    spam: int
    not_spam: int
    undecided: int

    @property
    def judged(self) -> int:
        """Pages labelled spam or not spam (undecided ones are left out of the percentage)."""
        return self.spam + self.not_spam

    @property
    def spam_share(self) -> float | None:
        return self.spam / self.judged if self.judged else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.spam, self.judged)


@dataclass(frozen=True)
class DuplicateSummary:
    """A near-duplicate run's judged dropped pages: the precision of its decisions and its 95%
    interval (the share of dropped pages judged duplicates of their kept pages)."""

    run: str
    duplicate: int
    not_duplicate: int
    undecided: int

    @property
    def judged(self) -> int:
        """Pages labelled duplicate or not a duplicate (undecided ones are left out)."""
        return self.duplicate + self.not_duplicate

    @property
    def precision(self) -> float | None:
        return self.duplicate / self.judged if self.judged else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.duplicate, self.judged)


class LabelStore:
    """The labels database; a short-lived connection per call, so any thread may use it."""

    def __init__(self, path: str | Path, timeout: float = 10.0):
        self.path = str(path)
        self.timeout = timeout  # seconds a write waits for another program's lock before it fails
        self._widened = False
        with self._connect() as db:
            db.execute(SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=self.timeout)
        try:
            with db:
                yield db
        finally:
            db.close()

    def _widen(self) -> None:
        """Let the ``labels`` table hold every kind's labels and create ``runs``: a database made
        before near-duplicate labels has a CHECK that allows the quilt labels only, which SQLite
        cannot alter, so the table is rebuilt (same columns, same rows) in one transaction."""
        if self._widened:
            return
        db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(RUNS)
                (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'labels'").fetchone()
                if "'duplicate'" not in sql:
                    db.execute(_TABLE.format(name="labels_widened", labels=", ".join(f"'{v}'" for v in ALL_LABELS)))
                    db.execute("INSERT INTO labels_widened (run, doc_id, label, note, judged_at) "
                               "SELECT run, doc_id, label, note, judged_at FROM labels")
                    db.execute("DROP TABLE labels")
                    db.execute("ALTER TABLE labels_widened RENAME TO labels")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        finally:
            db.close()
        self._widened = True

    def set(self, run: str, doc_id: str, label: str, note: str = "", kind: str = "quilts") -> None:
        """Record (or replace) the judgment of one page of a run of ``kind`` (quilts, neardup)."""
        allowed = LABEL_KINDS.get(kind, ())
        if label not in allowed:
            raise ValueError(f"label must be one of {allowed}, got {label!r}")
        if kind != "quilts":
            self._widen()
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._connect() as db:
            db.execute(
                "INSERT INTO labels (run, doc_id, label, note, judged_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (run, doc_id) DO UPDATE SET label = excluded.label, note = excluded.note, "
                "judged_at = excluded.judged_at",
                (run, doc_id, label, note, now),
            )
            if kind != "quilts":
                db.execute("INSERT INTO runs (run, kind) VALUES (?, ?) ON CONFLICT (run) DO UPDATE SET "
                           "kind = excluded.kind", (run, kind))

    def of_run(self, run: str) -> dict[str, tuple[str, str, str]]:
        """doc_id -> (label, note, judged_at) for one run."""
        with self._connect() as db:
            rows = db.execute("SELECT doc_id, label, note, judged_at FROM labels WHERE run = ?", (run,)).fetchall()
        return {d: (label, note, at) for d, label, note, at in rows}

    def summaries(self) -> list[RunSummary | DuplicateSummary]:
        """One row per run in the database: Table 2 for a quilt run, the precision of its
        decisions for a near-duplicate run (a run whose kind was not recorded is a quilt run)."""
        with self._connect() as db:
            has_runs = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'").fetchone()
            kinds = dict(db.execute("SELECT run, kind FROM runs").fetchall()) if has_runs else {}
            rows = db.execute(
                "SELECT run, SUM(label = 'spam'), SUM(label = 'not_spam'), SUM(label = 'duplicate'), "
                "SUM(label = 'not_duplicate'), SUM(label = 'undecided') FROM labels GROUP BY run ORDER BY run"
            ).fetchall()
        out: list[RunSummary | DuplicateSummary] = []
        for run, spam, not_spam, dup, not_dup, undecided in rows:
            if kinds.get(run) == "neardup":
                out.append(DuplicateSummary(run, int(dup or 0), int(not_dup or 0), int(undecided or 0)))
            else:
                out.append(RunSummary(run, int(spam or 0), int(not_spam or 0), int(undecided or 0)))
        return out
