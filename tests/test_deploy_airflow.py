"""dags/quiltdetect_weekly.py: loaded by Airflow's own DagBag (every task's rendered spark-submit
arguments checked, and a per-task options file), and two scheduled runs of its quilt and
near-duplicate chains (ingest -> quilts, near_duplicates, then the next week's, both updates)
with ``dag.test()`` against
local Spark on the bundled samples. Needs the ``airflow`` extra (skipped without it).

The other analyses' tasks (the sweep after the quilts, the rest after the ingest) are the same
operator with other job files and arguments (the first test checks them exactly);
tests/test_deploy_cluster.py runs each of those jobs with spark-submit on the ingest job's docs/
table, as these tasks do. Running them here too cost about 20 s of CI time each (a JVM each) and
tested nothing more.

Airflow runs in subprocesses with a throwaway AIRFLOW_HOME (SQLite), so the test never touches
a real Airflow installation. The Spark side (spark-submit, the driver's Python) is this Python's
unless QUILTDETECT_SPARK_PYTHON names another (an Airflow venv without PySpark can then test).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tiers import SHORT_JVM

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"

pytestmark = [pytest.mark.skipif(
    importlib.util.find_spec("airflow") is None,
    reason="Airflow is not installed: pip install -e '.[airflow]' to run the DAG tests",
)]

LOAD = r"""
import json, sys
try:
    from airflow.dag_processing.dagbag import DagBag
except ImportError:
    from airflow.models.dagbag import DagBag
bag = DagBag(dag_folder=sys.argv[1])
dag = bag.dags.get("quiltdetect_weekly")
out = {"import_errors": {k: str(v) for k, v in bag.import_errors.items()}, "dags": sorted(bag.dags),
       "heavy": sorted(m for m in ("pyspark", "quiltdetect", "pandas", "numpy") if m in sys.modules)}
if dag is not None:
    params = {k: dag.params[k] for k in dag.params}
    ctx = {"params": params, "ds_nodash": "20260105"}
    out.update(catchup=dag.catchup, schedule=str(getattr(dag, "schedule", None) or dag.timetable.summary),
               params=params, tasks={})
    for task in dag.tasks:
        out["tasks"][task.task_id] = {
            "type": type(task).__name__, "upstream": sorted(task.upstream_task_ids),
            "conn_id": task._conn_id,
            "application": task.render_template(task.application, ctx),
            "application_args": task.render_template(task.application_args, ctx),
            "properties_file": task.render_template(task.properties_file, ctx),
            "env_vars": task.render_template(task.env_vars, ctx),
        }
    # A per-task options file (params.task_configs) reaches its task's second --config only.
    mine = {**ctx, "params": {**params, "task_configs": {"sweep": "/etc/sweep.yaml"}}}
    out["with_task_config"] = {t.task_id: t.render_template(t.application_args, mine) for t in dag.tasks}
sys.path.insert(0, sys.argv[1])
import quiltdetect_weekly  # the table the DAG is built from
out["table"] = {k: [job, list(up), list(cmd)] for k, (job, up, cmd) in quiltdetect_weekly.TASKS.items()}
print("RESULT " + json.dumps(out, default=str))
"""

RUN = r"""
import json, sys
from datetime import datetime, timezone
try:
    from airflow.dag_processing.dagbag import DagBag
except ImportError:
    from airflow.models.dagbag import DagBag
dag = DagBag(dag_folder=sys.argv[1]).dags["quiltdetect_weekly"]
if len(sys.argv) > 4:  # only these tasks (comma-separated)
    dag = dag.partial_subset(sys.argv[4].split(","), include_upstream=False)
