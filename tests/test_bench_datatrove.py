"""bench/datatrove_side_by_side.py: both tools get the same pages, and each tool's dropped pages
are read back by id (no Spark, no datatrove)."""

from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq

from testkit.scripts import bench_script

side_by_side = bench_script("datatrove_side_by_side")


def test_the_corpus_is_split_into_files_of_the_same_rows_in_order(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    rows = [{"id": f"d{i}", "url": f"http://h/{i}", "text": f"page {i}", "ip": None} for i in range(7)]
    pq.write_table(pa.Table.from_pylist(rows[:4]), corpus / "part-0.parquet")
    pq.write_table(pa.Table.from_pylist(rows[4:]), corpus / "part-1.parquet")
    assert side_by_side.split_corpus(corpus, 3, tmp_path / "input") == 7
    parts = sorted((tmp_path / "input").glob("*.parquet"))
    assert [pq.read_table(p).num_rows for p in parts] == [3, 3, 1]
    got = pa.concat_tables([pq.read_table(p) for p in parts])
    assert got.column_names == ["id", "url", "text"] and got.column("id").to_pylist() == [r["id"] for r in rows]


def test_each_tools_dropped_pages_are_read_by_id(tmp_path):
    out = tmp_path / "quiltdetect"
    (out / "duplicate_of").mkdir(parents=True)
    pq.write_table(pa.table({"doc_id": ["a", "b"], "duplicate_of": ["c", "c"]}), out / "duplicate_of" / "part-0.parquet")
    assert side_by_side.quiltdetect_dropped(out) == {"a", "b"}
    (out / "clusters").mkdir()
    pq.write_table(pa.table({"doc_id": ["a", "b", "c"], "cluster_id": ["a", "a", "a"]}), out / "clusters" / "part-0.parquet")
    assert side_by_side.quiltdetect_clustered(out) == {"a", "b", "c"}
    removed = tmp_path / "datatrove" / "removed"
    removed.mkdir(parents=True)
    with gzip.open(removed / "00000.jsonl.gz", "wt") as f:
        f.write(json.dumps({"id": "b", "text": "x"}) + "\n" + json.dumps({"id": "d", "text": "y"}) + "\n")
    (removed / "00001.jsonl").write_text(json.dumps({"id": "e", "text": "z"}) + "\n")
    assert side_by_side.datatrove_dropped(tmp_path / "datatrove") == {"b", "d", "e"}


def test_the_install_line_is_the_one_the_docs_give_with_the_extras_the_pipeline_imports():
    """datatrove's MinHash pipeline imports ``regex`` and ``tokenizers`` (its ``processing``
    extra) and reads Parquet (``io``): a bare ``pip install datatrove`` does not run it. The
    script's line and docs/neardup.md's must be the same working one."""
    import re
    from pathlib import Path

    def install_line(text: str) -> str:
        found = re.search(r"/tmp/dt/bin/pip install ([^\n#]+)", text)
        assert found, "no datatrove install line"
        return found.group(1).strip()

    script = install_line(side_by_side.__doc__)
    docs = install_line((Path(__file__).resolve().parents[1] / "docs" / "neardup.md").read_text())
    assert script == docs
    assert "datatrove[io,processing]" in script


def test_each_command_is_timed_after_what_the_one_before_wrote_is_on_disk(tmp_path, monkeypatch):
    """The harness deletes one tool's outputs and starts the other's command: without a sync
    first, the command timed pays for writing back what the other tool wrote."""
    events = []
    monkeypatch.setattr(side_by_side.os, "sync", lambda: events.append("sync"))
    monkeypatch.setattr(side_by_side.time, "perf_counter", lambda: events.append("clock") or 0.0)
    real_run = side_by_side.subprocess.run
    monkeypatch.setattr(side_by_side.subprocess, "run",
                        lambda *a, **k: events.append("run") or real_run(["true"], check=False))
    assert side_by_side.timed(["true"], tmp_path / "log") == 0.0
    assert events == ["sync", "clock", "run", "clock"]
