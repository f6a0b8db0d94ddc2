"""Hostile inputs, round three (issue 60), as runs: a directory of every kind of entry, file
names that look like globs, two runs into one output, a full disk, a caller's DataFrame with
dotted column names. The listing rules themselves are checked without Spark in
test_inputs_listing.py."""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_hostile_tables import prose
from test_inputs_listing import crawl_with_everything, unreadable  # noqa: F401 (a fixture)

from quiltdetect.cli import main
from quiltdetect.common import fs
from quiltdetect.common.config import ConfigError, merge_settings
from quiltdetect.quilts.config import QuiltConfig
from quiltdetect.quilts.job import QuiltsJob

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"


def lines(*ids: str) -> str:
    return "".join(json.dumps({"id": i, "url": f"http://t.example/{i}", "text": prose(len(i))}) + "\n" for i in ids)


def test_a_directory_of_every_kind_of_entry_reads_each_file_once_and_names_the_rest(
        spark, tmp_path, unreadable, capsys):  # noqa: F811
    crawl = crawl_with_everything(tmp_path)
    (crawl / "br[1].jsonl").write_text(lines("bracket-1", "bracket-2"))
    (crawl / "br1.jsonl").write_text(lines("plain-1"))
    (crawl / "t:12:00.jsonl").write_text(lines("colon-1"))
    (crawl / "{x}.jsonl").write_text(lines("brace-1"))
    (crawl / "locked-rows.jsonl").write_text(lines("never-read"))
    out = tmp_path / "out"
    assert main(["ingest", "--input", str(crawl), "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    docs = sorted(r["doc_id"] for r in pq.read_table(out / "docs", columns=["doc_id"]).to_pylist())
    assert [d for d in docs if not d.startswith("<urn")] == ["brace-1", "bracket-1", "bracket-2", "colon-1", "plain-1"]
    assert len([d for d in docs if d.startswith("<urn")]) == 3  # a.warc.gz, linked/b.warc.gz, z.warc.zst
    metrics = json.loads((out / "metrics.json").read_text())
    stage = metrics["stages"]["ingest"]
    assert stage["files"] == 7 and stage["skipped"] == {}, stage
    left = {Path(e["path"]).name: e["reason"] for e in metrics["skipped_files"]}
    assert left == {"locked": "unreadable", "locked-rows.jsonl": "unreadable", "_2024-01": "hidden name",
                    "_part-0.warc.gz": "hidden name", "y.warc.bz2": "unsupported compression",
                    "pipe.warc.gz": "not a regular file", "gone.warc.gz": "broken symlink",
                    "README.txt": "unknown format", "_SUCCESS": "table metadata"}
    assert metrics["inputs"] == [{"input": str(crawl), "taken_as": "path", "files": 7}]
    assert f"input {crawl}: a path, 7 files read" in printed
    assert ("left out: 9 files (broken symlink 1, hidden name 2, not a regular file 1, table metadata 1, "
            "unknown format 1, unreadable 2, unsupported compression 1; each named in metrics.json, "
            "skipped_files)") in printed, printed


def test_overwrite_and_an_output_inside_an_input_are_refused_before_anything_is_deleted(tmp_path, capsys):
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    (crawl / "a.jsonl").write_text(lines("a"))
    mine = tmp_path / "u" / "thesis"
    mine.mkdir(parents=True)
    (mine / "ch1.tex").write_text("mine")
    for output, why in ((crawl, "lies inside the input"), (tmp_path, "holds the input"),
                        (crawl / "out", "lies inside the input"), (tmp_path / "u", "is not a quiltdetect output")):
        assert main(["ingest", "--input", str(crawl), "--output", str(output), "--overwrite"]) == 2
        err = capsys.readouterr().err
        assert why in err and err.count("\n") == 1, err
    assert (crawl / "a.jsonl").exists() and (mine / "ch1.tex").exists() and not (crawl / "out").exists()


def quilt_run(out: Path, theta: float) -> QuiltsJob:
    return merge_settings(QuiltConfig, {"inputs": [str(SAMPLE / "synthetic-quilts.warc.gz")], "output": str(out),
                                        "theta": theta, "top": 0}).validate()


# When run B starts, as a file of run A's output appears: at once (the two race for the
# claim), after A's ingest stage, after its gram table, and when its quilts/ table is in place
# (A is about to write metrics.json and _COMPLETE).
OFFSETS = {"at-once": None, "after-ingest": "_quiltdetect/stages/ingest.json",
           "after-grams": "_quiltdetect/stages/gram-buckets-k*.json", "after-quilts-table": "quilts/_SUCCESS"}


@pytest.mark.parametrize("lock, offset", [
    (True, "at-once"), (True, "after-grams"), (True, "after-ingest"), (True, "after-quilts-table"),
    (False, "after-ingest"), (False, "after-grams"), (False, "after-quilts-table"),
], ids=lambda v: {True: "local-lock", False: "object-store-no-lock"}.get(v, v) if isinstance(v, bool) else v)
def test_two_runs_into_one_output_one_completes_the_other_fails_with_one_line(
        spark, tmp_path, monkeypatch, lock, offset):
    """Run A (θ 0.5) and, at each offset into A, run B (θ 0.99) into the same output. With the
    local lock, the second to claim is refused at once; without one (as on an object store), B
    takes the output over and A stops at its next commit. Either way exactly one completes, the
    other fails with one line naming the other run, and the output is the winner's own."""
    if not lock:
        import fcntl

        monkeypatch.setattr(fcntl, "flock", lambda *a: None)
    out = tmp_path / "out"
    outcome: dict[str, object] = {}

    def run(name: str, theta: float) -> None:
        try:
            outcome[name] = QuiltsJob.run(spark, quilt_run(out, theta)).metrics.stages["quilts"]["quilts"]
        except ConfigError as exc:
            outcome[name] = exc

    first = threading.Thread(target=run, args=("A", 0.5))
    first.start()
    if OFFSETS[offset] is not None:
        deadline = time.time() + 120
        while not list(out.glob(OFFSETS[offset])) and first.is_alive() and time.time() < deadline:
            time.sleep(0.02)
        assert first.is_alive() or offset == "after-quilts-table", outcome  # B starts while A runs
    a_ended_first = not first.is_alive()
    run("B", 0.99)
    first.join()
    failed = {k: v for k, v in outcome.items() if isinstance(v, ConfigError)}
    if a_ended_first:  # rarely, A ended between its last table and B's start: B simply ran after it
        assert json.loads((out / "_COMPLETE").read_text())["config"]["theta"] == 0.99
        return
    assert len(failed) == 1, outcome
    (loser, error), = failed.items()
    winner = "B" if loser == "A" else "A"
    said = str(error)
    assert "\n" not in said and ("being written by another run" in said if lock else "taken over by another run" in said)
    assert "run 2" in said and "pid" in said, said  # names the other run
    done = json.loads((out / "_COMPLETE").read_text())
    assert done["config"]["theta"] == {"A": 0.5, "B": 0.99}[winner] and done["run_id"] in said, (done, said)
    assert len(pq.read_table(out / "quilts")) == outcome[winner]
    assert not (out / "_quiltdetect" / "tmp").exists() or not any((out / "_quiltdetect" / "tmp").iterdir())


def test_a_full_disk_while_the_run_is_published_is_one_line_and_leaves_no_partial_file(
        spark, tmp_path, monkeypatch, capsys):
    real_open = open

    def full(path, mode="r", *a, **k):
        if "metrics.json.partial" in str(path) and "w" in mode:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_open(path, mode, *a, **k)

    monkeypatch.setattr(fs, "open", full, raising=False)
    (tmp_path / "in.jsonl").write_text(lines("a", "b"))
    out = tmp_path / "out"
    assert main(["-q", "ingest", "--input", str(tmp_path / "in.jsonl"), "--output", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "the output's disk is the fuller one" in err, err  # one disk here: the output's named
    assert f"a disk filled up while writing ({out / 'metrics.json'})" in err and "resumes" in err, err
    assert not [p for p in out.rglob("*.partial")] and not (out / "_COMPLETE").exists()


def test_the_api_takes_dotted_column_names_refuses_a_stream_and_knows_a_frame_it_ran(spark, tmp_path):
    from quiltdetect import find_near_duplicates

    rows = [(f"d{i}", f"http://h{i % 3}.example/{i}", prose(i % 4)) for i in range(8)]
    frame = spark.createDataFrame(rows, "`meta.id` string, `page.url` string, `body.text` string")
    out = str(tmp_path / "nd")
    first = find_near_duplicates(frame, output=out, id_col="meta.id", url_col="page.url", text_col="body.text")
    assert first.duplicate_of.count() > 0
    stamp = (tmp_path / "nd" / "_COMPLETE").stat().st_mtime_ns
    again = find_near_duplicates(frame, output=out, id_col="meta.id", url_col="page.url", text_col="body.text")
    assert again.kept.count() == first.kept.count()
    assert (tmp_path / "nd" / "_COMPLETE").stat().st_mtime_ns == stamp  # reported, not recomputed
    other = spark.createDataFrame(rows[:5], frame.schema)
    with pytest.raises(ConfigError, match="other inputs"):
        find_near_duplicates(other, output=out, id_col="meta.id", url_col="page.url", text_col="body.text")
    stream = spark.readStream.format("rate").load()
    with pytest.raises(ConfigError, match="streaming DataFrame"):
        find_near_duplicates(stream, output=str(tmp_path / "s"))
    assert not os.path.exists(tmp_path / "s")
    # issue 73: two columns that Spark cannot tell apart (its AMBIGUOUS_REFERENCE): one line
    both = spark.createDataFrame(rows, "id string, text string, TEXT string")
    with pytest.raises(ConfigError, match=r"^the DataFrame: two columns named text \(text, TEXT: names that "
                                          r"differ only in case\); rename or drop one$"):
        find_near_duplicates(both, output=str(tmp_path / "t"))
    assert not os.path.exists(tmp_path / "t")


def test_decided_cases_of_round_three(spark, tmp_path, capsys):
    """NaN ids, a JSON array file, a UTF-16 header on an ASCII page, a segmented record, IDN and
    IPv6 spellings of one server, and --foreign on documents without urls (docs/reliability.md)."""
    import gzip

    import pyarrow as pa

    from testkit.warc import http_response, warc_record

    crawl = tmp_path / "crawl"
    crawl.mkdir()
    pq.write_table(pa.table({"id": [1.0, float("nan"), float("nan")], "text": [prose(1), prose(2), prose(3)]}),
                   crawl / "nan.parquet")
    (crawl / "array.json").write_text(json.dumps(
        [{"id": f"arr-{i}", "text": prose(10 + i)} for i in range(3)], indent=2))
    page = b"<html><body><p>" + prose(7).encode() + b"</p></body></html>"

    def record(rid: int, url: str, body: bytes, ctype: str = "text/html", extra: str = "") -> bytes:
        raw = warc_record(http_response(body, ctype), rid=str(rid), extra=extra).replace(
            f"http://example.com/{rid}".encode(), url.encode())
        return gzip.compress(raw, mtime=0)

    (crawl / "c.warc.gz").write_bytes(b"".join([
        record(1, "http://ascii.example/", page, "text/html; charset=utf-16"),
        record(2, "http://seg.example/", page, extra="WARC-Segment-Number: 1\r\n"),
        record(3, "http://bücher.de/a", page), record(4, "http://xn--bcher-kva.de/b", page),
        record(5, "http://[2001:DB8:0:0:0:0:0:1]/a", page), record(6, "http://[2001:db8::1]/b", page),
    ]))
    out = tmp_path / "q"
    assert main(["quilts", "--input", str(crawl), "--output", str(out), "--foreign", "host", "-c", "1"]) == 0
    printed = capsys.readouterr().out
    docs = {r["doc_id"]: r for r in pq.read_table(out / "docs").to_pylist()}
    stage = json.loads((out / "metrics.json").read_text())["stages"]["ingest"]
    assert stage["skipped"] == {"missing_id": 2, "segmented_record": 1}, stage
    assert {"1.0", "arr-0", "arr-1", "arr-2"} <= set(docs)
    by_url = {r["url"]: r for r in docs.values() if r["url"]}
    assert by_url["http://ascii.example/"]["text"].startswith(prose(7)[:30])
    assert by_url["http://bücher.de/a"]["host"] == by_url["http://xn--bcher-kva.de/b"]["host"] == "xn--bcher-kva.de"
    assert by_url["http://[2001:DB8:0:0:0:0:0:1]/a"]["host"] == by_url["http://[2001:db8::1]/b"]["host"] == "2001:db8::1"
    assert ("note: 4 of 9 documents have no host (no url): --foreign host counts them as one server, "
            "so none of them is another's source") in printed, printed
