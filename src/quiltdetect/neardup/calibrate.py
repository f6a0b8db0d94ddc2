"""Threshold calibration on labelled pairs: precision, recall and F1 of each algorithm.

Reads JSON Lines of labelled pairs (``left_text``, ``right_text``, ``label``; label >= 1 means
near-duplicate, as in the Webis ECIR 2020 sample; optional ``corpus``), computes each pair's
B- and C-similarity, resemblance, containment and whether the pair shares an LSH band, with the
kernel (no Spark), and sweeps every threshold. A pair that shares no band is never an lsh
near-duplicate, as in the job: the figures include what candidate generation misses. The chosen
thresholds maximise F1, then precision; among settings still tied (a plateau where no training
pair lies between them) the middle one is taken, the widest margin to both sides.
The pairs carry no URLs, so Henzinger's site rule cannot be applied: ``combined-sites`` is not
calibrated separately (it uses c_threshold across sites and the combined thresholds within).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from quiltdetect.common.errors import ConfigError
from quiltdetect.neardup import lsh
from quiltdetect.neardup.fingerprints import fingerprint, shingle_set
from quiltdetect.neardup.simhash import c_similarity
from quiltdetect.neardup.supershingles import b_similarity

# Algorithm C's threshold sets its candidate pieces (385 - t of them, simhash.n_pieces): below
# 355 they are under 13 bits and buckets grow with the corpus, so C is chosen in 355..384.
# The combined algorithm's C threshold only filters B's candidates: any value is cheap.
C_RANGE = range(355, 385)
COMBINED_C_RANGE = range(300, 385)
B_RANGE = range(1, 7)
# lsh: resemblance and containment thresholds in steps of 0.01.
R_GRID = [round(0.01 * i, 2) for i in range(30, 101)]
CONTAINMENT_GRID = [round(0.01 * i, 2) for i in range(50, 101)]


@dataclass(frozen=True)
class LabelledPair:
    corpus: str
    label: int
    left_text: str
    right_text: str


@dataclass(frozen=True)
class Score:
    """Precision, recall and F1 of one algorithm at one threshold setting."""

    algorithm: str
    thresholds: dict[str, int]
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def row(self) -> str:
        th = ", ".join(f"{k}={v}" for k, v in self.thresholds.items())
        return (f"{self.algorithm:<9} {th:<40} P={self.precision:.3f} R={self.recall:.3f} F1={self.f1:.3f}"
                f"  (tp={self.tp} fp={self.fp} fn={self.fn})")


def read_pairs(path: str | Path) -> list[LabelledPair]:
    """Labelled pairs from a JSON Lines file (gzip if it ends with .gz). A line that is not a
    pair (not a JSON object, no ``label``, ``left_text`` or ``right_text``) is a ConfigError
    naming the line; a file that cannot be read is an OSError."""
    opener = gzip.open if str(path).endswith(".gz") else open
    pairs = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if line.strip():
                pairs.append(_pair(line, f"--pairs {path}, line {number}"))
    return pairs


def _pair(line: str, where: str) -> LabelledPair:
    try:
        r = json.loads(line)
    except ValueError as exc:
        raise ConfigError(f"{where}: not JSON ({exc})") from exc
    if not isinstance(r, dict) or not {"label", "left_text", "right_text"} <= r.keys():
        raise ConfigError(f"{where}: a pair is an object with label, left_text and right_text")
    try:
        label = int(r["label"])
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: label must be an integer (>= 1: near-duplicate), got {r['label']!r}") from exc
    return LabelledPair(str(r.get("corpus", "")), label, str(r["left_text"] or ""), str(r["right_text"] or ""))


def similarities(pairs: Iterable[LabelledPair], k: int, wrap: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(b_similarity int (n,), c_similarity int (n,)) of each pair."""
    b, c = [], []
    for p in pairs:
        x, y = fingerprint(p.left_text, k=k, wrap=wrap), fingerprint(p.right_text, k=k, wrap=wrap)
        b.append(b_similarity(x.supershingles, y.supershingles))
        c.append(c_similarity(x.simhash, y.simhash) if x.n_terms and y.n_terms else 0)
    return np.array(b, dtype=np.int64), np.array(c, dtype=np.int64)


@dataclass(frozen=True)
class Features:
    """Per pair: B- and C-similarity, resemblance, containment, shares an LSH band."""

    b: np.ndarray
    c: np.ndarray
    r: np.ndarray
    contained: np.ndarray
    candidate: np.ndarray


def features(pairs: Iterable[LabelledPair], k: int, wrap: bool = False, bands: int = 40, rows: int = 3) -> Features:
    """Every similarity the algorithms decide on, for each pair."""
    pairs = list(pairs)
    b, c = similarities(pairs, k, wrap)
    r, contained, cand = [], [], []
    for p in pairs:
        x, y = shingle_set(p.left_text, k=k, wrap=wrap), shingle_set(p.right_text, k=k, wrap=wrap)
        rc = lsh.resemblance_containment(x, y)
        r.append(rc[0])
        contained.append(rc[1])
        cand.append(lsh.is_candidate(lsh.band_keys(x, bands, rows), lsh.band_keys(y, bands, rows)))
    return Features(b, c, np.array(r, dtype=np.float64), np.array(contained, dtype=np.float64),
                    np.array(cand, dtype=bool))


