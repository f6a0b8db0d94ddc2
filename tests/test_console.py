"""The console (issue 73): only what concerns the run reaches it.

Spark's and the JVM's start-up lines are dropped unless -v (``common/jvmlog.py``); files the
project wrote or ships are not counted as left out (``common/ownfiles.py``); non-ASCII paths
work under ``LC_ALL=C`` (``session.jvm_locale``) and spark-submit's JVM under such a locale is
refused in one line; Ctrl-C and SIGTERM stop a run with one line, 130 / 143, and the same
command resumes (``common/interrupts.py``). The pure-Python checks are in the fast tier; the two
real runs (a C locale; a real SIGINT and SIGTERM) are in the extended tier.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from quiltdetect.cli import main
from quiltdetect.common import fs, interrupts, jvmlog, ownfiles, session
from quiltdetect.common.config import ConfigError
from quiltdetect.common.metrics import RunMetrics
from quiltdetect.quilts import cli as quilts_cli

REPO = Path(__file__).resolve().parents[1]

# What the project itself writes to stderr: each stage as it starts ("quilts: grams - ..."),
# the UI address, the class archive's note, and its own "quiltdetect: ..." lines.
PROJECT_LINE = re.compile(r"[a-z]+( [a-z]+)?: [\w-]+ - |Spark UI: |the JVM writes its class archive |quiltdetect: ")


def foreign_lines(stderr: str) -> list[str]:
    """The lines of a run's stderr that the project did not write."""
    return [line for line in stderr.splitlines() if line.strip() and not PROJECT_LINE.match(line)]


# The demo's stderr on main before issue 73 (verbatim but the project's own lines), then lines
# that must pass whatever they look like: a real error with its stack trace, a worker's traceback.
STARTUP = """\
WARNING: Using incubator modules: jdk.incubator.vector
Using Spark's default log4j profile: org/apache/spark/log4j2-defaults.properties
26/12/06 01:23:09 WARN Utils: Your hostname, vm, resolves to a loopback address: 127.0.0.1; using 192.0.2.2 instead (on interface eth0)
26/12/06 01:23:09 WARN Utils: Set SPARK_LOCAL_IP if you need to bind to another address
Using Spark's default log4j profile: org/apache/spark/log4j2-defaults.properties
Setting default log level to "WARN".
To adjust logging level use sc.setLogLevel(newLevel). For SparkR, use setLogLevel(newLevel).
26/12/06 01:23:10 WARN NativeCodeLoader: Unable to load native-hadoop library for your platform... using builtin-java classes where applicable
26/12/06 01:23:10 WARN Utils: Service 'SparkUI' could not bind on port 4040. Attempting port 4041.
26/12/06 01:23:12 WARN WindowExec: No Partition Defined for Window operation! Moving all data to a single partition, this can cause serious performance degradation.
26/12/06 01:23:13 WARN DataSource: All paths were ignored:
  file:/tmp/quiltdetect-warehouse-0/gram_buckets_5f3a
26/12/06 01:23:14 WARN MapPartitionsRDD: RDD 41 was locally checkpointed, its lineage has been truncated and cannot be recomputed after unpersisting
"""
KEPT = """\
26/12/06 01:28:26 ERROR Executor: Exception in task 0.0 in stage 14.0 (TID 29)
java.io.FileNotFoundException: File /tmp/x/donn?es/pages.jsonl does not exist
\tat org.apache.hadoop.fs.RawLocalFileSystem.deprecatedGetFileStatus(RawLocalFileSystem.java:917)
Caused by: java.lang.OutOfMemoryError: Java heap space
26/12/06 01:28:27 WARN TaskSetManager: Lost task 1.0 in stage 3.0: a warning no one has seen before
Traceback (most recent call last):
  File "/usr/lib/python3/dist-packages/pyspark/worker.py", line 1, in main
MemoryError
a last line without its newline"""


def filtered(text: str, monkeypatch) -> str:
    written: list[str] = []
    monkeypatch.setattr(jvmlog, "_write", written.append)
    reader = jvmlog.Filter(-1)
    for i in range(0, len(text), 7):  # in pieces that cut lines anywhere, as a pipe does
        reader.feed(text[i:i + 7].encode())
    reader.feed(b"", end=True)
    return "".join(written)


def test_the_jvms_start_up_lines_are_dropped_and_every_other_line_kept(monkeypatch):
    monkeypatch.setattr(jvmlog, "show_all", False)
    assert filtered(STARTUP + KEPT, monkeypatch) == KEPT + "\n"
    # once the run is interrupted, the cancelled tasks' errors are not shown either (-v shows them)
    monkeypatch.setattr(interrupts, "_received", signal.SIGINT)
    assert filtered(KEPT, monkeypatch) == ""


