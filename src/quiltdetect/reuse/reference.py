"""Plain in-memory implementation of definitions §4, written from the definitions: the parity oracle.

No Spark and none of the job's data layout: dictionaries and Counters over whole documents.
"""

from __future__ import annotations

import hashlib
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from urllib.parse import urlsplit

from quiltdetect.kernel.unicode import compose


@dataclass(frozen=True)
class RefDoc:
    doc_id: str
    url: str
    host: str
    text: str


def _chunks(text: str) -> list[str]:
    """Lines in one Unicode form (definitions §0, case kept), white space collapsed; empty ones dropped."""
    lines = (" ".join(compose(line).split()) for line in (text or "").split("\n"))
    return [line for line in lines if line]


def _h(s: str) -> str:
    return hashlib.sha1(s.encode("utf-8", "surrogatepass")).hexdigest()


def ref_recursion_error(url: str, max_repeats: int, max_depth: int) -> str | None:
    path = urlsplit(url).path if url else ""
    comps = path.split("/")
    dirs = [c for c in comps[:-1] if c]
    if len(dirs) + 1 > max_depth:
        return "too_deep"
    every = dirs + [comps[-1]] if comps[-1] else dirs
    if every and Counter(every).most_common(1)[0][1] > max_repeats:
        return "repeated_component"
    return None


def ref_neighborhoods(host: str, url: str) -> list[str]:
    if not host:
        return []
    dirs = [c for c in urlsplit(url).path.split("/")[:-1] if c]
    return [host + "/" + "".join(d + "/" for d in dirs[:i]) for i in range(len(dirs) + 1)]


def ref_clean(docs: list[RefDoc], max_repeats: int, max_depth: int) -> tuple[list[RefDoc], dict[str, str]]:
    """Documents kept, and doc_id -> reason for those removed as recursion errors."""
    removed = {d.doc_id: r for d in docs if (r := ref_recursion_error(d.url, max_repeats, max_depth))}
    return [d for d in docs if d.doc_id not in removed], removed


def ref_vectors(docs: list[RefDoc], stop: set[str]) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """doc_id -> (file hash, [(chunk hash, chunk text)] without stop chunks); stop = stop texts."""
    stop_h = {_h(t) for t in stop}
    out = {}
    for d in docs:
        chunks = _chunks(d.text)
        out[d.doc_id] = (_h("\n".join(chunks)), [(_h(c), c) for c in chunks if _h(c) not in stop_h])
    return out


def ref_discover(docs: list[RefDoc], stop: set[str], chunk_threshold: int, file_threshold: int) -> dict:
    """Blind discovery: labeled chunk/file hashes with occurrences, and the frequency distributions."""
    stop_h = {_h(t) for t in stop}
    vectors = ref_vectors(docs, stop)
    chunk_count: Counter[str] = Counter(h for _, vec in vectors.values() for h, _ in vec)
    file_count: Counter[str] = Counter(f for f, _ in vectors.values() if f not in stop_h)
    return {
        "labeled_chunks": {h: n for h, n in chunk_count.items() if n > chunk_threshold},
        "labeled_files": {h: n for h, n in file_count.items() if n > file_threshold},
        "chunk_frequency": Counter(chunk_count.values()),
        "file_frequency": Counter(file_count.values()),
    }


def ref_corpus_labeled(docs: list[RefDoc], stop: set[str], min_chars: int) -> tuple[set[str], set[str]]:
    """Informed L from a corpus: its chunks of >= min_chars characters and its files (minus stop)."""
    stop_h = {_h(t) for t in stop}
    vectors = ref_vectors(docs, stop)
    chunks = {h for _, vec in vectors.values() for h, text in vec if len(text) >= min_chars}
    files = {f for f, _ in vectors.values() if f not in stop_h}
    return chunks, files


def ref_detect(docs: list[RefDoc], stop: set[str], l_chunks: set[str], l_files: set[str],
               partial_threshold: float | None, badness_threshold: float | None) -> dict:
    """Pages (contains, partial target), neighborhoods (badness, bad) and the thresholds used."""
    vectors = ref_vectors(docs, stop)
    pages = {}
    for d in docs:
        file_h, vec = vectors[d.doc_id]
        n_lab = sum(1 for h, _ in vec if h in l_chunks)
        contains = n_lab / len(vec) if vec else None
        pages[d.doc_id] = {"n_chunks": len(vec), "n_labeled_chunks": n_lab, "contains": contains,
                           "file_match": file_h in l_files}
    scored = [p["contains"] for p in pages.values() if p["contains"] is not None]
    page_thr = partial_threshold if partial_threshold is not None else (
        statistics.fmean(scored) + statistics.pstdev(scored) if scored else 0.0)
    for p in pages.values():
        p["partial_target"] = p["contains"] is not None and p["contains"] > page_thr
    members: dict[str, list[str]] = defaultdict(list)
    for d in docs:
        if pages[d.doc_id]["contains"] is not None:
            for prefix in ref_neighborhoods(d.host, d.url):
                members[prefix].append(d.doc_id)
    hoods = {}
    for prefix, ids in members.items():
        hoods[prefix] = {
            "n_pages": len(ids),
            "n_chunks": sum(pages[i]["n_chunks"] for i in ids),
            "bad_chunks": sum(pages[i]["n_labeled_chunks"] for i in ids),
            "badness": statistics.fmean(pages[i]["contains"] for i in ids),
        }
    values = [h["badness"] for h in hoods.values()]
    nb_thr = badness_threshold if badness_threshold is not None else (
        statistics.fmean(values) + statistics.pstdev(values) if values else 0.0)
    for h in hoods.values():
        h["bad"] = h["badness"] > nb_thr
    return {"pages": pages, "neighborhoods": hoods, "page_threshold": page_thr, "badness_threshold": nb_thr}
