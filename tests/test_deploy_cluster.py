"""spark-submit to a real Spark standalone cluster on 127.0.0.1, with the packed environment.

A master and two one-core workers are started with the ``spark-class`` that the pyspark package
ships. One spark-submit (``tests/job_batch.py``) runs every job of ``jobs/``, each through its
own file, in one application, as the Airflow DAG chains them (``ingest.py`` reads the WARCs, every
analysis reads its ``docs/`` table), with ``--properties-file conf/spark-defaults.conf`` (so executors run
``./environment/bin/python`` from the ``deploy/pack.sh`` archive) and ``--config
conf/cluster.yaml``; each result table must equal a local-mode run of the same ``jobs/`` file on
the same input in the test's own session. Marked ``deploy`` (``pytest -m deploy``, as .ci/run
runs it); skipped without venv-pack (the ``cluster`` extra).

Set QUILTDETECT_ENV_ARCHIVE=dist/quiltdetect-env.tar.gz to reuse an archive built by
deploy/pack.sh instead of building one here (about 1-5 minutes).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from tiers import SHORT_JVM

from testkit.tables import canonical_rows

REPO = Path(__file__).resolve().parents[1]
needs_cluster = pytest.mark.skipif(
    importlib.util.find_spec("venv_pack") is None and not os.environ.get("QUILTDETECT_ENV_ARCHIVE"),
    reason="standalone-cluster test: install the cluster extra (pip install -e '.[cluster]')",
)
SAMPLE = REPO / "data" / "sample"
INPUTS = ("synthetic-quilts.warc.gz", "clueweb-quirk.warc.gz")


@dataclass(frozen=True)
class Job:
    """One spark-submit entry point: its extra options and the result tables to compare."""

    script: str
    args: tuple[str, ...]
    tables: tuple[str, ...]
    command: tuple[str, ...] = ()  # a sub-step given before the options (``reuse detect``)


# Extend when a job lands in jobs/ (test_every_job_is_covered fails until it is listed).
# Every job gets --input, --output and small shuffles: ingest.py the two sample WARCs above, every
# other job the cluster's docs/ table of ingest.py (the first job of the batch) as Parquet.
JOBS = (
    Job("ingest.py", ("--write-rejects",), ("docs", "rejects")),
    Job("find_quilts.py", ("-c", "3"), ("quilts", "doc_stats", "docs")),
    Job("find_near_duplicates.py", (), ("pairs", "clusters")),
    Job("mwo_join.py", ("-t", "0.4"), ("pairs", "records", "postings")),
    Job("sweep.py", ("-k", "5", "-m", "10,50", "-c", "2,3", "--theta", "0.5", "--pivot", "5,50,2,0.5"),
        ("outcomes/k=5/m=10", "outcomes/k=5/m=50")),
    Job("content_reuse.py", ("--set", "chunk_threshold=3", "--set", "file_threshold=3"),
        ("labeled", "pages", "neighborhoods"), command=("detect",)),
    Job("find_popular_phrases.py", (), ("popular_phrases", "doc_popular_counts", "covering_sets", "host_stats")),
)


def test_every_job_is_covered():  # runs in the default suite, so a new job cannot be forgotten
    shipped = sorted(p.name for p in (REPO / "jobs").glob("*.py"))
    assert shipped == sorted(j.script for j in JOBS), "add the new jobs/ file to JOBS"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment without this checkout's PYTHONPATH, so executors see only the archive."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env.update(SPARK_HOME=str(_spark_home()), SPARK_LOCAL_IP="127.0.0.1", **extra)
    return env


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM the process group (JVM, executors, Python workers), SIGKILL what is left."""
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            if sig == signal.SIGTERM:
                time.sleep(1)  # let the group's children exit too, then make sure
        except subprocess.TimeoutExpired:
            pass


@pytest.fixture(scope="module")
def packed_env(tmp_path_factory) -> Path:
    given = os.environ.get("QUILTDETECT_ENV_ARCHIVE")
    if given:
        assert Path(given).is_file(), f"QUILTDETECT_ENV_ARCHIVE={given}: no such file"
        return Path(given).resolve()
    out = tmp_path_factory.mktemp("dist")
    started = time.monotonic()
    built = subprocess.run(["bash", str(REPO / "deploy" / "pack.sh")], cwd=REPO,
                           env={**os.environ, "PYTHON": sys.executable, "OUT": str(out)},
                           capture_output=True, text=True, timeout=1800)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-3000:]
    print(f"\ndeploy/pack.sh: {time.monotonic() - started:.0f} s")
    return out / "quiltdetect-env.tar.gz"


