"""What every file under an ``--input`` becomes, and which outputs a run may claim or delete,
decided before Spark starts (common/listing.py, documents/read.py's resolve_inputs, fs.check_output).
Pure Python: no Spark here; the runs over the same layouts are in test_hostile_inputs.py."""

from __future__ import annotations

import gzip
import io
import os
from pathlib import Path

import pytest

from quiltdetect.common import fs
from quiltdetect.common.config import ConfigError
from quiltdetect.common.runstate import file_fingerprint
from quiltdetect.documents import records
from quiltdetect.documents.inputs import resolve_inputs
from testkit.warc import PAGE, http_response, skip_reasons, warc_record


def warc(path: Path, n: int = 1, start: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(gzip.compress(warc_record(http_response(PAGE), rid=str(start + i)), mtime=0) for i in range(n)))
    return path


def zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


def crawl_with_everything(root: Path) -> Path:
    """The issue's directory: a WARC, and beside it, each holding one WARC or being one, a
    symlinked directory, an unreadable directory (made so by ``unreadable``), a hidden
    directory, a hidden file, zstandard and bzip2 files, a named pipe, a symlink to nothing,
    a README, and Spark's table metadata."""
    crawl = root / "crawl"
    warc(crawl / "a.warc.gz", start=0)
    warc(root / "elsewhere" / "b.warc.gz", start=10)
    os.symlink(root / "elsewhere", crawl / "linked")
    warc(crawl / "locked" / "c.warc.gz", start=20)
    warc(crawl / "_2024-01" / "d.warc.gz", start=30)
    warc(crawl / "_part-0.warc.gz", start=40)
    (crawl / "z.warc.zst").write_bytes(zstd(warc_record(http_response(PAGE), rid="50")))
    (crawl / "y.warc.bz2").write_bytes(b"BZh9")
    os.mkfifo(crawl / "pipe.warc.gz")
    os.symlink(root / "nowhere.warc.gz", crawl / "gone.warc.gz")
    (crawl / "README.txt").write_text("what this crawl is")
    (crawl / "_SUCCESS").write_text("")
    return crawl


@pytest.fixture
def unreadable(monkeypatch):
    """Directories and files named ``locked*`` cannot be read, as for a user without the
    permission (this suite may run as root, whom permission bits do not stop)."""
    listdir, access = os.listdir, os.access

    def fake_listdir(path):
        if os.path.basename(str(path)).startswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return listdir(path)

    def fake_access(path, mode, *a, **k):
        return not os.path.basename(str(path)).startswith("locked") and access(path, mode, *a, **k)

    monkeypatch.setattr(os, "listdir", fake_listdir)
    monkeypatch.setattr(os, "access", fake_access)


def test_every_file_under_a_directory_is_read_or_left_out_with_its_reason(tmp_path, unreadable):
    crawl = crawl_with_everything(tmp_path)
    found = resolve_inputs(None, [str(crawl)], None)
    assert [Path(f.path).relative_to(crawl).as_posix() for f in found] == [
        "a.warc.gz", "linked/b.warc.gz", "z.warc.zst"]
    reasons = {Path(p).relative_to(crawl).as_posix(): why for p, why in found.skipped}
    assert reasons == {
        "locked": "unreadable", "_2024-01": "hidden name", "_part-0.warc.gz": "hidden name",
        "y.warc.bz2": "unsupported compression", "pipe.warc.gz": "not a regular file",
        "gone.warc.gz": "broken symlink", "README.txt": "unknown format", "_SUCCESS": "table metadata",
    }
    assert found.taken_as == {str(crawl): ("path", 3)}
    # A glob of the same directory gives the same files and the same reasons.
    globbed = resolve_inputs(None, [str(crawl / "*")], None)
    assert [f.path for f in globbed] == [f.path for f in found]
    assert sorted(globbed.skipped) == sorted(found.skipped)
    assert globbed.taken_as == {str(crawl / "*"): ("glob", 3)}
    # Before Spark starts, fingerprinting the inputs survives a file that vanished since
    assert file_fingerprint(None, [*(f.path for f in found), str(crawl / "gone.warc.gz")])


