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
     "Spark writes shuffle files and cached tables under spark.local.dir (default /tmp): free "
     "space there or point it at a larger disk, e.g. --set spark.local.dir=/data/spark-tmp"),
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


def describe(exc: BaseException, output: str | None = None) -> str:
    """One paragraph: where the run failed, the cause, what to do, and how to resume."""
    stages = [n[len(STAGE_NOTE):] for n in getattr(exc, "__notes__", []) if n.startswith(STAGE_NOTE)]
    where = f" in stage {stages[0]}" if stages else ""
    text = str(exc)
    for pattern, meaning, advice in _CAUSES:
        found = re.search(pattern, text)
        if found:
            cause = f"{meaning} ({found.group(0).strip()}); {advice}"
            break
    else:
        first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
        cause = first if len(first) <= 300 else first[:297] + "..."
    resume = (f"Stages that finished are kept in {output}; the same command resumes after them. "
              if output else "")
    return f"the run failed{where}: {cause}. {resume}Run with -v for the full stack trace."
