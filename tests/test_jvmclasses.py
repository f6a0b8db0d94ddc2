"""The driver JVM's class archive (common/jvmclasses.py): written once, used after, never half.

The fast tests drive the cache's bookkeeping with stand-in files and processes; the extended
one starts real JVMs: the first run writes the archive as its JVM exits, the next maps it, and
a damaged archive costs one restart, not the run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
from test_cli import _Builder as RecordingBuilder

from quiltdetect.common import jvmclasses, session
from quiltdetect.common.jvmclasses import WRITTEN, class_archive, settle

KEY = "jvm-classes-0123456789abcdef"


def _dead_pid() -> int:
    """A pid no process has: one that just exited and was reaped."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv(jvmclasses.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(jvmclasses, "archive_key", lambda java, extra="": KEY)
    return tmp_path / "cache"


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(jvmclasses.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert jvmclasses.cache_dir() == tmp_path / "xdg" / "quiltdetect"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert jvmclasses.cache_dir() == tmp_path / "home" / ".cache" / "quiltdetect"
    monkeypatch.setenv(jvmclasses.CACHE_ENV, str(tmp_path / "mine"))
    assert jvmclasses.cache_dir() == tmp_path / "mine"
    for off in ("off", "OFF", ""):
        monkeypatch.setenv(jvmclasses.CACHE_ENV, off)
        assert jvmclasses.cache_dir() is None
        assert class_archive("java").options == ""


def test_the_key_changes_with_the_java_and_the_class_path(tmp_path):
    first = tmp_path / "jdk1" / "bin" / "java"
    second = tmp_path / "jdk2" / "bin" / "java"
    for java in (first, second):
        java.parent.mkdir(parents=True)
        java.write_text("#!/bin/sh\n")
    key = jvmclasses.archive_key(str(first))
    assert key == jvmclasses.archive_key(str(first))
    assert key.startswith("jvm-classes-")
    assert key != jvmclasses.archive_key(str(second))
    assert key != jvmclasses.archive_key(str(first), "/opt/extra.jar")


def test_the_key_changes_when_a_jar_is_installed_again(tmp_path, monkeypatch):
    """The JVM refuses (silently) an archive whose jars have other times or sizes than when it
    was written: a reinstall of the same Spark at the same path must get an archive of its own."""
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\n")
    jars = tmp_path / "spark" / "jars"
    jars.mkdir(parents=True)
    jar = jars / "spark-core.jar"
    jar.write_bytes(b"classes")
    extra = tmp_path / "extra.jar"
    extra.write_bytes(b"more")
    monkeypatch.setenv("SPARK_HOME", str(tmp_path / "spark"))
    key = jvmclasses.archive_key(str(java), str(extra))
    assert key == jvmclasses.archive_key(str(java), str(extra))
    os.utime(jar, ns=(jar.stat().st_atime_ns, jar.stat().st_mtime_ns + 10**9))  # reinstalled: same bytes, new time
    moved = jvmclasses.archive_key(str(java), str(extra))
    assert moved != key
    extra.write_bytes(b"other")  # the extra class path is checked too
    assert jvmclasses.archive_key(str(java), str(extra)) != moved


def test_the_first_run_writes_at_exit_and_a_whole_archive_is_used_after(cache):
    started = class_archive("java")
    part = cache / f"{KEY}.{jvmclasses.writer()}.part"
    assert started.using is None and started.writing == part
    assert f"-XX:ArchiveClassesAtExit={part} " in started.options
    assert f"-Xlog:cds+dynamic=info:file={cache}/{KEY}.{jvmclasses.writer()}.jvm%p.log" in started.options
    assert "-Xlog:cds=off -Xlog:cds+dynamic=off" in started.options  # nothing on the command's stdout

    # The writer's JVM has exited having logged the whole archive: the next run renames and maps it.
    dead = _dead_pid()
    part = cache / f"{KEY}.{dead}.part"
    part.write_bytes(b"x" * 100)
    (cache / f"{KEY}.{dead}.jvm{_dead_pid()}.log").write_text(f"[info][cds,dynamic] {WRITTEN} 0x8 - 0x9\n")
    used = class_archive("java")
    final = cache / f"{KEY}.jsa"
    assert used.using == final and final.read_bytes() == b"x" * 100
    assert used.options.startswith(f"-XX:SharedArchiveFile={final} -Xlog:cds=off -Xlog:cds+dynamic=off")
    assert f"-XX:ErrorFile={cache}/hs_err_pid%p.log" in used.options  # a crash report not in the cwd
    assert sorted(p.name for p in cache.iterdir()) == [f"{KEY}.jsa"]


def test_a_writer_of_another_container_is_gone_whatever_its_pids_are_here(cache):
    """Containers sharing a cache volume number their processes from 1 each: a writer's pids,
    alive here, are other processes. Its whole archive is used; a part it did not finish goes."""
    cache.mkdir(parents=True)
    here = jvmclasses.writer()
    assert here.startswith(f"{os.getpid()}-") and len(here.split("-")[1]) == 8  # Linux: the pid space is known
    other = f"{os.getpid()}-{'0' * 8 if not here.endswith('0' * 8) else '1' * 8}"
    (cache / f"{KEY}.{other}.part").write_bytes(b"whole")
    (cache / f"{KEY}.{other}.jvm{os.getpid()}.log").write_text(f"[info][cds,dynamic] {WRITTEN} 0x8 - 0x9\n")
    assert settle(cache, KEY) == (cache / f"{KEY}.jsa", False)
    assert sorted(p.name for p in cache.iterdir()) == [f"{KEY}.jsa"]
    (cache / f"{KEY}.jsa").unlink()
    (cache / f"{KEY}.{other}.part").write_bytes(b"half")
    (cache / f"{KEY}.{other}.jvm{os.getpid()}.log").write_text("[info][cds,dynamic] Archiving hidden ...\n")
    assert settle(cache, KEY) == (None, False)
    assert list(cache.iterdir()) == []
    # The same names with this process's own pid space: a live writer, left alone.
    (cache / f"{KEY}.{here}.part").write_bytes(b"half")
    (cache / f"{KEY}.{here}.jvm{os.getpid()}.log").write_text("")
    assert settle(cache, KEY) == (None, True)


def test_a_writer_still_running_is_left_alone_and_a_dead_one_is_cleared(cache):
    cache.mkdir(parents=True)
    # A writer whose JVM still runs (this process stands for it) and has not begun its dump:
    # another run writes an archive of its own rather than wait for a session that may last hours.
    mine = cache / f"{KEY}.{os.getpid()}.jvm{os.getpid()}.log"
    mine.write_text("")
    assert class_archive("java").writing is not None
    # Dumping now (its part exists, maybe half written): not used, and no second dump is started.
    (cache / f"{KEY}.{os.getpid()}.part").write_bytes(b"half")
    assert class_archive("java") == jvmclasses.ClassArchive("")
    assert settle(cache, KEY) == (None, True)
    # ... unless its log has not been touched for a day (the pid was reused): then it is cleared.
    old = time.time() - jvmclasses.STALE_SECONDS - 1
    os.utime(mine, (old, old))
    assert settle(cache, KEY) == (None, False)
    assert list(cache.iterdir()) == []

    # Exited without the log's last line (killed while writing): the part is deleted, not used.
    dead = _dead_pid()
    (cache / f"{KEY}.{dead}.part").write_bytes(b"truncated")
    (cache / f"{KEY}.{dead}.jvm{_dead_pid()}.log").write_text("[info][cds,dynamic] Archiving hidden ...\n")
    started = class_archive("java")
    assert started.using is None and started.writing is not None
    assert list(cache.iterdir()) == []


def test_archives_of_other_installations_go_after_thirty_days_unused(cache):
    cache.mkdir(parents=True)
    mine, recent, old = (cache / f"{name}.jsa" for name in (KEY, "jvm-classes-recent", "jvm-classes-old"))
    for path in (mine, recent, old):
        path.write_bytes(b"x")
    month = time.time() - jvmclasses.UNUSED_SECONDS - 1
    for path in (mine, old):
        os.utime(path, (month, month))
    assert class_archive("java").using == mine
    assert mine.stat().st_mtime > month  # used now: its time is renewed
    assert sorted(p.name for p in cache.iterdir()) == [f"{KEY}.jsa", "jvm-classes-recent.jsa"]


def test_parts_and_logs_other_installations_left_go_after_a_day(cache):
    """A deleted virtualenv's last run leaves its JVM's part (~170 MB) and log under a key no run
    settles again: they go after a day, its failure note and a JVM's crash report after a week;
    this key's are settle's."""
    cache.mkdir(parents=True)
    day, week = time.time() - jvmclasses.STALE_SECONDS - 1, time.time() - jvmclasses.FAILED_SECONDS - 1
    names = {"jvm-classes-gone.1.part": day, "jvm-classes-gone.1.jvm2.log": day, "jvm-classes-gone.failed": week,
             "jvm-classes-new.3.part": None, "jvm-classes-new.3.jvm4.log": None, "jvm-classes-new.failed": day,
             "jvm-classes-gone.jsa": day, "hs_err_pid7.log": week, "hs_err_pid8.log": day, f"{KEY}.failed": day}
    for name, when in names.items():
        (cache / name).write_bytes(b"x")
        if when is not None:
            os.utime(cache / name, (when, when))
    (cache / "jvm-classes-gone.1.part").chmod(0o444)  # as the JVM leaves it
    jvmclasses.prune(cache, KEY)
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        ["jvm-classes-new.3.part", "jvm-classes-new.3.jvm4.log", "jvm-classes-new.failed", "jvm-classes-gone.jsa",
         "hs_err_pid8.log", f"{KEY}.failed"])


