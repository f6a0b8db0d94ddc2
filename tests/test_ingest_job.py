"""``quiltdetect ingest``: the document table written once, read back by any job as its input,
with the same results as reading the crawl itself."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from quiltdetect.cli import main
from quiltdetect.doctable.job import IngestConfig

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
CRAWL = [str(SAMPLE / "synthetic-quilts.warc.gz"), str(SAMPLE / "clueweb-quirk.warc.gz")]


def test_conf_file_equals_the_dataclass_defaults():
    assert yaml.safe_load((REPO / "conf" / "ingest.yaml").read_text()) == dataclasses.asdict(IngestConfig())


def rows(path: Path, drop: tuple[str, ...] = ()) -> list[str]:
    table = pq.read_table(path).to_pylist()
    return sorted(json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True, default=str) for r in table)


def test_a_job_on_the_ingested_table_equals_the_job_on_the_crawl(spark, tmp_path, capsys):
    inputs = [a for p in CRAWL for a in ("--input", p)]
    assert main(["ingest", *inputs, "--output", str(tmp_path / "ingest"), "--write-rejects"]) == 0
    printed = capsys.readouterr().out
    assert "largest hosts" in printed
    assert f"outputs in {tmp_path / 'ingest'}: docs/, rejects/, metrics.json, config.yaml" in printed
    assert (tmp_path / "ingest" / "_COMPLETE").exists() and (tmp_path / "ingest" / "rejects").is_dir()
    metrics = json.loads((tmp_path / "ingest" / "metrics.json").read_text())
    assert metrics["stages"]["ingest"]["documents"] == 429

    quilt_opts = ["-c", "3", "--exclude-attributed"]  # exclude_attributed reads the anchors
    assert main(["quilts", *inputs, "--output", str(tmp_path / "direct"), *quilt_opts]) == 0
    assert main(["quilts", "--input", str(tmp_path / "ingest" / "docs"), "--output", str(tmp_path / "via"),
                 *quilt_opts]) == 0
    for table in ("quilts", "doc_stats"):
        assert rows(tmp_path / "via" / table) == rows(tmp_path / "direct" / table), table
        assert rows(tmp_path / "via" / table)
    # Every field of the document table survives, including where each page came from.
    assert rows(tmp_path / "via" / "docs") == rows(tmp_path / "direct" / "docs")