def score(algorithm: str, thresholds: dict[str, int], predicted: np.ndarray, truth: np.ndarray) -> Score:
    tp = int(np.sum(predicted & truth))
    return Score(algorithm, thresholds, tp, int(np.sum(predicted & ~truth)), int(np.sum(~predicted & truth)))


def predict(algorithm: str, thresholds: dict[str, Any], f: Features) -> np.ndarray:
    """Which pairs an algorithm calls near-duplicates at the given thresholds (all on one site)."""
    b, c = f.b, f.c
    if algorithm == "lsh":
        return f.candidate & ((f.r >= thresholds["resemblance_threshold"])
                              | (f.contained >= thresholds["containment_threshold"]))
    if algorithm == "b":
        return b >= thresholds["b_threshold"]
    if algorithm == "c":
        return c >= thresholds["c_threshold"]
    return (b >= thresholds["b_threshold"]) & (c >= thresholds["combined_c_threshold"])


def sweep(f: Features, truth: np.ndarray) -> dict[str, list[Score]]:
    """Scores of every algorithm at every threshold setting."""
    grids = {
        "lsh": [{"resemblance_threshold": r, "containment_threshold": t} for r in R_GRID for t in CONTAINMENT_GRID],
        "b": [{"b_threshold": t} for t in B_RANGE],
        "c": [{"c_threshold": t} for t in C_RANGE],
        "combined": [{"b_threshold": tb, "combined_c_threshold": tc} for tb in B_RANGE for tc in COMBINED_C_RANGE],
    }
    return {alg: [score(alg, th, predict(alg, th, f), truth) for th in grid] for alg, grid in grids.items()}


def best(scores: list[Score]) -> Score:
    """Highest F1, then highest precision; of the settings still tied, the middle one
    (in threshold order), which keeps the widest margin to the training pairs on both sides."""
    top = max((round(s.f1, 12), round(s.precision, 12)) for s in scores)
    tied = sorted((s for s in scores if (round(s.f1, 12), round(s.precision, 12)) == top),
                  key=lambda s: tuple(s.thresholds.values()))
    return tied[(len(tied) - 1) // 2]


@dataclass
class Calibration:
    """The chosen thresholds per algorithm on the training pairs, and (optionally) held-out scores."""

    k: int
    wrap: bool
    bands: int
    rows: int
    chosen: dict[str, Score]
    test: dict[str, Score]
    n_train: int
    n_test: int

    def config(self) -> dict[str, Any]:
        """The thresholds to ship: lsh's two, c from algorithm C, b and combined c from the combined
        algorithm."""
        return {"k": self.k, "wrap": self.wrap, "lsh_bands": self.bands, "lsh_rows": self.rows,
                **self.chosen["lsh"].thresholds,
                "b_threshold": self.chosen["combined"].thresholds["b_threshold"],
                "c_threshold": self.chosen["c"].thresholds["c_threshold"],
                "combined_c_threshold": self.chosen["combined"].thresholds["combined_c_threshold"]}


def calibrate(train: list[LabelledPair], test: list[LabelledPair], k: int, wrap: bool = False,
              bands: int = 40, rows: int = 3) -> Calibration:
    """Choose thresholds on ``train``; score them on ``test`` (if any)."""
    truth = np.array([p.label >= 1 for p in train])
    chosen = {alg: best(scores) for alg, scores in sweep(features(train, k, wrap, bands, rows), truth).items()}
    held: dict[str, Score] = {}
    if test:
        f = features(test, k, wrap, bands, rows)
        ttruth = np.array([p.label >= 1 for p in test])
        held = {alg: score(alg, s.thresholds, predict(alg, s.thresholds, f), ttruth) for alg, s in chosen.items()}
    return Calibration(k, wrap, bands, rows, chosen, held, len(train), len(test))


def fixed_scores(pairs: list[LabelledPair], settings: dict[str, Any]) -> dict[str, Score]:
    """Scores of each algorithm at fixed settings (e.g. a preset) on labelled pairs."""
    f = features(pairs, settings["k"], settings.get("wrap", False), settings.get("lsh_bands", 40),
                 settings.get("lsh_rows", 3))
    truth = np.array([p.label >= 1 for p in pairs])
    return {alg: score(alg, {k: settings[k] for k in _keys(alg)}, predict(alg, settings, f), truth)
            for alg in ("lsh", "b", "c", "combined")}


def _keys(algorithm: str) -> tuple[str, ...]:
    return {"lsh": ("resemblance_threshold", "containment_threshold"), "b": ("b_threshold",),
            "c": ("c_threshold",), "combined": ("b_threshold", "combined_c_threshold")}[algorithm]
