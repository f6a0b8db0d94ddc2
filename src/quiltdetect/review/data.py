"""A run as the review tool sees it: its list of pages to judge and the texts it needs (pyarrow).

A quilt run lists its quilts, each with its sources; a near-duplicate run (``quiltdetect
neardup``) lists its dropped pages, each with the kept page it duplicates as its one source and
the pair's similarity. No Spark: the list is read whole (one row per page), ``docs/`` only for
the doc_ids a page shows, so the tool starts at once even on a large run.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import yaml

from quiltdetect.common.layout import is_published

SORT_KEYS = ("patchfrac", "n_sources", "n_attributed_sources", "doc_id", "url", "label")
# The similarity a near-duplicate run's duplicate_of/ rows carry: lsh's exact resemblance and
# containment, or Henzinger's B- and C-similarity (docs/neardup.md, "Outputs").
MEASURES = ("resemblance", "containment", "b_similarity", "c_similarity")
NEARDUP_SORT_KEYS = (*MEASURES, "doc_id", "url", "duplicate_of", "label")
LABEL_FILTERS = ("any", "none", "spam", "not_spam", "duplicate", "not_duplicate", "undecided")
PAGE_SIZE = 100


class RunError(ValueError):
    """The directory is not a run the tool can open; the message says why."""


@dataclass
class ListQuery:
    """Filters, order and sample of the list (all from the query string). A quilt run filters on
    patch fraction, sources and attribution; a near-duplicate run on its pairs' similarity."""

    q: str = ""  # substring of the url (of a near-duplicate run: of the dropped or the kept page's)
    min_pf: float = 0.0
    min_sources: int = 0
    attributed: str = "any"  # any | yes | no
    label: str = "any"  # any | none | one of labels.ALL_LABELS
    sort: str = "patchfrac"  # a near-duplicate run's default: its first measure (Run.sort_key)
    order: str = "desc"
    sample: int = 0  # > 0: a uniform random sample of this many of the filtered pages
    seed: int = 0
    page: int = 1
    min_resemblance: float = 0.0
    min_containment: float = 0.0
    min_b_similarity: float = 0.0
    min_c_similarity: float = 0.0

    @classmethod
    def parse(cls, params: dict[str, list[str]]) -> ListQuery:
        """Lenient: unknown or malformed values fall back to the defaults."""
        def one(name: str) -> str:
            return (params.get(name) or [""])[0].strip()

        query = cls()
        query.q = one("q")[:200]
        for name, kind in (("min_pf", float), ("min_sources", int), ("sample", int), ("seed", int), ("page", int)):
            try:
                if one(name):
                    setattr(query, name, kind(one(name)))
            except ValueError:
                pass
        for measure in MEASURES:
            try:
                value = float(one(f"min_{measure}") or 0)
            except ValueError:
                continue
            if math.isfinite(value):
                setattr(query, f"min_{measure}", value)
        query.sample = max(0, min(query.sample, 100_000))
        query.page = max(1, query.page)
        if one("attributed") in ("any", "yes", "no"):
            query.attributed = one("attributed")
        if one("label") in LABEL_FILTERS:
            query.label = one("label")
        if one("sort") in SORT_KEYS + NEARDUP_SORT_KEYS:
            query.sort = one("sort")
        if one("order") in ("asc", "desc"):
            query.order = one("order")
        return query

    def params(self, **changes: Any) -> dict[str, str]:
        """The non-default settings as query parameters (with ``changes`` applied)."""
        base = ListQuery()
        values = {**self.__dict__, **changes}
        return {k: str(v) for k, v in values.items() if v != getattr(base, k)}


def passed_rules(row: dict[str, Any], config: dict[str, Any]) -> list[str]:
    """The parts of the run's rule a dropped page's pair passed, as text ("resemblance ≥ 0.63"),
    from the thresholds in the run's config.yaml (empty when it does not say)."""
    algorithm = config.get("algorithm", "lsh")
    b, c = row.get("b_similarity"), row.get("c_similarity")

    def at_least(name: str, value: Any, key: str) -> list[str]:
        limit = config.get(key)
        return [f"{name} ≥ {limit}"] if value is not None and limit is not None and value >= limit else []

    if algorithm == "lsh":
        return (at_least("resemblance", row.get("resemblance"), "resemblance_threshold")
                + at_least("containment", row.get("containment"), "containment_threshold"))
    if algorithm == "b":
        return at_least("B", b, "b_threshold")
    if algorithm == "c":
        return at_least("C", c, "c_threshold")
    combined = at_least("B", b, "b_threshold") + at_least("C", c, "combined_c_threshold")
    combined = combined if len(combined) == 2 else []
    if algorithm == "combined":
        return combined
    return combined + at_least("C", c, "c_threshold")  # combined-sites: combined on one site, C across