def test_other_installations_keep_at_most_their_budget_newest_first(cache, monkeypatch):
    """Each virtualenv is a key of its own: within their ages, other keys' archives and parts are
    kept newest first up to ``OTHERS_BYTES``; this key's archive, however old or large, stays."""
    monkeypatch.setattr(jvmclasses, "OTHERS_BYTES", 25)
    cache.mkdir(parents=True)
    now = time.time()
    files = {f"{KEY}.jsa": (100, 50), "jvm-classes-a.jsa": (10, 1), "jvm-classes-b.7.part": (10, 2),
             "jvm-classes-b.7.jvm8.log": (1, 2), "jvm-classes-c.jsa": (10, 3), "jvm-classes-d.jsa": (10, 4)}
    for name, (size, age) in files.items():
        (cache / name).write_bytes(b"x" * size)
        os.utime(cache / name, (now - age, now - age))
    jvmclasses.prune(cache, KEY)
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        [f"{KEY}.jsa", "jvm-classes-a.jsa", "jvm-classes-b.7.part", "jvm-classes-b.7.jvm8.log"])


def test_a_full_or_read_only_cache_starts_the_jvm_as_before(cache, monkeypatch):
    monkeypatch.setattr(jvmclasses.shutil, "disk_usage", lambda path: types.SimpleNamespace(free=1 << 20))
    assert class_archive("java").options == ""
    monkeypatch.setenv(jvmclasses.CACHE_ENV, "/proc/no/such/dir")
    assert class_archive("java").options == ""


