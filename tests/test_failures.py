"""A run that dies inside Spark ends with one line that names the stage, the cause and what to do.

No Spark here: the failures are stand-ins whose class lives in a ``py4j`` / ``pyspark`` module,
as Py4JJavaError and PySpark's captured errors do.
"""

from __future__ import annotations

import pytest

from quiltdetect.cli import main
from quiltdetect.common import failures
from quiltdetect.common.metrics import RunMetrics
from quiltdetect.quilts import cli as quilts_cli

OOM = """An error occurred while calling o608.collectToPython.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 9 in stage 28.0 failed 1 times
Caused by: java.lang.OutOfMemoryError: Java heap space
\tat org.apache.spark.sql.execution.vectorized.OnHeapColumnVector.reserveInternal(OnHeapColumnVector.java:597)"""


class FakeJavaError(Exception):
    """Stands for py4j.protocol.Py4JJavaError."""


FakeJavaError.__module__ = "py4j.protocol"


class _Context:
    def getLocalProperty(self, key):  # noqa: N802 - SparkContext's names
        return None

    def setJobDescription(self, value):  # noqa: N802
        pass


class _Spark:
    sparkContext = _Context()  # noqa: N815


def test_the_failing_stage_is_noted_once_by_the_innermost_stage():
    metrics = RunMetrics("quilts")
    with pytest.raises(FakeJavaError) as caught:
        with metrics.stage(_Spark(), "sources", "outer"):
            with metrics.stage(_Spark(), "cover", "inner"):
                raise FakeJavaError(OOM)
    assert caught.value.__notes__ == [f"{failures.STAGE_NOTE}cover"]
    assert "seconds" in metrics.stages["cover"] and "seconds" in metrics.stages["sources"]


@pytest.mark.parametrize("text, says", [
    (OOM, "the JVM ran out of memory (java.lang.OutOfMemoryError: Java heap space); give it more: "
          "--set spark.driver.memory=8g"),
    ("java.io.IOException: No space left on device", "a disk filled up (No space left on device); "
                                                     "the output's disk is the fuller one (/data/run1: "),
    ("org.apache.spark.SparkException: Python worker exited unexpectedly (crashed)",
     "a Python worker died (often killed for memory) (Python worker exited unexpectedly (crashed))"),
    ("\n  [PATH_NOT_FOUND] something odd\nmore lines", "[PATH_NOT_FOUND] something odd."),
])
def test_describe_names_stage_cause_advice_and_resume(text, says):
    exc = FakeJavaError(text)
    exc.add_note(f"{failures.STAGE_NOTE}patch_grams")
    message = failures.describe(exc, "/data/run1")
    assert message.startswith("the run failed in stage patch_grams: ")
    assert says in message
    assert "kept in /data/run1; the same command resumes after them" in message
    assert "\n" not in message


def test_spark_failures_only():
    assert failures.is_spark_failure(FakeJavaError("x"))
    assert not failures.is_spark_failure(ValueError("x"))


def _oom_in_grams() -> FakeJavaError:
    exc = FakeJavaError(OOM)
    exc.add_note(f"{failures.STAGE_NOTE}grams")
    return exc


def test_console_prints_one_line_and_exits_1(monkeypatch, tmp_path, capsys):
    def dies(args, *, local):
        raise _oom_in_grams()

    monkeypatch.setattr(quilts_cli, "run", dies)
    out = str(tmp_path / "out")
    assert main(["quilts", "--input", str(tmp_path), "--output", out]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"quiltdetect: error: {failures.describe(_oom_in_grams(), out)}"]
    assert err[0].startswith("quiltdetect: error: the run failed in stage grams: the JVM ran out of memory")


def test_other_errors_are_not_swallowed(monkeypatch, tmp_path):
    def bug(args, *, local):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(quilts_cli, "run", bug)
    with pytest.raises(ZeroDivisionError):
        main(["quilts", "--input", str(tmp_path), "--output", str(tmp_path / "out")])


class _Java:
    """Stands for a Py4J JavaObject of a java.lang.Throwable."""

    def __init__(self, text: str, cause: _Java | None = None) -> None:
        self.text, self.cause = text, cause

    def toString(self) -> str:  # noqa: N802
        return self.text

    def getCause(self):  # noqa: N802
        return self.cause


def test_the_root_java_cause_is_found_behind_py4js_first_line():
    # What a run at 1,000,000 pages printed before: Py4J's message names only collectToPython.
    exc = FakeJavaError("An error occurred while calling o609.collectToPython.")
    exc.java_exception = _Java("org.apache.spark.SparkException: Job aborted due to stage failure",
                               _Java("java.lang.RuntimeException: Cannot reserve additional contiguous bytes",
                                     _Java("java.lang.OutOfMemoryError: Java heap space")))
    assert failures.java_causes(exc)[-1] == "java.lang.OutOfMemoryError: Java heap space"
    assert "the JVM ran out of memory (java.lang.OutOfMemoryError: Java heap space)" in failures.describe(exc)
    exc.java_exception = _Java("org.apache.spark.SparkException: Job aborted",
                               _Java("java.io.FileNotFoundException: /data/x.parquet"))
    assert "the run failed: java.io.FileNotFoundException: /data/x.parquet." in failures.describe(exc)
