"""A class-data-sharing archive of the driver JVM's classes, kept between console runs.

A run of the console command starts a JVM that loads about 15,000 classes of Spark, Scala,
Hadoop and Parquet from their jars before its first task. The JVM can map classes it loaded
in an earlier run from an archive instead (Java's class-data sharing, ``-XX:SharedArchiveFile``),
which makes a short run markedly faster (docs/performance.md, "Starting the JVM").

The first run on a machine (for a given Java, Spark jars and extra class path) has the JVM
write the archive as it exits (``-XX:ArchiveClassesAtExit``), after this Python process is
gone: the command returns as before and the JVM writes it in the background (for how long:
docs/performance.md, "Starting the JVM"). The
archive is written under a name of its own (``<key>.<writer>.part``, ``writer()``) with a log, and the next run
renames it to ``<key>.jsa`` once the log says it was written whole and its writer has exited:
the JVM crashes on a truncated archive, so a partial file must never be used. Runs made while
an archive is being dumped run without one.

``QUILTDETECT_JVM_CACHE`` names the directory (default ``$XDG_CACHE_HOME/quiltdetect``, else
``~/.cache/quiltdetect``); ``QUILTDETECT_JVM_CACHE=off`` turns the archive off. A JVM that
cannot use an archive (another Java, another class path) ignores it; one that fails to start
with these options is started again without them, the archive is deleted and a note
(``<key>.failed``) keeps the runs of the next week from trying again (``session.build_session``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shutil
import time
from pathlib import Path

CACHE_ENV = "QUILTDETECT_JVM_CACHE"
OFF = "off"
# The JVM's unified-logging warnings go to its stdout, which is the command's: class-data
# sharing has many ("Skipping ...: Signed JAR") and none a user can act on.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
WRITTEN = "Written dynamic archive"  # the JVM's log line once the archive is complete
STALE_SECONDS = 86_400.0  # a writer's log not touched for a day: its pid was reused
MIN_FREE_BYTES = 1 << 30  # the archive is ~170 MB; no archive is started on a fuller disk
UNUSED_SECONDS = 30 * 86_400.0  # another key's archive no run has used for 30 days is deleted
FAILED_SECONDS = 7 * 86_400.0  # after a JVM failed to start with the options, none for a week
# Other keys' archives and parts kept at most, newest first: about three. Each new virtualenv
# is a new key, and a day of installs (CI in throwaway clones) left 7 GB within the ages above.
OTHERS_BYTES = 512 << 20


def cache_dir() -> Path | None:
    """Where archives are kept, or None when ``QUILTDETECT_JVM_CACHE=off``."""
    value = os.environ.get(CACHE_ENV)
    if value is not None:
        return None if value.strip().lower() in (OFF, "") else Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "quiltdetect"


def _stamp(path: Path) -> str:
    """A file's name, size and modification time: what the JVM checks of each class path entry
    before it maps an archive (a jar with another time makes it refuse the archive, silently)."""
    try:
        st = path.stat()
    except OSError:
        return f"{path.name} -"
    return f"{path.name} {st.st_size} {st.st_mtime_ns}"


def archive_key(java: str, extra_classpath: str = "") -> str:
    """A name for the archive of this Java and these jars: another one cannot use it. The jars
    are named with their sizes and times, so that a reinstall of the same Spark (a new
    virtualenv at the same path) gets an archive of its own instead of one the JVM refuses."""
    import pyspark

    real = os.path.realpath(java)
    libjvm = Path(real).parent.parent / "lib" / "server" / "libjvm.so"
    st = (libjvm if libjvm.is_file() else Path(real)).stat()
    spark_home = os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)
    jars = Path(spark_home) / "jars"
    listing = [_stamp(p) for p in sorted(jars.glob("*.jar"))] if jars.is_dir() else []
    extra = [_stamp(Path(p)) for p in extra_classpath.split(os.pathsep) if p]
    parts = [real, str(st.st_size), str(st.st_mtime_ns), spark_home, pyspark.__version__, *listing,
             extra_classpath, *extra]
    return "jvm-classes-" + hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pid_space() -> str:
    """Which process ids this process sees, hashed: its host's boot, its pid namespace, and when
    that namespace's first process started (a namespace's number is reused once it is gone).

    Containers that share a cache directory (a Docker volume) each number their processes from
    1, so a writer's pid says nothing to a run in another container: a live pid there is
    another process. "" where Linux's /proc does not say (the pid alone is then the writer)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        space = os.readlink("/proc/self/ns/pid")
        first = Path("/proc/1/stat").read_text().rsplit(")", 1)[1].split()[19]  # field 22: its start time
    except (OSError, IndexError):
        return ""
    return hashlib.sha256(f"{boot} {space} {first}".encode()).hexdigest()[:8]