def test_a_symlink_loop_is_walked_once_and_a_file_reached_twice_is_read_once(tmp_path):
    crawl = tmp_path / "crawl"
    warc(crawl / "sub" / "a.warc.gz")
    os.symlink(crawl, crawl / "sub" / "loop")
    os.symlink(crawl / "sub" / "a.warc.gz", crawl / "also.warc.gz")
    for pattern in (str(crawl), str(crawl / "**"), str(crawl / "**" / "*.warc.gz")):
        found = resolve_inputs(None, [pattern], None)
        assert [Path(f.path).name for f in found] == ["also.warc.gz"] or [Path(f.path).name for f in found] == [
            "a.warc.gz"], pattern
        assert len(found) == 1, (pattern, found)


def test_a_path_that_exists_is_that_path_and_only_a_pattern_that_names_nothing_is_a_glob(tmp_path):
    folder = tmp_path / "crawl [2024]"
    literal = warc(folder / "b[1].warc.gz")
    plain = warc(folder / "b1.warc.gz", start=5)
    colon = warc(folder / "t:12:00.warc.gz", start=9)
    assert [f.path for f in resolve_inputs(None, [str(literal)], None)] == [str(literal)]
    assert [f.path for f in resolve_inputs(None, [str(colon)], None)] == [str(colon)]
    assert {f.path for f in resolve_inputs(None, [str(folder)], None)} == {str(literal), str(plain), str(colon)}
    found = resolve_inputs(None, [str(folder / "b[12].warc.gz")], None)  # no such file: a glob
    assert [f.path for f in found] == [str(plain)] and found.taken_as[str(folder / "b[12].warc.gz")][0] == "glob"
    assert fs.hadoop_literal("/x/b[1]{a,b}*?.jsonl") == "/x/b\\[1\\]\\{a,b\\}\\*\\?.jsonl"
    with pytest.raises(ConfigError, match="no such file"):
        resolve_inputs(None, [str(tmp_path / "nothing*")], None)
    with pytest.raises(ConfigError, match=r"no file to read \(1 left out: 1 unknown format\)"):
        (tmp_path / "notes").mkdir()
        (tmp_path / "notes" / "a.txt").write_text("x")
        resolve_inputs(None, [str(tmp_path / "notes")], None)


def test_a_warc_gzipped_whole_gives_every_record_once():

    from quiltdetect.documents.read import _file_rows

    plain = b"".join(warc_record(http_response(PAGE), rid=str(i)) for i in range(5))
    whole = gzip.compress(plain, mtime=0)  # `gzip crawl.warc`: one member, not one per record
    first = list(records.iter_warc_rows(io.BytesIO(whole), "mem"))
    assert records.is_whole_gzip(first[-1])  # warcio's refusal, kept whole in the row (it was cut)
    assert first[-1]["skip_detail"].endswith("warcio recompress <path/to/file> <path/to/new_file>"), first[-1]
    rows = list(_file_rows("crawl.warc.gz", "warc", whole, 1 << 20))
    assert skip_reasons(rows) == [None] * 5 and [r["offset"] for r in rows] == [0, 1, 2, 3, 4]
    assert [r["doc_id"] for r in rows] == [r["doc_id"] for r in records.iter_warc_rows(io.BytesIO(plain), "m")]


def test_a_zstandard_warc_is_read_with_or_without_its_dictionary_frame():
    import zstandard

    from quiltdetect.documents.read import _file_rows

    bodies = [warc_record(http_response(PAGE), rid=str(i)) for i in range(3)]
    per_record = b"".join(zstd(b) for b in bodies)
    dictionary = zstandard.train_dictionary(1024, bodies * 40)
    with_dict = zstandard.ZstdCompressor(dict_data=dictionary)
    raw = dictionary.as_bytes()
    frame = (0x184D2A5D).to_bytes(4, "little") + len(raw).to_bytes(4, "little") + raw
    dict_file = frame + b"".join(with_dict.compress(b) for b in bodies)
    for data in (per_record, dict_file):
        rows = list(_file_rows("c.warc.zst", "warc", data, 1 << 20))
        assert [r["skip_reason"] for r in rows] == [None] * 3 and rows[2]["text"].startswith("Hello")


