"""Ctrl-C (SIGINT) and SIGTERM during a run of the console command or a ``jobs/*.py`` file.

Without this, PySpark's own SIGINT handler calls into the JVM from inside the very Py4J call
the main thread is waiting on, which breaks that connection: the run ended as a failure, with
Py4J tracebacks ("the run failed in stage quilts: An error occurred while calling
o1187.parquet", exit 1), and SIGTERM killed Python without a word.

While ``handled()`` is active, either signal:

* is recorded (``received()``), and a thread of its own cancels every Spark job, again every
  quarter of a second (a job started after the first cancel is cancelled too), over a Py4J
  connection of its own;
* raises ``KeyboardInterrupt`` at once when the main thread is in Python code, and otherwise
  lets the Spark call it waits on end with the cancellation's error; ``check()``, called
  where each stage begins and ends (``RunMetrics.stage``), raises it for driver-side work;
* makes the JVM's own lines stop reaching the console (``jvmlog``: cancelled tasks' errors).

``cli.main`` then prints one line (``failures.describe_interrupt``) and exits with 128 + the
signal's number: 130 for Ctrl-C, 143 for SIGTERM. A second signal raises ``KeyboardInterrupt``
wherever the main thread is. Stages that finished keep their markers, so the same command
resumes after them (docs/reliability.md).
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM)
CANCEL_EVERY = 0.25  # seconds between two cancellations of every Spark job, once interrupted

# Set by the console (cli.configure_console): with -v, what breaks as a run stops is shown too.
verbose = False

_received: int | None = None
_active = False
_done = threading.Event()
_cancelling: list[threading.Thread] = []


def received() -> int | None:
    """The first signal received while ``handled()`` was last active (``signal.SIGINT``, ...), or
    None; it stays set as the command exits (``jvmlog`` keeps the JVM quiet till then)."""
    return _received


def check() -> None:
    """Raise ``KeyboardInterrupt`` when a signal was received during the run: driver-side work
    stops here."""
    if _active and _received is not None:
        raise KeyboardInterrupt


def _in_py4j(frame: FrameType | None) -> bool:
    """Whether the interrupted frame is inside a Py4J call (waiting on the JVM)."""
    while frame is not None:
        if "/py4j/" in frame.f_code.co_filename.replace("\\", "/"):
            return True
        frame = frame.f_back
    return False


def _cancel_jobs() -> None:
    """Cancel every Spark job until the run has ended (a thread of its own: its own connection)."""
    from pyspark import SparkContext

    while not _done.is_set():
        context = SparkContext._active_spark_context
        if context is not None:
            try:
                context.cancelAllJobs()
            except Exception:  # a JVM that is gone or going: nothing left to cancel
                return
        _done.wait(CANCEL_EVERY)


def _accumulator_server():  # PySpark's, in this process: the JVM reports task counters to it
    from pyspark import SparkContext

    return getattr(SparkContext._active_spark_context, "_accumulatorServer", None)


def _quiet_accumulator_server(quiet: bool) -> None:
    """A JVM that a SIGTERM to the process group stops breaks the connections of PySpark's
    accumulator server, which prints "Exception occurred during processing of request" for each:
    not while the run stops, unless -v."""
    server = _accumulator_server()
    if server is None:
        return
    if quiet:
        server.handle_error = lambda request, client_address: None
    else:
        server.__dict__.pop("handle_error", None)


def _handler(signum: int, frame: FrameType | None) -> None:
    global _received
    first = _received is None
    if first:
        _received = signum
        if not verbose:
            _quiet_accumulator_server(True)
        thread = threading.Thread(target=_cancel_jobs, name="quiltdetect-interrupt", daemon=True)
        _cancelling.append(thread)
        thread.start()
    if not first or not _in_py4j(frame):
        raise KeyboardInterrupt


class _PyFourJsOwnReport(logging.Filter):
    """Py4J logs a traceback on the root logger when an interrupt cuts one of its calls (which
    it then closes cleanly): after a second signal, the run's one line says it already."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (_received is not None and record.getMessage() == "KeyboardInterrupt while sending command.")


_QUIET = _PyFourJsOwnReport()


def claim() -> None:
    """Install the handlers again (a new SparkContext installs PySpark's for SIGINT); only while
    ``handled()`` is active and in the main thread."""
    if _active and threading.current_thread() is threading.main_thread():
        for number in SIGNALS:
            signal.signal(number, _handler)


@contextmanager
def handled() -> Iterator[None]:
    """Handle SIGINT and SIGTERM as above for the duration of a run; the former handlers are
    restored afterwards."""
    global _received, _active
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {number: signal.getsignal(number) for number in SIGNALS}
    _received, _active = None, True
    _done.clear()
    claim()
    logging.getLogger().addFilter(_QUIET)
    try:
        yield
    finally:
        logging.getLogger().removeFilter(_QUIET)
        if _received is not None:
            _quiet_accumulator_server(False)
        _active = False
        _done.set()
        while _cancelling:  # no job of the session is cancelled once the run has ended
            _cancelling.pop().join(timeout=5)
        for number, handler in before.items():
            signal.signal(number, handler)