def test_the_jvm_of_the_console_gets_a_utf8_locale_when_its_own_is_not():
    assert session.jvm_locale({"LC_ALL": "C"}) in ({"LC_ALL": name} for name in session.UTF8_LOCALES)
    assert session.jvm_locale({"LANG": "C.UTF-8", "LC_CTYPE": "POSIX"}) != {}
    assert session.jvm_locale({"LANG": "C.UTF-8"}) == {}
    assert session.jvm_locale({"LC_ALL": "C.UTF-8", "LANG": "C"}) == {}


class _System:
    def __init__(self, encoding: str) -> None:
        self.encoding = encoding

    def getProperty(self, key: str) -> str:  # noqa: N802 (Java's name)
        assert key == "sun.jnu.encoding"
        return self.encoding


class _Spark:
    """A session whose JVM names files in ``encoding``."""

    def __init__(self, encoding: str) -> None:
        self._jvm = type("Jvm", (), {"java": type("Java", (), {"lang": type("Lang", (), {"System": _System(encoding)})})})


def test_a_jvm_that_cannot_name_a_path_is_refused_in_one_line(monkeypatch):
    """spark-submit's JVM runs already: under LC_ALL=C it names files in ASCII, and it passes
    the arguments to Python with '?' for what it cannot encode."""
    with pytest.raises(ConfigError, match=r"^Spark's JVM names files in ANSI_X3.4-1968, which cannot name "
                                          r"/data/données \(.*LC_ALL=C.UTF-8 spark-submit"):
        fs.check_names(_Spark("ANSI_X3.4-1968"), ["/data/crawl", "/data/données"])
    fs.check_names(_Spark("ANSI_X3.4-1968"), ["/data/crawl", "s3a://b/données"])  # ASCII, or not local
    fs.check_names(_Spark("UTF-8"), ["/data/données"])
    submitted = {"PYSPARK_GATEWAY_PORT": "4711", "LC_ALL": "C"}
    with pytest.raises(ConfigError, match=r"^spark-submit's JVM runs under a locale that is not UTF-8.*"
                                          r"\(/data/donn\?\?es\).*LC_ALL=C.UTF-8 spark-submit"):
        session.check_submitted_arguments(["quilts", "--input", "/data/donn??es"], submitted)
    session.check_submitted_arguments(["quilts", "--input", "/data/donn??es"], {**submitted, "LC_ALL": "C.UTF-8"})


def test_files_the_project_wrote_or_ships_are_not_counted_as_left_out(tmp_path):
    sample = ownfiles.sample_dir()
    run = tmp_path / "out"
    (run / "_quiltdetect").mkdir(parents=True)
    (run / "docs").mkdir()
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    entries = [(str(sample / "README.md"), "unknown format"), (str(sample / "SHA256SUMS"), "unknown format"),
               (str(run / "docs" / "_SUCCESS"), "table metadata"), (str(run / "docs" / ".part-0.parquet.crc"),
                                                                    "table metadata"),
               (str(run / "metrics.json"), "unknown format"), (str(run / "_COMPLETE"), "hidden name"),
               (str(crawl / "_SUCCESS"), "table metadata"), (str(crawl / "README.md"), "unknown format"),
               (str(run / "docs" / "gone.parquet"), "broken symlink")]
    own = [ownfiles.is_own(path, reason) for path, reason in entries]
    assert own == [True] * 6 + [False] * 3
    metrics = RunMetrics(job="quilts", skipped_files=[
        {"path": path, "reason": reason, **({"own": True} if mine else {})} for (path, reason), mine in zip(entries, own, strict=True)])
    assert metrics.input_lines() == [
        "left out: 3 files (broken symlink 1, table metadata 1, unknown format 1; each named in metrics.json, skipped_files)"]
    metrics.skipped_files = metrics.skipped_files[:6]
    assert metrics.input_lines() == []