when = datetime.fromisoformat(sys.argv[3]).replace(tzinfo=timezone.utc)
run = dag.test(logical_date=when, run_conf=json.loads(sys.argv[2]))
print("RESULT " + json.dumps({"state": str(run.state), "tasks": {ti.task_id: str(ti.state) for ti in run.get_task_instances()}}))
"""


def _spark_python() -> str:
    return os.environ.get("QUILTDETECT_SPARK_PYTHON", sys.executable)


@pytest.fixture(scope="module")
def airflow_env(tmp_path_factory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("airflow_home")
    env = {**os.environ,
           "AIRFLOW_HOME": str(home),
           "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
           "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db",
           "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
           "QUILTDETECT_HOME": str(REPO),
           "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps(
               {"conn_type": "spark", "host": "local[2]", "extra": {"deploy-mode": "client", "spark-binary": "spark-submit"}}),
           "PATH": str(Path(_spark_python()).parent) + os.pathsep + os.environ.get("PATH", "")}
    return env


def _python(script: str, args: list[str], env: dict[str, str], timeout: int) -> dict:
    done = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    line = next(x for x in done.stdout.splitlines()[::-1] if x.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def test_dagbag_loads_the_dag_with_its_tasks_and_spark_submit_arguments(airflow_env):
    got = _python(LOAD, [str(REPO / "dags")], airflow_env, timeout=600)
    tasks_table = got["table"]
    assert got["import_errors"] == {} and got["dags"] == ["quiltdetect_weekly"]
    assert got["heavy"] == [], f"parse time imported {got['heavy']}"
    assert got["catchup"] is False
    # Every spark-submit entry point of jobs/ is a task, and the dependencies are the table's.
    assert sorted(job for job, _, _ in tasks_table.values()) == sorted(p.name for p in (REPO / "jobs").glob("*.py"))
    assert set(got["tasks"]) == set(tasks_table)
    # ingest -> quilts -> sweep; ingest -> the other analyses.
    assert {t: up for t, (_, up, _) in tasks_table.items()} == {
        "ingest": [], "quilts": ["ingest"], "sweep": ["quilts"], "near_duplicates": ["ingest"],
        "content_reuse": ["ingest"], "mwo_join": ["ingest"], "phrases": ["ingest"]}
    run = "s3a://my-bucket/quiltdetect/20260105"
    for task_id, (job, upstream, command) in tasks_table.items():
        task = got["tasks"][task_id]
        assert task["type"] == "SparkSubmitOperator" and task["conn_id"] == "spark_default"
        assert sorted(upstream) == task["upstream"]
        assert task["application"] == f"{REPO}/jobs/{job}"
        source = (["--input", "s3a://my-bucket/crawl/"] if task_id == "ingest"
                  else ["--input", f"{run}/ingest/docs", "--input-format", "parquet"])
        extra = (["--previous", f"s3a://my-bucket/quiltdetect/*/{task_id}"]
                 if task_id in ("quilts", "near_duplicates") else [])
        assert task["application_args"] == [
            *command, *source, "--output", f"{run}/{task_id}",
            "--config", f"{REPO}/conf/cluster.yaml", "--config", f"{REPO}/conf/cluster.yaml", *extra]
        assert task["properties_file"] == f"{REPO}/conf/spark-defaults.conf"
        assert task["env_vars"]["PYSPARK_DRIVER_PYTHON"] == "python3"
        with_config = got["with_task_config"][task_id]
        second = with_config.index("--config", with_config.index("--config") + 1) + 1
        assert with_config[second] == ("/etc/sweep.yaml" if task_id == "sweep" else f"{REPO}/conf/cluster.yaml")


@pytest.mark.spark
def test_two_scheduled_runs_of_the_quilt_and_near_duplicate_chains_on_local_spark(airflow_env, tmp_path):
    """``dag.test()``: the real operator runs the real spark-submit, local[2], on the sample."""
    migrate = subprocess.run([str(Path(sys.executable).parent / "airflow"), "db", "migrate"], env=airflow_env,
                             capture_output=True, text=True, timeout=900)
    assert migrate.returncode == 0, migrate.stdout[-2000:] + migrate.stderr[-3000:]
    job_config = tmp_path / "job.yaml"
    job_config.write_text("spark:\n  spark.sql.shuffle.partitions: 4\n  spark.ui.enabled: false\n")
    # spark-submit's own properties: the client JIT makes each of the four short local JVMs
    # cheaper (as in tests/conftest.py); also checks that the DAG passes --properties-file on.
    properties = tmp_path / "spark-test.conf"
    properties.write_text(f"spark.driver.extraJavaOptions {SHORT_JVM}\n"
                          "spark.ui.showConsoleProgress false\n")
    conf = {"input": str(SAMPLE / "synthetic-quilts.warc.gz"), "output_root": str(tmp_path / "out"),
            "job_config": str(job_config),
            "properties_file": str(properties), "driver_python": _spark_python()}
    chain = "ingest,quilts,near_duplicates"
    got = _python(RUN, [str(REPO / "dags"), json.dumps(conf), "2026-01-05", chain], airflow_env, timeout=2400)
    assert got["state"].endswith("success"), got
    assert sorted(got["tasks"]) == sorted(chain.split(",")), got
    assert all(s.endswith("success") for s in got["tasks"].values()), got
    runs = list((tmp_path / "out").iterdir())
    assert len(runs) == 1
    for task in got["tasks"]:
        done = json.loads((runs[0] / task / "_COMPLETE").read_text())
        assert done["config"]["output"] == str(runs[0] / task)
    assert json.loads((runs[0] / "ingest" / "metrics.json").read_text())["stages"]["ingest"]["documents"] == 400
    metrics = json.loads((runs[0] / "quilts" / "metrics.json").read_text())
    assert metrics["stages"]["ingest"]["documents"] == 400 and metrics["stages"]["quilts"]["quilts"] > 0
    assert "previous_documents" not in metrics["stages"]["ingest"]  # the first run starts afresh

    # The next week's scheduled run (its ingest and quilt tasks): the quilt task updates the first.
    week2 = {**conf, "input": str(SAMPLE / "warcfile.warc.gz")}
    got = _python(RUN, [str(REPO / "dags"), json.dumps(week2), "2026-01-12", chain], airflow_env,
                  timeout=1200)
    assert got["state"].endswith("success") and len(got["tasks"]) == 3, got
    later = tmp_path / "out" / "20260112"
    new = json.loads((later / "ingest" / "metrics.json").read_text())["stages"]["ingest"]["documents"]
    update = json.loads((later / "quilts" / "metrics.json").read_text())["stages"]
    assert update["ingest"]["previous_run"] == str(runs[0] / "quilts")
    assert (update["ingest"]["previous_documents"], update["ingest"]["new_documents"]) == (400, new)
    assert update["ingest"]["documents"] == 400 + new and update["quilts"]["quilts"] >= metrics["stages"]["quilts"]["quilts"]
    # and the near-duplicate task decides the new week's pages against the first week's kept ones
    first = json.loads((runs[0] / "near_duplicates" / "metrics.json").read_text())["stages"]
    nd = json.loads((later / "near_duplicates" / "metrics.json").read_text())["stages"]
    assert nd["ingest"]["previous_run"] == str(runs[0] / "near_duplicates")
    assert nd["ingest"]["new_documents"] == new and nd["kept"]["documents_kept"] + nd["kept"]["documents_dropped"] == 400 + new
    assert nd["kept"]["documents_dropped"] >= first["kept"]["documents_dropped"]