def test_overwrite_never_deletes_an_input_or_a_directory_that_is_not_a_run(tmp_path):
    crawl = tmp_path / "work" / "crawl"
    warc(crawl / "a.warc.gz")
    thesis = tmp_path / "u" / "thesis"
    thesis.mkdir(parents=True)
    (thesis / "ch1.tex").write_text("mine")
    run = tmp_path / "runs" / "q"
    (run / "_quiltdetect").mkdir(parents=True)
    (run / "quilts").mkdir()
    links = tmp_path / "links"
    links.mkdir()
    for name, target in (("crawl", crawl), ("work", crawl.parent), ("u", thesis.parent)):
        os.symlink(target, links / name)
    inputs = [str(crawl)]
    refused = {
        str(crawl): "lies inside the input", str(crawl.parent): "holds the input", "/": "holds the input",
        str(links / "crawl"): "lies inside the input", str(links / "work"): "holds the input",
        str(crawl / "out"): "lies inside the input",
        str(thesis.parent): "is not a quiltdetect output", str(links / "u"): "is not a quiltdetect output",
    }
    for output, why in refused.items():
        for overwrite in (True, False):
            with pytest.raises(ConfigError, match=why):
                fs.check_output(None, output, overwrite=overwrite, inputs=inputs)
    for ok in (str(run), str(tmp_path / "new" / "q"), str(tmp_path / "empty")):
        (tmp_path / "empty").mkdir(exist_ok=True)
        fs.check_output(None, ok, overwrite=True, inputs=inputs)
    # a glob input counts from its fixed part; an update's --previous run is an input too
    with pytest.raises(ConfigError, match="holds the input"):
        fs.check_output(None, str(tmp_path / "work"), overwrite=True, inputs=[str(crawl / "*.warc.gz")])
    assert (crawl / "a.warc.gz").exists() and (thesis / "ch1.tex").read_text() == "mine"


def test_a_message_about_a_file_is_whole_and_a_full_disk_names_its_disk(tmp_path, monkeypatch):
    import errno

    from quiltdetect.common import failures

    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.setattr(failures, "_free", lambda p: ("out" if str(p).startswith(str(out)) else "tmp",
                                                      10 if str(p).startswith(str(out)) else 68 << 30))
    said = failures.describe_os_error(OSError(errno.ENOSPC, "No space left on device", str(out / "metrics.json")),
                                      str(out))
    assert f"({out / 'metrics.json'})" in said and "the output's disk is the fuller one" in said, said
    assert "spark.local.dir" not in said
    spark_side = failures.describe(RuntimeError("java.io.IOException: No space left on device"), str(out))
    assert "the output's disk is the fuller one" in spark_side, spark_side


def test_a_glob_of_previous_runs_may_hold_the_output_but_a_previous_run_is_an_input(tmp_path):
    """`--previous 'runs/*' --output runs/w3` (docs/quilts.md): the glob picks a finished run
    other than the output, so the output may lie under it; a previous run named literally is
    an input like any other."""
    from quiltdetect.common.paths import input_paths
    from quiltdetect.quilts.config import QuiltConfig

    warc(tmp_path / "week3" / "a.warc.gz")
    (tmp_path / "runs" / "w2" / "_quiltdetect").mkdir(parents=True)
    cfg = QuiltConfig(inputs=[str(tmp_path / "week3")], previous=str(tmp_path / "runs" / "*"),
                      output=str(tmp_path / "runs" / "w3"))
    fs.check_output(None, cfg.output, overwrite=False, inputs=input_paths(cfg))
    cfg.previous = str(tmp_path / "runs")
    with pytest.raises(ConfigError, match="lies inside the input"):
        fs.check_output(None, cfg.output, overwrite=False, inputs=input_paths(cfg))
    cfg.previous, cfg.output = str(tmp_path / "runs" / "w2"), str(tmp_path / "runs")
    with pytest.raises(ConfigError, match="holds the input"):
        fs.check_output(None, cfg.output, overwrite=True, inputs=input_paths(cfg))