class _Builder(RecordingBuilder):
    """SparkSession.builder's stand-in: a start with archive options fails as a crashed JVM does."""

    def __init__(self) -> None:
        super().__init__()
        self.starts: list[str] = []

    def getOrCreate(self) -> types.SimpleNamespace:  # noqa: N802 (Spark's name)
        options = self.conf.get(session.JAVA_OPTIONS, "")
        self.starts.append(options)
        if "SharedArchiveFile" in options or "ArchiveClassesAtExit" in options:
            raise session.PySparkRuntimeError(errorClass="JAVA_GATEWAY_EXITED", messageParameters={})
        return super().getOrCreate()


def _build(monkeypatch) -> _Builder:
    builder = _Builder()
    monkeypatch.setattr(session.SparkSession, "builder", builder)
    monkeypatch.setattr(session.SparkContext, "_gateway", None)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setattr(session, "check_java", lambda: 17)
    session.build_session("t", {session.JAVA_OPTIONS: "-XX:TieredStopAtLevel=1"}, local=True)
    return builder


def test_a_jvm_that_crashes_on_its_archive_is_started_again_without_it(cache, monkeypatch):
    cache.mkdir(parents=True)
    (cache / f"{KEY}.jsa").write_bytes(b"damaged")
    assert _build(monkeypatch).starts == [
        f"-XX:TieredStopAtLevel=1 -XX:SharedArchiveFile={cache}/{KEY}.jsa -Xlog:cds=off -Xlog:cds+dynamic=off "
        f"-XX:ErrorFile={cache}/hs_err_pid%p.log",
        "-XX:TieredStopAtLevel=1"]
    assert not (cache / f"{KEY}.jsa").exists()
    assert "did not start with: -XX:SharedArchiveFile" in (cache / f"{KEY}.failed").read_text()
    # The next runs start without archive options, for a week, rather than fail once each.
    assert _build(monkeypatch).starts == ["-XX:TieredStopAtLevel=1"]
    week = time.time() - jvmclasses.FAILED_SECONDS - 1
    os.utime(cache / f"{KEY}.failed", (week, week))
    assert class_archive("java").writing is not None


