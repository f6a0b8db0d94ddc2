"""What to tell a user whose run died inside Spark: the cause in one line and what to do.

A job that dies in a Spark task (a JVM out of heap, a full disk, a crashed Python worker)
otherwise ends with a Py4J traceback of a few hundred lines in which the cause is one line.
``RunMetrics.stage`` notes the failing stage on the exception; ``describe`` turns both into
the message the console command prints.
"""

from __future__ import annotations

import re

STAGE_NOTE = "quiltdetect stage: "

# (pattern in the failure's text, what it means, what to do), first match wins
_CAUSES: tuple[tuple[str, str, str], ...] = (
    (r"java\.lang\.OutOfMemoryError[^\n]*",
     "the JVM ran out of memory",
     "give it more: --set spark.driver.memory=8g for the console command (local mode; default "
     "4g), spark.executor.memory on a cluster; or more, smaller tasks: --set "
     "spark.sql.shuffle.partitions=128"),
    (r"No space left on device",
     "a disk filled up",
     "{disks}"),
    (r"Python worker exited unexpectedly[^\n]*|Python worker failed[^\n]*",
     "a Python worker died (often killed for memory)",
     "give the workers more room: fewer rows per Arrow batch (--set "
     "spark.sql.execution.arrow.maxRecordsPerBatch=500) or more, smaller tasks (--set "
     "spark.sql.shuffle.partitions=128)"),
)


def is_spark_failure(exc: BaseException) -> bool:
    """Whether ``exc`` came out of Spark (a Py4J Java error or a PySpark captured error)."""
    kinds = {cls.__module__.split(".")[0] for cls in type(exc).__mro__}
    return bool(kinds & {"py4j", "pyspark"})


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # Py4J's str() can fail once the JVM side is gone
        return type(exc).__name__


def java_causes(exc: BaseException, limit: int = 20) -> list[str]:
    """``toString()`` of the Java exception behind ``exc`` and of each of its causes, outermost
    first: Py4J's message names only the outermost (e.g. "An error occurred while calling
    o609.collectToPython"), while the cause that matters (OutOfMemoryError) is at the root."""
    found: list[str] = []
    java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    try:
        while java is not None and len(found) < limit:
            found.append(str(java.toString()))
            java = java.getCause()
    except Exception:  # a gateway that is gone: keep what was read
        pass
    return found


def _free(path: str) -> tuple[str, int] | None:
    """(the device of the nearest existing directory of a local path, bytes free on it), or None."""
    import os
    import shutil
    from urllib.parse import urlsplit

    if path.startswith("file:"):
        path = urlsplit(path).path
    elif "://" in path:
        return None  # a disk of another file system: not measurable here
    probe = os.path.abspath(path)
    while not os.path.isdir(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    try:
        return str(os.stat(probe).st_dev), shutil.disk_usage(probe).free
    except OSError:
        return None


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def disks_advice(output: str | None, written: str | None = None) -> str:
    """Which disk is full, of the output's and Spark's scratch space (spark.local.dir, by
    default the temp directory), with what each has free: the fuller one is named first."""
    import tempfile

    places = [(p, "the output's") for p in (written, output) if p] + [(tempfile.gettempdir(), "Spark's scratch")]
    seen, found = set(), []
    for path, what in places:
        free = _free(path)
        if free and free[0] not in seen:
            seen.add(free[0])
            found.append((free[1], what, path, free[0]))
    if not found:
        return "free space on the output's disk and under spark.local.dir"
    found.sort()
    free, what, path, _ = found[0]
    advice = (f"{what} disk is the fuller one ({path}: {_size(free)} free); ")
    if what == "the output's":
        return advice + "free space there or choose an --output on a larger disk"
    return advice + ("Spark writes shuffle files and cached tables there: free space or point it at a "
                     "larger disk, e.g. --set spark.local.dir=/data/spark-tmp")


def describe_os_error(exc: OSError, output: str | None = None) -> str:
    """One line for a file this process could not write or read (a full disk, a permission)."""
    import errno

    where = f" ({exc.filename})" if exc.filename else ""
    if exc.errno == errno.ENOSPC:
        cause = f"a disk filled up while writing{where}; {disks_advice(output, exc.filename)}"
    else:
        cause = f"{exc.strerror or type(exc).__name__}{where}"
    resume = (f" Stages that finished are kept in {output}; the same command resumes after them."
              if output else "")
    return f"the run failed: {cause}.{resume} Run with -v for the full stack trace."


def describe_interrupt(exc: BaseException | None, output: str | None = None, *, overwrite: bool = False) -> str:
    """One line for a run stopped by Ctrl-C or SIGTERM: where, and that the same command resumes."""
    stages = [n[len(STAGE_NOTE):] for n in getattr(exc, "__notes__", []) if n.startswith(STAGE_NOTE)]
    where = f" in stage {stages[0]}" if stages else ""
    if not output:
        return f"interrupted{where}."
    if overwrite:
        return f"interrupted{where}; {output} is not complete, and the same command (it overwrites) starts over."
    return f"interrupted{where}. Stages that finished are kept in {output}; the same command resumes after them."


def describe(exc: BaseException, output: str | None = None) -> str:
    """One paragraph: where the run failed, the cause, what to do, and how to resume."""
    stages = [n[len(STAGE_NOTE):] for n in getattr(exc, "__notes__", []) if n.startswith(STAGE_NOTE)]
    where = f" in stage {stages[0]}" if stages else ""
    causes = java_causes(exc)
    text = "\n".join([_text(exc), *causes])
    for pattern, meaning, advice in _CAUSES:
        found = re.search(pattern, text)
        if found:
            advice = advice.format(disks=disks_advice(output)) if "{disks}" in advice else advice
            cause = f"{meaning} ({found.group(0).strip()}); {advice}"
            break
    else:  # the root cause when Java gave one, else the first line of the Python error
        lines = [line.strip() for line in (causes[-1:] or _text(exc).splitlines()) if line.strip()]
        first = lines[0] if lines else type(exc).__name__
        cause = first if len(first) <= 300 else first[:297] + "..."
    resume = (f"Stages that finished are kept in {output}; the same command resumes after them. "
              if output else "")
    return f"the run failed{where}: {cause}. {resume}Run with -v for the full stack trace."
