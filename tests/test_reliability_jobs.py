"""Every job besides quilts: byte-identical tables for every partitioning of
tiers.JOB_PARTITIONINGS (5 shuffle partitions without AQE and the inputs reversed, extended tier),
against a reference run under the session's settings; _COMPLETE published last; a rerun reports
the complete run; new settings reuse docs/ and equal a fresh run (neardup, mwo).

(The quilt job has its own, deeper tests in test_reliability.py: kill, retry, stage reuse.)
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from tiers import JOB_PARTITIONINGS, Partitioning

from quiltdetect.common.config import merge_settings
from quiltdetect.documents.records import iter_warc_rows
from quiltdetect.mwo.config import MwoConfig
from quiltdetect.mwo.job import MwoJoinJob
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.neardup.job import NearDupJob
from quiltdetect.phrases.config import PhrasesConfig
from quiltdetect.phrases.job import PhrasesJob
from quiltdetect.reuse.config import ReuseConfig
from quiltdetect.reuse.job import DetectJob
from quiltdetect.sweep.config import SweepConfig
from quiltdetect.sweep.job import SweepJob

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample" / "synthetic-quilts.warc.gz"
TRUTH = REPO / "data" / "truth" / "synthetic-quilts.truth.jsonl"
N_PAGES = 160


@dataclass(frozen=True)
class Job:
    config: type
    run: Callable[[Any, Any], Any]
    tables: tuple[str, ...]  # result tables compared byte for byte (rows sorted)
    settings: dict[str, Any]  # small-corpus settings
    # A setting that changes results but not the document table: the resume check (shared code,
    # so two jobs cover it; the quilt job's own test covers stage reuse in depth).
    changed: dict[str, Any] | None


JOBS = {
    "neardup": Job(NearDupConfig, NearDupJob.run, ("pairs", "clusters"), {}, {"algorithm": "b"}),
    # blocks of 40 records: the self-join's block pairs span several cartesian partitions
    "mwo": Job(MwoConfig, MwoJoinJob.run, ("pairs", "records", "postings", "terms"),
               {"t": 0.4, "block_size": 40}, {"t": 0.6}),
    "sweep": Job(SweepConfig, SweepJob.run, ("outcomes/k=5/m=10", "outcomes/k=5/m=50"),
                 {"ks": [5], "ms": [10, 50], "cs": [2, 3], "thetas": [0.5], "pivot": [5, 50, 2, 0.5]},
                 None),
    "phrases": Job(PhrasesConfig, PhrasesJob.run,
                   ("popular_phrases", "doc_popular_counts", "covering_sets", "cover_scatter", "host_stats"),
                   {"cover_min_popular": 5, "min_host_pages": 3}, None),
    "reuse": Job(ReuseConfig, DetectJob.run, ("labeled", "pages", "neighborhoods", "chunk_matches"),
                 {"chunk_threshold": 3, "file_threshold": 3}, None),
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> list[str]:
    """160 pages of the bundled synthetic crawl as two JSONL files: every planted mirror,
    near-copy and quilt with its sources, then the first other pages (sites, boilerplate)."""
    root = tmp_path_factory.mktemp("inputs")
    with open(SAMPLE, "rb") as fh:
        crawl = [r for r in iter_warc_rows(fh, str(SAMPLE)) if r["skip_reason"] is None]
    planted: set[str] = set()
    for line in TRUTH.read_text(encoding="utf-8").splitlines():
        truth = json.loads(line)
        planted.update([truth["doc_id"], *(s["doc_id"] for s in truth["sources"])])
    first = [r for r in crawl if r["doc_id"] in planted]
    pages = (first + [r for r in crawl if r["doc_id"] not in planted])[:N_PAGES]
    assert len(first) < N_PAGES
    paths = []
    for name, part in (("a.jsonl", pages[::2]), ("b.jsonl", pages[1::2])):
        rows = [json.dumps({"id": p["doc_id"], "url": p["url"], "text": p["text"]}) + "\n" for p in part]
        (root / name).write_text("".join(rows), encoding="utf-8")
        paths.append(str(root / name))
    return paths


def rows_bytes(path: Path) -> bytes:
    """A table's rows in a canonical order, serialised: equal bytes = identical content."""
    rows = sorted(json.dumps(r, sort_keys=True, ensure_ascii=False, default=str) for r in pq.read_table(path).to_pylist())
    return "\n".join(rows).encode()