def writer() -> str:
    """This process's name as a writer of an archive: ``<pid>`` or ``<pid>-<pid space>``."""
    space = _pid_space()
    return f"{os.getpid()}-{space}" if space else str(os.getpid())


def _pids(log: Path) -> tuple[int, int] | None:
    """(the Python process, its JVM) of a log named ``<key>.<writer>.jvm<jvm pid>.log`` whose
    writer's pids are this process's to check (None for another pid space, or no such name)."""
    try:
        python, jvm = log.name.rsplit(".", 3)[-3:-1]
        pid, _, space = python.partition("-")
        if space and space != _pid_space():
            return None
        return int(pid), int(jvm[len("jvm"):])
    except ValueError:
        return None


@dataclasses.dataclass(frozen=True)
class ClassArchive:
    """The archive options for one JVM start: ``using`` is set when it maps an archive."""

    options: str
    using: Path | None = None
    writing: Path | None = None

    def failed(self, why: str) -> None:
        """The JVM did not start with these options and did without: delete the archive it was
        to map, and leave a note that keeps the next week's runs from trying again."""
        path = self.using or self.writing
        if path is None:
            return
        with contextlib.suppress(OSError):
            if self.using is not None:
                self.using.unlink(missing_ok=True)
            failed_note(path).write_text(why + "\n")


def failed_note(path: Path) -> Path:
    """``<key>.failed`` beside the archive (``<key>.jsa``) or its part (``<key>.<pid>.part``)."""
    return path.parent / (path.name.split(".")[0] + ".failed")


def settle(directory: Path, key: str, now: float | None = None) -> tuple[Path | None, bool]:
    """Finish or drop the archives of ``key`` being written: (the archive if whole, one being dumped).

    Each writer left a log ``<key>.<pid>.jvm<jvm pid>.log`` as its JVM started; the JVM creates
    ``<key>.<pid>.part`` only when it exits, and says in the log when the part is whole. A part
    whose log says so, and whose Python process and JVM have both exited, becomes
    ``<key>.jsa``. Writers whose JVMs still run are left alone (a long-lived session must not
    keep later runs from an archive of their own); one whose part exists is dumping now, and the
    run starts without an archive rather than write a second. A writer whose log was not touched
    for ``STALE_SECONDS`` counts as gone (its pid was reused); every part or log of a writer
    that is gone is deleted once used.
    """
    now = time.time() if now is None else now
    final = directory / f"{key}.jsa"
    dumping = False
    for log in sorted(directory.glob(f"{key}.*.jvm*.log")):
        pids = _pids(log)  # None: a writer of another container (or no writer's name) is gone
        part = directory / f"{key}.{log.name.rsplit('.', 3)[-3]}.part"
        try:
            age = now - log.stat().st_mtime
            written = WRITTEN in log.read_text(errors="replace")
        except FileNotFoundError:
            continue
        if pids and any(_alive(pid) for pid in pids) and age < STALE_SECONDS:
            dumping = dumping or part.exists()
            continue
        if written and part.is_file() and not final.exists():
            os.replace(part, final)
        part.unlink(missing_ok=True)
        log.unlink(missing_ok=True)
    for part in directory.glob(f"{key}.*.part"):  # a part without its log
        pid = part.name.rsplit(".", 2)[-2]
        if not any(directory.glob(f"{key}.{pid}.jvm*.log")) and now - part.stat().st_mtime > 60:
            part.unlink(missing_ok=True)
    return (final if final.is_file() and final.stat().st_size > 0 else None), dumping


