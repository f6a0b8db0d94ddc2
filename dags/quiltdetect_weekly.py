"""quiltdetect on Airflow: ingest the week's crawl once, then every analysis; weekly, no catch-up.

    ingest -> quilts -> sweep          (the quilt job, then Table 1 / Fig. 3 of the same corpus)
    ingest -> near_duplicates, content_reuse, mwo_join, phrases

Each task is a ``SparkSubmitOperator`` (apache-airflow-providers-apache-spark) submitting a
``jobs/*.py`` entry point through the Airflow connection ``QUILTDETECT_SPARK_CONN`` names
(default ``spark_default``: host ``spark://master:7077``, ``yarn`` or ``local[*]``; its extra
sets ``deploy-mode`` and ``spark-binary``). ``ingest`` reads the crawl into a document table;
every other task reads that table (``<run>/ingest/docs``), so WARC and HTML are parsed once.
The quilt task is an update (``--previous '<output_root>/*/quilts'``): it adds the week's pages
to the last complete quilt run before it, and finds the quilts of everything crawled so far
without recomputing the old weeks (the first run, finding none, starts afresh; param
``update_quilts`` false makes every week a run of its own crawl only). The near-duplicate task
is an update the same way (``--previous '<output_root>/*/near_duplicates'``, param
``update_near_duplicates``): the week's pages are decided against every page kept so far, and
its ``kept/`` is the deduplicated archive to date.
Inputs, output root, the shared options file, per-task options files and the spark-submit
properties file are Airflow params, so a run can be triggered with other values. Each run
writes ``<output_root>/<ds_nodash>/<task>/``; a retried or re-triggered task resumes its output
(finished stages are kept, see docs/reliability.md).

Parse time imports only Airflow and the Spark provider: no PySpark, no quiltdetect.
TASKS must name every job of jobs/ (tests/test_deploy_airflow.py checks they agree).
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from pathlib import Path

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

try:  # Airflow 3
    from airflow.sdk import DAG, Param
except ImportError:  # Airflow 2.x
    from airflow import DAG
    from airflow.models.param import Param

# Where the repository (jobs/, conf/, dist/) lives on the Airflow workers.
QUILTDETECT_HOME = os.environ.get("QUILTDETECT_HOME", str(Path(__file__).resolve().parents[1]))
SPARK_CONN = os.environ.get("QUILTDETECT_SPARK_CONN", "spark_default")

# task id -> (job file, upstream task ids, arguments before the options).
TASKS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "ingest": ("ingest.py", (), ()),
    "quilts": ("find_quilts.py", ("ingest",), ()),
    "sweep": ("sweep.py", ("quilts",), ()),
    "near_duplicates": ("find_near_duplicates.py", ("ingest",), ()),
    "content_reuse": ("content_reuse.py", ("ingest",), ("detect",)),
    "mwo_join": ("mwo_join.py", ("ingest",), ()),
    "phrases": ("find_popular_phrases.py", ("ingest",), ()),
}

HOME = "{{ params.quiltdetect_home }}"
RUN_DIR = "{{ params.output_root }}/{{ ds_nodash }}"
# Options after the common ones, per task: the quilt and near-duplicate tasks update the last
# complete run of their own.
EXTRA_ARGS = {
    "quilts": ["--previous", "{{ params.output_root ~ '/*/quilts' if params.update_quilts else '' }}"],
    "near_duplicates": ["--previous", "{{ params.output_root ~ '/*/near_duplicates' "
                                      "if params.update_near_duplicates else '' }}"],
}

with DAG(
    dag_id="quiltdetect_weekly",
    description="Find quilted pages and other content reuse in the week's crawl",
    schedule="@weekly",
    start_date=datetime(2026, 1, 5),
    catchup=False,
    max_active_runs=1,
    tags=["quiltdetect", "spark"],
    default_args={"retries": 1, "retry_delay": timedelta(minutes=10)},
    params={
        "input": Param("s3a://my-bucket/crawl/", type="string",
                       description="WARC/WET/Parquet/JSONL file, directory or glob (s3a://, hdfs://, file://)"),
        "output_root": Param("s3a://my-bucket/quiltdetect", type="string",
                             description="each run writes <output_root>/<ds_nodash>/<task>/"),
        "quiltdetect_home": Param(QUILTDETECT_HOME, type="string",
                                  description="the repository on the workers: jobs/, conf/, dist/"),
        "job_config": Param(f"{QUILTDETECT_HOME}/conf/cluster.yaml", type="string",
                            description="--config of every job (job options and spark.* settings)"),
        "task_configs": Param({}, type="object",
                              description="task id -> a second --config for that task only, e.g. "
                                          '{"sweep": "/etc/quiltdetect/sweep.yaml"}'),
        "properties_file": Param(f"{QUILTDETECT_HOME}/conf/spark-defaults.conf", type=["string", "null"],
                                 description="spark-submit --properties-file (archives, Python); null for none"),
        "driver_python": Param("python3", type="string",
                               description="Python of the driver in client mode (has quiltdetect installed)"),
        "update_quilts": Param(True, type="boolean",
                               description="the quilt task adds the week to the last complete quilt run under "
                                           "output_root (false: quilts of this week's crawl only)"),
        "update_near_duplicates": Param(True, type="boolean",
                                        description="the near-duplicate task decides the week's pages against every "
                                                    "page kept so far (false: this week's crawl only)"),
    },
) as dag:
    tasks = {}
    for task_id, (job, _, command) in TASKS.items():
        source = ["--input", "{{ params.input }}"] if task_id == "ingest" else [
            "--input", f"{RUN_DIR}/ingest/docs", "--input-format", "parquet"]
        tasks[task_id] = SparkSubmitOperator(
            task_id=task_id,
            conn_id=SPARK_CONN,
            application=f"{HOME}/jobs/{job}",
            name=f"quiltdetect-{task_id}-{{{{ ds_nodash }}}}",
            properties_file="{{ params.properties_file or '' }}",
            env_vars={"PYSPARK_DRIVER_PYTHON": "{{ params.driver_python }}",
                      "PYSPARK_PYTHON": "{{ params.driver_python }}"},
            application_args=[*command, *source, "--output", f"{RUN_DIR}/{task_id}",
                              "--config", "{{ params.job_config }}",
                              "--config", f"{{{{ params.task_configs.get('{task_id}', params.job_config) }}}}",
                              *EXTRA_ARGS.get(task_id, [])],
        )
    for task_id, (_, upstream, _) in TASKS.items():
        for up in upstream:
            tasks[up] >> tasks[task_id]