def test_an_interrupt_ends_the_run_with_one_line_and_128_plus_the_signal(monkeypatch, tmp_path, capsys):
    """In this process, a real SIGTERM then a real SIGINT while a run works in Python."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are installed by the main thread only")
    monkeypatch.setattr(interrupts, "_received", None)  # as it was after the test: JVM lines shown
    out = str(tmp_path / "out")

    def runs(args, *, local):
        os.kill(os.getpid(), signum)
        time.sleep(5)
        raise AssertionError("not interrupted")

    monkeypatch.setattr(quilts_cli, "run", runs)
    for signum, status in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
        before = signal.getsignal(signum)
        assert main(["quilts", "--input", str(tmp_path), "--output", out]) == status
        assert capsys.readouterr().err.splitlines() == [
            f"quiltdetect: interrupted. Stages that finished are kept in {out}; the same command resumes after them."]
        assert signal.getsignal(signum) is before
    assert main(["demo", "--output", out]) == 130
    assert capsys.readouterr().err.splitlines() == [
        f"quiltdetect: interrupted; {out} is not complete, and the same command (it overwrites) starts over."]


# ---- real runs ----------------------------------------------------------------------------------

WORDS = [a + b + c for a in ("ba", "ke", "lo", "mi", "nu", "pa", "ro", "si") for b in ("da", "fe", "go", "hi", "ju")
         for c in ("ka", "le", "mo", "ne", "po", "ru")]  # 240 words of letters


def pages(path: Path) -> None:
    """Six JSON Lines documents: four sources of 30 words each, one page made of all four (a
    quilt at the defaults: k=5, c=4) and one unrelated page."""
    sources = [" ".join(WORDS[30 * i:30 * (i + 1)]) for i in range(4)]
    texts = [*sources, " ".join(sources), " ".join(reversed(WORDS[120:200]))]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": f"d{i}", "url": f"http://h{i}.example/p", "text": text}) + "\n"
                            for i, text in enumerate(texts)), encoding="utf-8")


def console(argv: list[str], cwd: Path, env: dict | None = None, **kwargs) -> subprocess.Popen:
    environ = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable, **(env or {})}
    return subprocess.Popen([str(Path(sys.executable).parent / "quiltdetect"), *argv], cwd=cwd, env=environ,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


@pytest.mark.e2e
def test_non_ascii_paths_under_a_c_locale_are_read_and_written(tmp_path):
    """``LC_ALL=C`` (containers, cron): Python names files in UTF-8, Java 17 named them in ASCII,
    so the run failed in the JVM (PATH_NOT_FOUND for données/pages.jsonl, which exists), promised
    a resume that failed alike and left r?sultats/ behind. The console's JVM now gets a UTF-8
    locale; the run completes and writes résultats/."""
    pages(tmp_path / "données" / "pages.jsonl")
    proc = console(["ingest", "--input", "données", "--output", "résultats", "--master", "local[2]"], tmp_path,
                   {"LC_ALL": "C"})
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    assert sorted(os.listdir(tmp_path)) == ["données", "résultats"]  # no r?sultats/
    assert (tmp_path / "résultats" / "_COMPLETE").is_file()
    assert len(pq.read_table(tmp_path / "résultats" / "docs")) == 6
    assert not foreign_lines(err), err


@pytest.mark.e2e
def test_ctrl_c_and_sigterm_stop_with_one_line_and_the_same_command_resumes(spark, tmp_path):
    """A real Ctrl-C (SIGINT to the process group, as a terminal sends it) once the documents are
    written, then a real SIGTERM (to the command) as the same command's second run has taken the
    output over: each ends with the one line, 130 / 143, no traceback, nothing left beside the
    output but the finished stages. The same command then completes, reusing the documents, and
    equals a run that was never interrupted."""
    from test_reliability import table_bytes

    pages(tmp_path / "crawl" / "pages.jsonl")
    argv = ["quilts", "--input", "crawl", "--output", "out", "--master", "local[2]",
            "--set", "spark.sql.shuffle.partitions=4"]
    state = tmp_path / "out" / "_quiltdetect"
    said = "interrupted{}. Stages that finished are kept in out; the same command resumes after them."

    def written_since(name: str, started: float) -> bool:  # a file the run wrote as it went on
        return (state / name).exists() and (state / name).stat().st_mtime >= started

    for signum, send, marker, status in ((signal.SIGINT, os.killpg, "stages/ingest.json", 130),
                                         (signal.SIGTERM, os.kill, "owner.json", 143)):
        started = time.time()
        proc = console(argv, tmp_path, start_new_session=True)
        deadline = time.time() + 300
        while not written_since(marker, started) and proc.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        send(proc.pid, signum)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == status, err[-3000:]
        last = err.strip().splitlines()[-1]
        assert re.fullmatch("quiltdetect: " + re.escape(said).replace(r"\{\}", r"( in stage \w+)?"), last), err
        assert not foreign_lines(err) and "Traceback" not in err, err
        assert sorted(os.listdir(tmp_path)) == ["crawl", "out"]
        assert not (tmp_path / "out" / "_COMPLETE").exists()
        scratch = tmp_path / "out" / "_quiltdetect" / "tmp"
        assert not scratch.exists() or not os.listdir(scratch)  # no table half-written
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(argv) == 0
        assert main([*argv[:3], "--output", "fresh", *argv[5:]]) == 0
    finally:
        os.chdir(cwd)
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["stages"]["ingest"].get("reused"), metrics["stages"]
    assert metrics["stages"]["quilts"]["quilts"] == 1
    for table in ("quilts", "doc_stats"):
        assert table_bytes(tmp_path / "out" / table) == table_bytes(tmp_path / "fresh" / table)
