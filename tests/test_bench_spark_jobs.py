"""bench/spark_jobs.py: a run's Spark jobs from its event log (no Spark)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from testkit.scripts import bench_script

spark_jobs = bench_script("spark_jobs")


def _job(job_id: int, stages: list[int], at: int, end: int, what: str) -> list[dict]:
    return [
        {"Event": "SparkListenerJobStart", "Job ID": job_id, "Submission Time": at, "Stage IDs": stages,
         "Properties": {"spark.job.description": what}},
        {"Event": "SparkListenerJobEnd", "Job ID": job_id, "Completion Time": end},
    ]


def _task(stage: int, launch: int, finish: int) -> dict:
    return {"Event": "SparkListenerTaskEnd", "Stage ID": stage, "Task Info": {"Launch Time": launch, "Finish Time": finish}}


def _log() -> list[dict]:
    """An application started at t=1,000 ms: job 0 (one stage, two tasks) from 2,000 to 3,000 ms,
    then job 1 (two stages, one task each) from 3,500 to 6,000 ms; a task of an unknown stage."""
    return [
        {"Event": "SparkListenerApplicationStart", "Timestamp": 1_000},
        *_job(0, [0], 2_000, 3_000, "quilts: ingest - read inputs"),
        _task(0, 2_000, 2_900), _task(0, 2_100, 3_000),
        *_job(1, [1, 2], 3_500, 6_000, "quilts: grams - 5-gram sets"),
        _task(1, 3_500, 4_000), _task(2, 4_000, 6_000),
        _task(9, 0, 99_000),
    ]


def test_jobs_sum_their_tasks_and_report_the_driver_time_between_them():
    start, jobs = spark_jobs.jobs_of(_log())
    assert start == 1_000
    assert [(j.job_id, j.wall_ms, j.tasks, j.task_ms, j.stages) for j in jobs] == [
        (0, 1_000, 2, 1_800, [0]), (1, 2_500, 2, 2_500, [1, 2])]
    lines = spark_jobs.report(start, jobs, by_stage=True).splitlines()
    # job 0 starts 1.00 s after the application, job 1 0.50 s after job 0 ended
    assert lines[1].split()[:7] == ["0", "1.00", "1.00", "1.00", "1", "2", "1.80"]
    assert lines[2].split()[:7] == ["1", "2.50", "0.50", "2.50", "2", "2", "2.50"]
    assert "2 jobs; 3.5 s of job wall time" in lines[3] and "4.3 task s" in lines[3] and "ended 5.0 s" in lines[3]
    assert lines[-2].split() == ["1", "1.00", "1.80", "quilts:", "ingest"]
    assert lines[-1].split() == ["1", "2.50", "2.50", "quilts:", "grams"]


def test_a_directory_gives_its_one_log_or_a_rolling_logs_parts_in_order(tmp_path, capsys):
    events = _log()
    run = tmp_path / "eventlog_v2_local-1"
    run.mkdir()
    (run / ".appstatus_local-1.crc").write_text("")
    (run / "appstatus_local-1").write_text("")
    # a rolling log: parts 1, 2, 10 (numeric order, not the names')
    for n, part in ((1, events[:3]), (2, events[3:6]), (10, events[6:])):
        (run / f"events_{n}_local-1").write_text("".join(json.dumps(e) + "\n" for e in part))
    assert [p.name for p in spark_jobs.log_files(tmp_path)] == ["events_1_local-1", "events_2_local-1",
                                                               "events_10_local-1"]
    assert spark_jobs.main([str(tmp_path)]) == 0
    assert "2 jobs; 3.5 s of job wall time" in capsys.readouterr().out
    (tmp_path / "stray.json").write_text("{}\n")
    with pytest.raises(SystemExit, match="expected one run's event log"):
        spark_jobs.log_files(tmp_path)


@pytest.mark.skipif(shutil.which("zstd") is None, reason="needs the zstd command")
def test_a_zstd_compressed_log_as_spark_writes_it(tmp_path):
    plain = tmp_path / "events_1_local-1"
    plain.write_text("".join(json.dumps(e) + "\n" for e in _log()))
    subprocess.run(["zstd", "-q", str(plain), "-o", str(plain) + ".zstd"], check=True)
    plain.unlink()
    start, jobs = spark_jobs.jobs_of(spark_jobs.events(spark_jobs.log_files(tmp_path)))
    assert (start, [j.task_ms for j in jobs]) == (1_000, [1_800, 2_500])