def test_the_run_that_writes_the_archive_says_so(cache, monkeypatch, caplog):
    """A java process left running for ~10 s after the command returned deserves one line."""
    monkeypatch.setattr(session.SparkSession, "builder", RecordingBuilder())
    monkeypatch.setattr(session.SparkContext, "_gateway", None)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setattr(session, "check_java", lambda: 17)
    with caplog.at_level("INFO", logger="quiltdetect.progress"):
        session.build_session("t", {}, local=True)
    assert f"the JVM writes its class archive to {cache} as it exits" in caplog.text
    (cache / f"{KEY}.jsa").write_bytes(b"whole")
    caplog.clear()
    with caplog.at_level("INFO", logger="quiltdetect.progress"):
        session.build_session("t", {}, local=True)
    assert "class archive" not in caplog.text


def test_a_java_that_cannot_write_an_archive_starts_without_one(cache, monkeypatch, tmp_path, caplog):
    # A JVM refuses -XX:ArchiveClassesAtExit without the JDK's own base archive (some builds
    # ship none) or with -Xshare:off: known beforehand, no option is added ...
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\n")
    (tmp_path / "jdk" / "lib" / "server").mkdir(parents=True)
    assert jvmclasses.base_archive_missing(str(java))
    assert class_archive(str(java)).options == ""
    (tmp_path / "jdk" / "lib" / "server" / "classes.jsa").write_bytes(b"base")
    assert class_archive(str(java)).writing is not None
    assert class_archive(str(java), java_options="-XX:TieredStopAtLevel=1 -Xshare:off").options == ""
    # ... and any other refusal costs one start: the run goes on without, and a note stops retries.
    monkeypatch.setattr(jvmclasses, "base_archive_missing", lambda java: False)
    with caplog.at_level("INFO", logger="quiltdetect.progress"):
        starts = _build(monkeypatch).starts
    assert "did not start with its class archive" in caplog.text
    assert "writes its class archive" not in caplog.text  # it does not: it started without
    assert "-XX:ArchiveClassesAtExit=" in starts[0] and starts[1:] == ["-XX:TieredStopAtLevel=1"]
    assert (cache / f"{KEY}.failed").is_file()


_START = """
import sys
from pyspark import SparkContext
from quiltdetect.common.config import local_spark_defaults
from quiltdetect.common.session import build_session
spark = build_session("t", {**local_spark_defaults(), "spark.master": "local[1]", "spark.ui.enabled": "false",
                            "spark.driver.extraJavaOptions": sys.argv[1]}, local=True)
assert spark.range(100).count() == 100
maps = open(f"/proc/{SparkContext._gateway.proc.pid}/maps").read()
print("maps " + " ".join(sorted({line.split()[-1] for line in maps.splitlines() if line.endswith('.jsa')})))
"""


def test_real_jvms_write_the_archive_once_then_map_it(tmp_path):
    """Three console-style starts (a JVM each, about 30 s in all with the archive's writing)."""
    from tiers import SHORT_JVM

    cache = tmp_path / "cache"
    env = {**os.environ, jvmclasses.CACHE_ENV: str(cache), "PYSPARK_PYTHON": sys.executable}

    def start() -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, "-c", _START, SHORT_JVM], env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        assert "[warning][cds]" not in done.stdout + done.stderr
        return done

    first = start()
    (key,) = {p.name.split(".")[0] for p in cache.iterdir()}
    final = cache / f"{key}.jsa"
    assert f" {final}" not in first.stdout
    deadline = time.time() + 120  # the JVM writes the archive after the Python process exited
    while not any(WRITTEN in log.read_text() for log in cache.glob("*.log")) and time.time() < deadline:
        time.sleep(0.5)
    while any(p.name.endswith(".log") for p in cache.iterdir()) and time.time() < deadline:
        settle(cache, key)  # what the next run does first: here until the JVM has exited
        time.sleep(0.2)
    assert final.is_file() and final.stat().st_size > 50_000_000

    second = start()
    assert f" {final}" in second.stdout  # the JVM mapped the archive

    final.chmod(0o644)
    with final.open("r+b") as damaged:
        damaged.truncate(final.stat().st_size // 3)
    third = start()
    assert "did not start with its class archive" in third.stderr
    assert f" {final}" not in third.stdout
    assert not final.exists() and (cache / f"{key}.failed").is_file()
