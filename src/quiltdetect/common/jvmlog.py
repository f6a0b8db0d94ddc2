"""The console's JVM speaks through here: its start-up lines are dropped unless ``-v``.

A local run of the console command starts its JVM (spark-submit, started by PySpark), which
writes to the command's stderr lines no user can act on: ``WARNING: Using incubator modules``,
``Using Spark's default log4j profile``, the loopback-address and native-hadoop warnings,
``Setting default log level``, a busy UI port... ``session.build_session`` hands the JVM the
write end of a pipe instead of stderr (``piped``); a thread reads it and writes every line to
``sys.stderr`` except the known ones of ``NOISE`` (a dropped line's indented continuation
lines go with it). Everything else passes: errors, stack traces, a Python worker's traceback,
anything not known. With ``-v`` (``show_all``) the JVM keeps the command's stderr as it is.
Once the run is interrupted (``interrupts``), the JVM's lines about its cancelled tasks are
dropped too, unless ``-v``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import sys
import threading
import time
from collections.abc import Iterator

from quiltdetect.common import interrupts

# Set by the console (cli.configure_console): -v shows the JVM's every line.
show_all = False
# While ``piped`` starts the JVM, file descriptor 2 is the pipe itself: what the filter passes
# on goes to the former stderr (this descriptor), not through the pipe again.
_starting: int | None = None

# Lines of Spark and the JVM that every run gives and that need nothing from a user.
NOISE = re.compile("|".join((
    r"WARNING: Using incubator modules: ",
    r"Using Spark's default log4j profile: ",
    r"Setting default log level to ",
    r"To adjust logging level use sc\.setLogLevel\(newLevel\)",
    r".* WARN Utils: Your hostname, .* resolves to a loopback address",
    r".* WARN Utils: Set SPARK_LOCAL_IP if you need to bind to another address",
    r".* WARN NativeCodeLoader: Unable to load native-hadoop library",
    r".* WARN Utils: Service '[^']*' could not bind on port \d+\. Attempting port \d+\.",
    # a command run inside a process whose session exists (cli.main from Python, the tests):
    # the run takes that session as it is
    r".* WARN SparkSession: Using an existing Spark session; only runtime SQL configurations will take effect",
    # the three of session.QUIET_LOGGERS, should one speak before its level is set
    r".* WARN WindowExec: No Partition Defined for Window operation!",
    r".* WARN DataSource: All paths were ignored:",
    r".* WARN MapPartitionsRDD: .* locally checkpointed",
)))


def is_noise(line: str) -> bool:
    """Whether a line of the JVM's stderr is one of its known start-up or routine lines."""
    return NOISE.match(line) is not None


def _write(text: str) -> None:
    """Pass kept lines on: to ``sys.stderr`` (captured by a test, the command's stderr)."""
    try:
        if _starting is not None:
            os.write(_starting, text.encode("utf-8", "replace"))
        else:
            sys.stderr.write(text)
            sys.stderr.flush()
    except (OSError, ValueError):  # a closed stderr: nowhere to say it
        pass


class Filter:
    """Lines written to a pipe, passed on to ``sys.stderr`` without the noise."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pending = b""
        self.dropping = False  # inside a dropped line's continuation lines
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, name="quiltdetect-jvm-stderr", daemon=True)

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:  # made non-blocking by drain() as the command exits
                time.sleep(0.05)
                continue
            except OSError:
                return
            if not data:
                self.feed(b"", end=True)
                return
            self.feed(data)

    def feed(self, data: bytes, *, end: bool = False) -> None:
        """Take bytes from the JVM; pass on each whole line (and at the end, the rest) kept."""
        with self.lock:
            self.pending += data
            *lines, self.pending = self.pending.split(b"\n")
            if end and self.pending:
                lines, self.pending = [*lines, self.pending], b""
            kept = "".join(f"{line}\n" for line in (raw.decode("utf-8", "replace") for raw in lines)
                           if self._keep(line))
            if kept:
                _write(kept)

    def _keep(self, line: str) -> bool:
        if interrupts.received() is not None and not show_all:
            return False  # the cancelled tasks' errors and stack traces
        if self.dropping and line[:1] in (" ", "\t"):
            return False
        self.dropping = is_noise(line)
        return not self.dropping

    def drain(self) -> None:
        """Pass on what the JVM wrote and the thread has not read yet (as the command exits)."""
        try:
            os.set_blocking(self.fd, False)
            while True:
                data = os.read(self.fd, 65536)
                if not data:
                    break
                self.feed(data)
        except OSError:  # nothing more to read now (BlockingIOError), or the pipe is closed
            pass
        self.feed(b"", end=True)


@contextlib.contextmanager
def piped() -> Iterator[None]:
    """While the block starts the JVM, file descriptor 2 is a pipe, which the JVM inherits; the
    pipe is read by a ``Filter`` thread for as long as the JVM writes to it. With ``show_all``,
    or when stderr is not a file descriptor, nothing changes."""
    global _starting
    if show_all:
        yield
        return
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    read_end, write_end = os.pipe()
    _flush()
    os.dup2(write_end, 2)  # inheritable, as descriptor 2 always is
    os.close(write_end)
    _starting = saved
    reader = Filter(read_end)
    reader.thread.start()
    try:
        yield
    finally:
        _flush()
        with reader.lock:
            os.dup2(saved, 2)
            _starting = None
        os.close(saved)
        atexit.register(reader.drain)


def _flush() -> None:
    try:
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
