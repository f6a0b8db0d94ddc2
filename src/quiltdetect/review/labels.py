"""Judgments of quilts (spam / not spam / undecided, with a note) in SQLite, and Table 2.

Every statement is parameterised. One database can hold the labels of several runs: a
label is keyed by (run, doc_id), where run is the run directory's resolved path.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

LABELS = ("spam", "not_spam", "undecided")
SCHEMA = """
CREATE TABLE IF NOT EXISTS labels (
    run TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    label TEXT NOT NULL CHECK (label IN ('spam', 'not_spam', 'undecided')),
    note TEXT NOT NULL DEFAULT '',
    judged_at TEXT NOT NULL,
    PRIMARY KEY (run, doc_id)
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


class LabelStore:
    """The labels database; a short-lived connection per call, so any thread may use it."""

    def __init__(self, path: str | Path, timeout: float = 10.0):
        self.path = str(path)
        self.timeout = timeout  # seconds a write waits for another program's lock before it fails
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

    def set(self, run: str, doc_id: str, label: str, note: str = "") -> None:
        """Record (or replace) the judgment of one quilt."""
        if label not in LABELS:
            raise ValueError(f"label must be one of {LABELS}, got {label!r}")
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._connect() as db:
            db.execute(
                "INSERT INTO labels (run, doc_id, label, note, judged_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (run, doc_id) DO UPDATE SET label = excluded.label, note = excluded.note, "
                "judged_at = excluded.judged_at",
                (run, doc_id, label, note, now),
            )

    def of_run(self, run: str) -> dict[str, tuple[str, str, str]]:
        """doc_id -> (label, note, judged_at) for one run."""
        with self._connect() as db:
            rows = db.execute("SELECT doc_id, label, note, judged_at FROM labels WHERE run = ?", (run,)).fetchall()
        return {d: (label, note, at) for d, label, note, at in rows}

    def summaries(self) -> list[RunSummary]:
        """Table 2: one row per run in the database."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT run, SUM(label = 'spam'), SUM(label = 'not_spam'), SUM(label = 'undecided') "
                "FROM labels GROUP BY run ORDER BY run"
            ).fetchall()
        return [RunSummary(r, int(s or 0), int(n or 0), int(u or 0)) for r, s, n, u in rows]
