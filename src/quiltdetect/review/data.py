"""A run as the review tool sees it: its list of pages to judge and the texts it needs (pyarrow).

A quilt run lists its quilts, each with its sources; a near-duplicate run (``quiltdetect
neardup``) lists its dropped pages, each with the kept page it duplicates as its one source and
the pair's similarity. No Spark: the list is read whole (one row per page), ``docs/`` only for
the doc_ids a page shows, so the tool starts at once even on a large run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.dataset as ds
import yaml

SORT_KEYS = ("patchfrac", "n_sources", "n_attributed_sources", "doc_id", "url", "label")
PAGE_SIZE = 100


class RunError(ValueError):
    """The directory is not a quilt run the tool can open; the message says why."""


@dataclass
class ListQuery:
    """Filters, order and sample of the quilt list (all from the query string)."""

    q: str = ""  # substring of the url
    min_pf: float = 0.0
    min_sources: int = 0
    attributed: str = "any"  # any | yes | no
    label: str = "any"  # any | none | spam | not_spam | undecided
    sort: str = "patchfrac"
    order: str = "desc"
    sample: int = 0  # > 0: a uniform random sample of this many of the filtered quilts
    seed: int = 0
    page: int = 1

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
        query.sample = max(0, min(query.sample, 100_000))
        query.page = max(1, query.page)
        if one("attributed") in ("any", "yes", "no"):
            query.attributed = one("attributed")
        if one("label") in ("any", "none", "spam", "not_spam", "undecided"):
            query.label = one("label")
        if one("sort") in SORT_KEYS:
            query.sort = one("sort")
        if one("order") in ("asc", "desc"):
            query.order = one("order")
        return query

    def params(self, **changes: Any) -> dict[str, str]:
        """The non-default settings as query parameters (with ``changes`` applied)."""
        base = ListQuery()
        values = {**self.__dict__, **changes}
        return {k: str(v) for k, v in values.items() if v != getattr(base, k)}


def dropped_pages(path: Path) -> list[dict[str, Any]]:
    """A near-duplicate run's dropped pages as the list shows them: ``patchfrac`` is the pair's
    resemblance (lsh) or its C-similarity over 384 bits (Henzinger's algorithms), the one source
    is the kept page, ``reason`` the row of duplicate_of/."""
    rows = ds.dataset(str(path / "duplicate_of"), format="parquet").to_table().to_pylist()
    urls = {r["doc_id"]: r["url"] for r in ds.dataset(str(path / "docs"), format="parquet").to_table(
        columns=["doc_id", "url"], filter=pc.field("doc_id").isin([r["doc_id"] for r in rows])).to_pylist()}
    pages = []
    for r in rows:
        score = r["resemblance"] if "resemblance" in r else (r.get("c_similarity") or 0) / 384
        pages.append({"doc_id": r["doc_id"], "url": urls.get(r["doc_id"]), "patchfrac": float(score),
                      "n_sources": 1, "attributed": False, "n_attributed_sources": 0, "reason": r,
                      "sources": [{"doc_id": r["duplicate_of"], "url": r["kept_url"], "attributed": False}]})
    pages.sort(key=lambda r: r["doc_id"])
    return pages


@dataclass
class Run:
    """One run directory: its configuration and its pages to judge (``quilts``: for a quilt run
    its quilts, sources in pick order; for a near-duplicate run its dropped pages, ``kind``)."""

    path: Path
    config: dict[str, Any]
    quilts: list[dict[str, Any]]
    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)
    kind: str = "quilts"  # or "neardup"

    @classmethod
    def open(cls, run_dir: str | Path) -> Run:
        path = Path(run_dir).resolve()
        kind = "neardup" if (path / "duplicate_of").is_dir() and not (path / "quilts").is_dir() else "quilts"
        job = "quiltdetect quilts` or `quiltdetect neardup"
        if not (path / "quilts").is_dir() and kind == "quilts":
            raise RunError(f"--run {run_dir}: no quilts/ or duplicate_of/ table here (give the --output of `{job}`)")
        if not (path / "_COMPLETE").is_file():
            raise RunError(f"--run {run_dir}: the run did not complete (no _COMPLETE); rerun `quiltdetect {kind}`"
                           " with the same --output to finish it")
        if not (path / "docs").is_dir():
            raise RunError(f"--run {run_dir}: no docs/ table here; the review tool needs the page texts")
        config: dict[str, Any] = {}
        if (path / "config.yaml").is_file():
            config = yaml.safe_load((path / "config.yaml").read_text(encoding="utf-8")) or {}
        if kind == "neardup":
            dropped = dropped_pages(path)
            return cls(path, config, dropped, {r["doc_id"]: r for r in dropped}, kind)
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

    def texts(self, doc_ids: list[str]) -> dict[str, dict[str, Any]]:
        """doc_id -> {url, text, anchors} for the given documents only (a filtered scan)."""
        table = ds.dataset(str(self.path / "docs"), format="parquet").to_table(
            columns=["doc_id", "url", "text"], filter=pc.field("doc_id").isin(doc_ids)
        )
        return {r["doc_id"]: r for r in table.to_pylist()}

    def select(self, query: ListQuery, labels: dict[str, tuple[str, str, str]]) -> list[dict[str, Any]]:
        """The quilts passing the filters, sorted; or a seeded uniform sample of them.

        A sample draws ``random.Random(seed).sample`` from the filtered quilts in doc_id
        order and keeps the draw order, so the same seed and filters give the same sample.
        """
        needle = query.q.lower()
        chosen = []
        for r in self.quilts:
            label = labels.get(r["doc_id"], ("",))[0]
            if needle and needle not in (r["url"] or "").lower():
                continue
            if r["patchfrac"] < query.min_pf or r["n_sources"] < query.min_sources:
                continue
            if query.attributed != "any" and bool(r["attributed"]) != (query.attributed == "yes"):
                continue
            if query.label == "none" and label or query.label not in ("any", "none") and label != query.label:
                continue
            chosen.append(r)
        if query.sample > 0:
            return random.Random(query.seed).sample(chosen, min(query.sample, len(chosen)))
        if query.sort == "label":
            def key(r):
                return (labels.get(r["doc_id"], ("",))[0], r["doc_id"])
        else:
            def key(r):
                return (r[query.sort] if r[query.sort] is not None else "", r["doc_id"])
        return sorted(chosen, key=key, reverse=query.order == "desc")
