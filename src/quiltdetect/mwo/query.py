"""The near-duplicate query (the paper's use): one page against an indexed repository.

:class:`MwoIndex` loads an index directory once (terms/, records/, postings/ Parquet written
by ``mwo index``) into numpy arrays and dicts; :meth:`MwoIndex.query` then touches only the
postings of the query's weighted-prefix terms and verifies only the candidates that pass
the positional bound, so a query never scans the repository. Spark-free.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from quiltdetect.common.config import ConfigError
from quiltdetect.common.layout import is_published
from quiltdetect.documents.html import decode_html, extract
from quiltdetect.mwo.arrowlists import flat_numpy
from quiltdetect.mwo.filtering import EPS, mwo, ragged_take, suffix_weights
from quiltdetect.mwo.rendering import PageFields, render


@dataclass(frozen=True)
class Match:
    """One near-duplicate of the query page."""

    doc_id: str
    url: str
    mwo: float


@dataclass
class QueryResult:
    """Answer to one query, with the candidate-set sizes after each filter (as the paper reports)."""

    page: str
    t: float
    n_terms: int
    prefix_terms: int
    after_prefix: int
    after_positional: int
    matches: list[Match] = field(default_factory=list)
    seconds: float = 0.0


class MwoIndex:
    """An MWO index loaded into memory: global order, canonical records and prefix postings."""

    def __init__(self, path: str | Path) -> None:
        root = Path(path)
        meta_file = root / "index.json"
        if not meta_file.is_file():
            raise ConfigError(f"--index {path}: not an MWO index (no index.json; build one with `mwo index`)")
        if not is_published(root):
            raise ConfigError(f"--index {path}: the index run did not complete (no _COMPLETE); rerun `mwo index`")
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        self.threshold = float(meta["index_threshold"])
        self.min_weight_ratio = float(meta["min_weight_ratio"])
        terms = pq.read_table(root / "terms", columns=["term", "term_id"])
        self.term_ids: dict[str, int] = dict(zip(terms.column("term").to_pylist(),
                                                 terms.column("term_id").to_pylist(), strict=True))
        records = pq.read_table(root / "records", columns=["doc_key", "doc_id", "url", "term_ids", "weights"])
        order = np.argsort(records.column("doc_key").to_numpy(), kind="stable")
        records = records.take(order)
        self.doc_keys = records.column("doc_key").to_numpy().astype(np.int64)
        self.doc_ids: list[str] = records.column("doc_id").to_pylist()
        self.urls: list[str] = [u or "" for u in records.column("url").to_pylist()]
        self.offsets, self.ids = flat_numpy(records.column("term_ids"))
        _, self.weights = flat_numpy(records.column("weights"))
        self.ids = self.ids.astype(np.int64)
        self.weights = self.weights.astype(np.float64)
        self.row_of_url: dict[str, int] = {}
        for row, url in enumerate(self.urls):
            self.row_of_url.setdefault(url, row)
        self.row_of_id = {d: row for row, d in enumerate(self.doc_ids)}
        postings = pq.read_table(root / "postings", columns=["term_id", "doc_key", "weight", "rem"])
        term = postings.column("term_id").to_numpy().astype(np.int64)
        by_term = np.lexsort((postings.column("doc_key").to_numpy(), term))
        self.post_term = term[by_term]
        self.post_row = np.searchsorted(self.doc_keys, postings.column("doc_key").to_numpy()[by_term]).astype(np.int64)
        self.post_rem = postings.column("rem").to_numpy().astype(np.float64)[by_term]
        self.post_weight = postings.column("weight").to_numpy().astype(np.float64)[by_term]
        n_terms = max(len(self.term_ids), int(self.ids.max()) + 1 if len(self.ids) else 0)
        # postings of term i are post_*[term_start[i]:term_start[i + 1]]
        self.term_start = np.searchsorted(self.post_term, np.arange(n_terms + 1)).astype(np.int64)
        self._dense = np.zeros(n_terms, dtype=np.float64)  # the query's weights by term id, reset after use

    def __len__(self) -> int:
        return len(self.doc_ids)

    def record(self, row: int) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, weights) of the record in ``row``, in the global order."""
        lo, hi = self.offsets[row], self.offsets[row + 1]
        return self.ids[lo:hi], self.weights[lo:hi]

    def canonicalise(self, terms: list[str], weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A rendered page in the index's global order.

        Terms the repository lacks have document frequency 0, so they come first (among
        themselves by term), with negative ids that match no posting.
        """
        unknown = sorted(t for t in terms if t not in self.term_ids)
        neg = {t: i - len(unknown) for i, t in enumerate(unknown)}
        ids = np.asarray([self.term_ids.get(t, neg.get(t, 0)) for t in terms], dtype=np.int64)
        order = np.argsort(ids, kind="stable")
        return ids[order], np.asarray(weights, dtype=np.float64)[order]

    def render_html(self, html: str, url: str = "") -> tuple[np.ndarray, np.ndarray]:
        """An HTML page rendered and canonicalised as the index's records were."""
        names, weights = render(PageFields.from_html(extract(html, url), url), self.min_weight_ratio)
        return self.canonicalise(names, weights)

    def query_record(self, ids: np.ndarray, weights: np.ndarray, t: float, *, page: str = "",
                     exclude_row: int | None = None) -> QueryResult:
        """Near-duplicates of a canonical record at threshold t, ranked by MWO (then doc_id)."""
        if not self.threshold - EPS <= t <= 1.0:
            raise ConfigError(f"-t {t}: this index answers queries with {self.threshold} <= t <= 1"
                              f" (rebuild it with --set index_threshold=...)")
        start = time.perf_counter()
        rem_r = suffix_weights(weights)
        n_prefix = int(np.count_nonzero(rem_r >= t - EPS))
        rows, hit_pos, hit_w, hit_rem = [], [], [], []
        for p in range(n_prefix):
            term = ids[p]
            if term < 0:
                continue
            lo, hi = self.term_start[term], self.term_start[term + 1]
            both = self.post_rem[lo:hi] >= t - EPS  # the term is in the other record's prefix at t too
            hit = self.post_row[lo:hi][both]
            rows.append(hit)
            hit_pos.append(np.full(len(hit), p, dtype=np.int64))
            hit_w.append(self.post_weight[lo:hi][both])
            hit_rem.append(self.post_rem[lo:hi][both])
        result = QueryResult(page, t, len(ids), n_prefix, 0, 0)
        if rows:
            row, pos = np.concatenate(rows), np.concatenate(hit_pos)
            w_s, rem_s = np.concatenate(hit_w), np.concatenate(hit_rem)
            if exclude_row is not None:
                mask = row != exclude_row
                row, pos, w_s, rem_s = row[mask], pos[mask], w_s[mask], rem_s[mask]
            cand, inverse = np.unique(row, return_inverse=True)
            result.after_prefix = len(cand)
            # overlap of the terms in both prefixes + the smaller weight left after the last of them
            overlap = np.bincount(inverse, weights=np.minimum(weights[pos], w_s), minlength=len(cand))
            _, from_end = np.unique(row[::-1], return_index=True)
            last = len(row) - 1 - from_end  # hits come in prefix order
            after = np.minimum(rem_r[pos[last]] - weights[pos[last]], rem_s[last] - w_s[last])
            survivors = cand[overlap + after >= t - EPS]
            result.after_positional = len(survivors)
            matches = []
            for s in survivors[self.approximate_mwo(ids, weights, survivors) >= t - EPS].tolist():
                s_ids, s_w = self.record(s)
                value = mwo(ids, weights, s_ids, s_w)
                if value >= t and value > 0:
                    matches.append(Match(self.doc_ids[s], self.urls[s], value))
            matches.sort(key=lambda m: (-m.mwo, m.doc_id))
            result.matches = matches
        result.seconds = time.perf_counter() - start
        return result

    def approximate_mwo(self, ids: np.ndarray, weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """float64 [len(rows)]: MWO of the record against each row, summed in plain floating point.

        One vectorised pass over the rows' records; it screens the candidates so that only
        those within EPS of t are verified with the exact-rounded kernel.
        """
        if not len(rows):
            return np.zeros(0, dtype=np.float64)
        known = ids >= 0
        self._dense[ids[known]] = weights[known]
        try:
            bounds, idx = ragged_take(self.offsets, rows)
            segment = np.repeat(np.arange(len(rows)), np.diff(bounds))
            # a term r lacks weighs 0 in the dense vector, so its minimum is 0
            contrib = np.minimum(self._dense[self.ids[idx]], self.weights[idx])
        finally:
            self._dense[ids[known]] = 0.0
        return np.bincount(segment, weights=contrib, minlength=len(rows))

    def query(self, page: str, t: float, *, url: str = "") -> QueryResult:
        """Near-duplicates of ``page``: an HTML file, or a URL / doc_id present in the index.

        An indexed page is answered from its stored record and is not its own match; an
        HTML file is rendered with the index's settings (``url`` is its URL, if known).
        """
        path = Path(page)
        if path.is_file():
            html, _ = decode_html(path.read_bytes())
            ids, weights = self.render_html(html, url)
            return self.query_record(ids, weights, t, page=page)
        row = self.row_of_url.get(page, self.row_of_id.get(page))
        if row is None:
            raise ConfigError(f"--page {page}: neither a file nor a URL or doc_id in the index")
        ids, weights = self.record(row)
        return self.query_record(ids, weights, t, page=page, exclude_row=row)


def format_result(result: QueryResult, top: int) -> str:
    """A query's answer as text: filter sizes, then the ranked near-duplicates."""
    lines = [
        f"query {result.page}  t={result.t}  terms={result.n_terms}  prefix={result.prefix_terms}"
        f"  candidates: prefix={result.after_prefix} positional={result.after_positional}"
        f"  near-duplicates={len(result.matches)}  ({result.seconds * 1000:.1f} ms)",
    ]
    for i, m in enumerate(result.matches[: top if top > 0 else None], 1):
        lines.append(f"{i:>4}. {m.mwo:.4f}  {m.doc_id}  {m.url}")
    if top > 0 and len(result.matches) > top:
        lines.append(f"      ... {len(result.matches) - top} more")
    return "\n".join(lines)