def test_each_file_takes_the_rank_of_the_first_input_that_names_it(tmp_path):
    """definitions §0: between two records of one doc_id the earlier --input's is kept, so each
    file carries its input's position whatever the paths sort as; a file two inputs name
    belongs to the first."""
    late = warc(tmp_path / "zz_week1" / "a.warc.gz")
    early = warc(tmp_path / "aa_week2" / "b.warc.gz", start=5)
    files = resolve_inputs(None, [str(tmp_path / "zz_week1"), str(tmp_path / "aa_week2"), str(late)], None)
    assert [(Path(f.path).name, f.rank) for f in files] == [("b.warc.gz", 1), ("a.warc.gz", 0)]
    again = resolve_inputs(None, [str(early), str(tmp_path)], None)
    assert {Path(f.path).name: f.rank for f in again} == {"b.warc.gz": 0, "a.warc.gz": 1}


def test_an_empty_directory_is_an_input_of_no_files_and_a_missing_path_still_fails(tmp_path):
    """Issue 73: an existing directory holding no file (or only hidden names and Spark's table
    metadata, as a job that wrote no rows leaves) is an input of no documents, as a scheduled
    crawl's empty day is: no error. A path that does not exist, a glob that matches nothing and
    a directory of files that are left out for another reason still fail at once."""
    empty, spark_left = tmp_path / "2026-01-05", tmp_path / "2026-01-06"
    empty.mkdir()
    spark_left.mkdir()
    (spark_left / "_SUCCESS").write_text("")
    (spark_left / ".part-0.crc").write_bytes(b"")
    found = resolve_inputs(None, [str(empty), str(spark_left)], None)
    assert list(found) == [] and found.taken_as == {str(empty): ("path", 0), str(spark_left): ("path", 0)}
    assert {Path(p).name: why for p, why in found.skipped} == {"_SUCCESS": "table metadata",
                                                               ".part-0.crc": "table metadata"}
    assert list(resolve_inputs(None, [str(tmp_path / "2026-01-0*")], None)) == []  # a glob of empty days
    with pytest.raises(ConfigError, match=r"--input \S+/2026-01-07: no such file"):
        resolve_inputs(None, [str(tmp_path / "2026-01-07")], None)
    with pytest.raises(ConfigError, match="no such file, or no files match"):
        resolve_inputs(None, [str(empty / "*.warc.gz")], None)
    (empty / "README.txt").write_text("not a crawl")
    with pytest.raises(ConfigError, match=r"no file to read \(1 left out: 1 unknown format\)"):
        resolve_inputs(None, [str(empty)], None)


def test_a_tree_a_thousand_levels_deep_is_listed(tmp_path):
    """Issue 73: the listing walked one Python frame per directory level (RecursionError at
    about 1,000); it keeps a stack of its own now, and lists in the same order. The tree is
    removed here, level by level: shutil.rmtree (pytest's clean-up of old temporary
    directories) recurses per level too, and would fail on it."""
    import sys

    chain = [tmp_path / "crawl"]
    try:
        for _ in range(sys.getrecursionlimit() + 100):  # (os.makedirs recurses per level too)
            chain.append(chain[-1] / "d")
            chain[-1].mkdir(parents=len(chain) == 2)
        deep = chain[-1]
        warc(deep / "a.warc.gz")
        warc(tmp_path / "crawl" / "b.warc.gz", start=1)
        os.symlink(tmp_path / "crawl", deep / "loop")  # a loop at the bottom: walked once
        found = resolve_inputs(None, [str(tmp_path / "crawl")], None)
        paths = [f.path for f in found]  # (compared, not printed: the deep path has 2,200 characters)
        assert paths == [str(tmp_path / "crawl" / "b.warc.gz"), str(deep / "a.warc.gz")], len(paths)
    finally:
        for name in ("loop", "a.warc.gz"):
            if os.path.lexists(chain[-1] / name):
                os.unlink(chain[-1] / name)
        for level in reversed(chain[1:]):
            if level.exists():
                level.rmdir()