def dropped_pages(path: Path, config: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """A near-duplicate run's dropped pages, each with the kept page it duplicates (``duplicate_of``,
    ``kept_url``, ``kept_run``; also as its one ``sources`` entry, for the highlighting), the
    pair's similarity and the rules it passed (``passed``); and the measures the run recorded."""
    table = ds.dataset(str(path / "duplicate_of"), format="parquet").to_table()
    measures = [m for m in MEASURES if m in table.column_names]
    rows = table.to_pylist()
    ids = pa.array([r["doc_id"] for r in rows], pa.string())  # typed: a run that dropped nothing has none
    urls = {r["doc_id"]: r["url"] for r in ds.dataset(str(path / "docs"), format="parquet").to_table(
        columns=["doc_id", "url"], filter=pc.field("doc_id").isin(ids)).to_pylist()}
    pages = []
    for r in rows:
        page = {"doc_id": r["doc_id"], "url": urls.get(r["doc_id"]), "duplicate_of": r["duplicate_of"],
                "kept_url": r.get("kept_url"), "kept_run": r.get("kept_run"),
                **{m: r[m] for m in measures},
                "passed": passed_rules(r, config),
                "sources": [{"doc_id": r["duplicate_of"], "url": r.get("kept_url")}]}
        pages.append(page)
    pages.sort(key=lambda r: r["doc_id"])
    return pages, measures


@dataclass
class Run:
    """One run directory: its configuration and its pages to judge (``quilts``: for a quilt run
    its quilts, sources in pick order; for a near-duplicate run, ``kind`` neardup, its dropped
    pages with the ``measures`` of similarity its duplicate_of/ rows carry)."""

    path: Path
    config: dict[str, Any]
    quilts: list[dict[str, Any]]
    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)
    kind: str = "quilts"  # or "neardup"
    measures: list[str] = field(default_factory=list)

    @classmethod
    def open(cls, run_dir: str | Path) -> Run:
        path = Path(run_dir).resolve()
        kind = "neardup" if (path / "duplicate_of").is_dir() and not (path / "quilts").is_dir() else "quilts"
        job = "quiltdetect quilts` or `quiltdetect neardup"
        if not (path / "quilts").is_dir() and kind == "quilts":
            raise RunError(f"--run {run_dir}: no quilts/ or duplicate_of/ table here (give the --output of `{job}`)")
        if not is_published(path):
            raise RunError(f"--run {run_dir}: the run did not complete (no _COMPLETE); rerun `quiltdetect {kind}`"
                           " with the same --output to finish it")
        if not (path / "docs").is_dir():
            raise RunError(f"--run {run_dir}: no docs/ table here; the review tool needs the page texts")
        config: dict[str, Any] = {}
        if (path / "config.yaml").is_file():
            config = yaml.safe_load((path / "config.yaml").read_text(encoding="utf-8")) or {}
        if kind == "neardup":
            dropped, measures = dropped_pages(path, config)
            return cls(path, config, dropped, {r["doc_id"]: r for r in dropped}, kind, measures)
        rows = ds.dataset(str(path / "quilts"), format="parquet").to_table().to_pylist()
        quilts = []
        for r in rows:
            for s in r["sources"]:
                s.setdefault("attributed", False)
            r["n_sources"] = len(r["sources"])
            r.setdefault("attributed", False)
            r.setdefault("n_attributed_sources", 0)
            quilts.append(r)
        quilts.sort(key=lambda r: r["doc_id"])
        return cls(path, config, quilts, {r["doc_id"]: r for r in quilts})

    @property
    def key(self) -> str:
        """The run's name in the labels database."""
        return str(self.path)

    @property
    def k(self) -> int:
        return int(self.config.get("k", 5))

    @property
    def noun(self) -> str:
        """What the list holds: quilts, or dropped pages."""
        return "quilts" if self.kind == "quilts" else "dropped pages"

    @property
    def sort_keys(self) -> tuple[str, ...]:
        """The columns the list can be sorted by, the default first."""
        if self.kind == "quilts":
            return SORT_KEYS
        return (*self.measures, *NEARDUP_SORT_KEYS[len(MEASURES):])

    def sort_key(self, query: ListQuery) -> str:
        """The query's sort column, or this run's default when it has no such column."""
        return query.sort if query.sort in self.sort_keys else self.sort_keys[0]

    def texts(self, doc_ids: list[str]) -> dict[str, dict[str, Any]]:
        """doc_id -> {url, text, anchors} for the given documents only (a filtered scan)."""
        table = ds.dataset(str(self.path / "docs"), format="parquet").to_table(
            columns=["doc_id", "url", "text"], filter=pc.field("doc_id").isin(doc_ids)
        )
        return {r["doc_id"]: r for r in table.to_pylist()}

    def _passes(self, r: dict[str, Any], query: ListQuery, needle: str) -> bool:
        if self.kind == "quilts":
            if needle and needle not in (r["url"] or "").lower():
                return False
            if r["patchfrac"] < query.min_pf or r["n_sources"] < query.min_sources:
                return False
            return query.attributed == "any" or bool(r["attributed"]) == (query.attributed == "yes")
        if needle and needle not in (r["url"] or "").lower() and needle not in (r["kept_url"] or "").lower():
            return False
        return all((r[m] or 0) >= getattr(query, f"min_{m}") for m in self.measures)

    def select(self, query: ListQuery, labels: dict[str, tuple[str, str, str]]) -> list[dict[str, Any]]:
        """The pages passing the filters, sorted; or a seeded uniform sample of them.

        A sample draws ``random.Random(seed).sample`` from the filtered pages in doc_id
        order and keeps the draw order, so the same seed and filters give the same sample.
        """
        needle = query.q.lower()
        chosen = []
        for r in self.quilts:
            label = labels.get(r["doc_id"], ("",))[0]
            if not self._passes(r, query, needle):
                continue
            if query.label == "none" and label or query.label not in ("any", "none") and label != query.label:
                continue
            chosen.append(r)
        if query.sample > 0:
            return random.Random(query.seed).sample(chosen, min(query.sample, len(chosen)))
        column = self.sort_key(query)
        if column == "label":
            def key(r):
                return (labels.get(r["doc_id"], ("",))[0], r["doc_id"])
        elif column in MEASURES:
            def key(r):
                return (r[column] is not None, r[column] or 0, r["doc_id"])
        else:
            def key(r):
                return (r[column] if r[column] is not None else "", r["doc_id"])
        return sorted(chosen, key=key, reverse=query.order == "desc")