def prune(directory: Path, key: str, now: float | None = None) -> None:
    """Delete what other keys (another Java, Spark or virtualenv) left behind: an archive unused
    for ``UNUSED_SECONDS`` (each is ~170 MB, and an upgrade leaves the old one behind), a
    writer's part or log older than ``STALE_SECONDS`` (the last run of a deleted virtualenv
    leaves its JVM's part of ~170 MB that no run of its key will ever settle), and a note of a
    failed start or a JVM's crash report older than ``FAILED_SECONDS``; and then, newest kept
    first, other keys' archives and parts past ``OTHERS_BYTES`` in all. This key's files are
    ``settle``'s."""
    now = time.time() if now is None else now
    limits = {".jsa": UNUSED_SECONDS, ".part": STALE_SECONDS, ".log": STALE_SECONDS, ".failed": FAILED_SECONDS}
    kept: list[tuple[float, int, Path]] = []
    for old in [*directory.glob("jvm-classes-*"), *directory.glob("hs_err_pid*.log")]:
        limit = FAILED_SECONDS if old.name.startswith("hs_err_pid") else limits.get(old.suffix)
        if limit is None or old.name.startswith(f"{key}."):
            continue
        with contextlib.suppress(OSError):  # gone already, or another user's
            st = old.stat()
            if now - st.st_mtime > limit:
                old.unlink()
            elif old.suffix in (".jsa", ".part"):
                kept.append((st.st_mtime, st.st_size, old))
    total = 0
    for _, size, old in sorted(kept, key=lambda entry: (-entry[0], entry[2].name)):
        total += size
        if total > OTHERS_BYTES:
            with contextlib.suppress(OSError):
                old.unlink()


def base_archive_missing(java: str) -> bool:
    """True when this Java has no default class archive of its own (some builds ship none):
    such a JVM refuses to start with ``-XX:ArchiveClassesAtExit`` ("DynamicDumpSharedSpaces is
    unsupported when base CDS archive is not loaded")."""
    server = Path(os.path.realpath(java)).parent.parent / "lib" / "server"
    return server.is_dir() and not any((server / name).is_file() for name in ("classes.jsa", "classes_nocoops.jsa"))


def class_archive(java: str, extra_classpath: str = "", java_options: str = "") -> ClassArchive:
    """The Java options for a driver JVM about to start: map the archive, or write it at exit.

    ``java_options``: the options the JVM starts with otherwise (``-Xshare:off`` there means no
    archive). Never raises for a cache it cannot use (no home, read-only, full disk): the run
    then starts as it would without one.
    """
    directory = cache_dir()
    if directory is None or "-Xshare:off" in java_options.split():
        return ClassArchive("")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        key = archive_key(java, extra_classpath)
        note = directory / f"{key}.failed"
        if note.is_file() and time.time() - note.stat().st_mtime < FAILED_SECONDS:
            return ClassArchive("")
        final, dumping = settle(directory, key)
        prune(directory, key)
        if final is not None:
            with contextlib.suppress(OSError):  # another user's archive: used all the same
                os.utime(final)  # its time says when a run last used it (see prune)
            crash = directory / "hs_err_pid%p.log"  # not in the user's working directory
            return ClassArchive(f"-XX:SharedArchiveFile={final} {QUIET} -XX:ErrorFile={crash}", using=final)
        cannot_write = (base_archive_missing(java) or shutil.disk_usage(directory).free < MIN_FREE_BYTES
                        or not os.access(directory, os.W_OK))
        if dumping or cannot_write:
            return ClassArchive("")
        part = directory / f"{key}.{writer()}.part"  # the JVM is a child: its pid is not known yet
        log = directory / f"{key}.{writer()}.jvm%p.log"  # %p: the JVM's pid (see _pids)
        return ClassArchive(f"-XX:ArchiveClassesAtExit={part} {QUIET} -Xlog:cds+dynamic=info:file={log}",
                            writing=part)
    except OSError:
        return ClassArchive("")