def test_an_input_format_no_file_of_the_input_has_is_one_line_before_spark(tmp_path, capsys):
    """Issue 73: ``--input-format warc`` on a Parquet file read it as one file_error and
    completed with no document (exit 0). Now, when no file of an input is of the format given
    by its first bytes and some are of another, the command says so in one line (exit 2) before
    Spark starts; files whose first bytes show nothing sure are read as before."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from quiltdetect.cli import main

    pq.write_table(pa.table({"id": ["a"], "text": ["t"]}), tmp_path / "t.parquet")
    (tmp_path / "t.jsonl").write_text('{"id": "a", "text": "t"}\n')
    gz = warc(tmp_path / "w" / "a.warc.gz")
    (tmp_path / "w" / "notes.txt").write_text("read as a WARC too, with --input-format warc")
    assert main(["ingest", "--input", str(tmp_path / "t.parquet"), "--input-format", "warc",
                 "--output", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err == (f"quiltdetect: error: --input {tmp_path / 't.parquet'}: --input-format warc, but its file is not "
                   "WARC (t.parquet is Parquet); give the files' format, or leave --input-format out to infer each "
                   "file's format from its name\n"), err
    assert not (tmp_path / "o").exists()
    with pytest.raises(ConfigError, match=r"none of its 2 files is Parquet \(a.warc.gz is WARC\)"):
        resolve_inputs(None, [str(tmp_path / "w")], "parquet")
    with pytest.raises(ConfigError, match=r"its file is not Parquet \(t.jsonl is JSON\)"):
        resolve_inputs(None, [str(tmp_path / "t.jsonl")], "parquet")
    assert [f.path for f in resolve_inputs(None, [str(tmp_path / "w")], "wet")] == [str(gz), str(tmp_path / "w" / "notes.txt")]
    assert len(resolve_inputs(None, [str(tmp_path / "t.jsonl")], "jsonl")) == 1
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "empty.parquet").write_bytes(b"")  # nothing sure: a file_error when read, as before
    assert len(resolve_inputs(None, [str(tmp_path / "e")], "parquet")) == 1


def test_a_run_of_no_document_says_why_in_one_line():
    """Issue 73: the summary line of a run that read no (new) document (common/metrics.py):
    an empty input, files none of which could be read (each a file_error: with formats inferred
    from their names, a run goes on), records all skipped; nothing when documents were read."""
    from quiltdetect.common.metrics import no_documents_note

    empty = {"files": 0, "records": 0, "documents": 0, "skipped": {}}
    assert no_documents_note(empty) == ("0 documents: the inputs hold none (empty files or directories); "
                                        "every table is empty")
    assert no_documents_note({**empty, "documents": 6, "previous_documents": 6, "new_documents": 0,
                              "already_seen": 0}).startswith("0 new documents: the inputs hold none")
    broken = {"files": 2, "records": 2, "documents": 0, "skipped": {"file_error": 2}}
    assert no_documents_note(broken).startswith("warning: 0 documents: none of the 2 files could be read")
    skipped = {"files": 1, "records": 3, "documents": 0, "skipped": {"not_html": 3}}
    assert no_documents_note(skipped) == "0 documents: every record was skipped (see skipped= on the ingest line)"
    for read in ({**empty, "documents": 1}, {**empty, "new_documents": 0, "already_seen": 4}, {}):
        assert no_documents_note(read) is None