@dataclass
class Cluster:
    master: str
    work_dirs: list[Path]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("standalone")
    spark_class = str(_spark_home() / "bin" / "spark-class")
    port, ui = _free_port(), _free_port()
    env = _clean_env(SPARK_LOG_DIR=str(base / "logs"), SPARK_WORKER_DIR=str(base / "work"))
    procs: list[subprocess.Popen] = []
    logs = []

    def start(name: str, argv: list[str]) -> None:
        log = open(base / f"{name}.log", "wb")  # noqa: SIM115 - closed at teardown
        logs.append(log)
        procs.append(subprocess.Popen([spark_class, *argv], env=env, stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True))

    work_dirs = [base / "work-1", base / "work-2"]
    try:
        start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                         "--port", str(port), "--webui-port", str(ui)])
        master = f"spark://127.0.0.1:{port}"
        for i, work in enumerate(work_dirs, 1):
            start(f"worker-{i}", ["org.apache.spark.deploy.worker.Worker", master, "--host", "127.0.0.1",
                                  "--cores", "1", "--memory", "1g", "--webui-port", str(_free_port()),
                                  "--work-dir", str(work)])
        deadline, alive = time.monotonic() + 300, -1
        while time.monotonic() < deadline:
            assert all(p.poll() is None for p in procs), _tails(base)
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as resp:
                    alive = json.load(resp).get("aliveworkers", 0)
            except OSError:
                alive = -1
            if alive == 2:
                break
            time.sleep(2)
        assert alive == 2, f"workers alive: {alive}\n" + _tails(base)
        yield Cluster(master, work_dirs)
    finally:
        for proc in reversed(procs):
            _stop(proc)
        _kill_strays(base)
        for log in logs:
            log.close()


def _kill_strays(base: Path) -> None:
    """PySpark's daemons start their own process groups; they exit when their executor dies,
    but make sure: kill any process still running inside this cluster's work directories."""
    time.sleep(2)
    for proc_dir in Path("/proc").glob("[0-9]*"):
        try:
            cwd = Path(os.readlink(proc_dir / "cwd"))
        except OSError:
            continue
        if cwd == base or base in cwd.parents:
            try:
                os.kill(int(proc_dir.name), signal.SIGKILL)
            except ProcessLookupError:
                pass


def _tails(base: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-1500:]}" for p in sorted(base.glob("*.log")))


def _argv(job: Job, out: Path, config: list[str], docs: Path) -> list[str]:
    """``docs``: the ingest job's table, the input of every other job."""
    source = ([a for name in INPUTS for a in ("--input", "file://" + str(SAMPLE / name))] if job.script == "ingest.py"
              else ["--input", "file://" + str(docs), "--input-format", "parquet"])
    return [*job.command, *source, "--output", "file://" + str(out), *config,
            "--set", "spark.sql.shuffle.partitions=4", *job.args]


def _name(job: Job) -> str:
    return job.script.removesuffix(".py")


@pytest.fixture(scope="module")
def cluster_runs(cluster, packed_env, tmp_path_factory) -> Path:
    """Every job in one spark-submit to the cluster: one application, one unpacking per executor."""
    base = tmp_path_factory.mktemp("cluster")
    specs = [{"name": _name(j), "script": j.script,
              "argv": _argv(j, base / _name(j), ["--config", str(REPO / "conf" / "cluster.yaml")],
                            base / "ingest" / "docs")} for j in JOBS]
    (base / "specs.json").write_text(json.dumps(specs))
    # Driver: this Python (client mode). Executors: only the unpacked archive's Python, with
    # the checkout's PYTHONPATH removed, so they import quiltdetect from the wheel.
    env = _clean_env(PYSPARK_DRIVER_PYTHON=sys.executable)
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    argv = [str(_spark_home() / "bin" / "spark-submit"), "--master", cluster.master,
            "--properties-file", str(REPO / "conf" / "spark-defaults.conf"),
            "--archives", f"{packed_env}#environment",
            "--conf", f"spark.pyspark.driver.python={sys.executable}",
            "--conf", "spark.executor.memory=1g", "--conf", "spark.cores.max=2",
            "--conf", f"spark.driver.extraJavaOptions={SHORT_JVM}",
            "--conf", f"spark.executor.extraJavaOptions={SHORT_JVM}",
            str(REPO / "tests" / "job_batch.py"), str(base / "specs.json"), str(base / "results.json")]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=2400)
    print(f"\nall {len(JOBS)} jobs in one application on the standalone cluster: {time.monotonic() - started:.0f} s")
    results = json.loads((base / "results.json").read_text()) if (base / "results.json").exists() else {}
    assert done.returncode == 0, f"{results}\n" + done.stdout[-2000:] + done.stderr[-6000:]
    # The executors really ran from the archive: each worker unpacked it for this application.
    unpacked = [p for w in cluster.work_dirs for p in w.glob("app-*/*/environment/bin/python")]
    assert unpacked, "no executor unpacked the environment archive"
    return base


@needs_cluster
@pytest.mark.spark
@pytest.mark.parametrize("job", JOBS, ids=lambda j: j.script)
def test_standalone_cluster_equals_local_mode(job, cluster_runs, spark, tmp_path):
    from job_batch import run_jobs

    local = tmp_path / "local"
    # The same input table as the cluster's job: ingest.py's own test checks it equals local mode's.
    done = run_jobs([{"name": _name(job), "script": job.script,
                      "argv": _argv(job, local, [], cluster_runs / "ingest" / "docs")}])
    assert done[_name(job)]["code"] == 0, done
    remote = cluster_runs / _name(job)
    for table in job.tables:
        a, b = canonical_rows(local / table), canonical_rows(remote / table)
        assert a, f"{table}: empty in local mode"
        assert a == b, f"{table}: the cluster's rows differ from local mode's"
    metrics = {"local": local, "cluster": remote}
    print(f"\n{job.script}: rows per table: " + ", ".join(f"{t}={len(canonical_rows(local / t))}" for t in job.tables))
    for mode, path in metrics.items():
        stages = json.loads((path / "metrics.json").read_text()).get("stages", {})
        print(f"  {mode}: " + ", ".join(f"{s}={v.get('seconds', 0):.1f}s" for s, v in stages.items()))