def configure(job: Job, inputs: list[str], out: Path, **extra: Any):
    top = {"top": 3} if "top" in {f.name for f in dataclasses.fields(job.config)} else {}
    return merge_settings(job.config, {"inputs": inputs, "output": str(out), **top, **job.settings, **extra})


@pytest.fixture(scope="module")
def references(spark, tmp_path_factory, inputs) -> dict[str, Path]:
    """Each job's run under the session's shuffle settings, made once and compared against."""
    made: dict[str, Path] = {}

    def reference(name: str) -> Path:
        if name not in made:
            out = tmp_path_factory.mktemp(f"reference-{name}") / "run"
            JOBS[name].run(spark, configure(JOBS[name], inputs, out))
            made[name] = out
        return made[name]

    return reference


@pytest.mark.parametrize(("partitioning", "reverse"), JOB_PARTITIONINGS)
@pytest.mark.parametrize("name", sorted(JOBS))
def test_same_bytes_for_any_partitioning_and_input_order(spark, tmp_path, inputs, references, name,
                                                         partitioning, reverse):
    job = JOBS[name]
    reference = references(name)
    out = tmp_path / "run"
    with Partitioning(spark, partitioning):
        job.run(spark, configure(job, list(reversed(inputs)) if reverse else inputs, out))
    for table in (*job.tables, "docs"):
        expected = rows_bytes(reference / table)
        assert expected, f"{name}: {table} is empty; the test corpus should exercise it"
        assert rows_bytes(out / table) == expected, (name, partitioning, table)


# The lifecycle (publish, rerun, resume) is one shared class: run for every job, of which
# tiers.py keeps one in the fast tier (neardup, which also resumes with new settings).
@pytest.mark.parametrize("name", sorted(JOBS))
def test_published_complete_rerun_and_resume_with_new_settings(spark, tmp_path, inputs, references, name):
    job = JOBS[name]
    first = references(name)
    # Published: _COMPLETE written last with the configuration; no temporary tables left.
    done = json.loads((first / "_COMPLETE").read_text())
    assert done["job"] == name and done["metrics"]["stages"]
    assert not (first / "_quiltdetect" / "tmp").exists()

    # The same run again, into a copy: complete already (reported, not recomputed) — except
    # reuse, which recomputes its results from the reused document table.
    again_out = tmp_path / "again"
    shutil.copytree(first, again_out)
    again = job.run(spark, configure(job, inputs, again_out))
    if name == "reuse":
        assert again.metrics.stages["ingest"]["reused"] is True
    else:
        assert again.metrics.stages["resume"]["complete_already"] is True

    if job.changed is None:
        return
    # Other settings into a copy: docs/ is reused, results equal a fresh run with those settings.
    resumed, fresh = tmp_path / "resumed", tmp_path / "fresh"
    shutil.copytree(first, resumed)
    result = job.run(spark, configure(job, inputs, resumed, **job.changed))
    assert result.metrics.stages["ingest"]["reused"] is True
    job.run(spark, configure(job, inputs, fresh, **job.changed))
    for table in job.tables:
        if (fresh / table).exists():
            assert rows_bytes(resumed / table) == rows_bytes(fresh / table), (name, table)
    assert json.loads((resumed / "_COMPLETE").read_text())["config"] == json.loads(
        (fresh / "_COMPLETE").read_text())["config"] | {"output": str(resumed)}
