"""quiltdetect on Airflow: one spark-submit task per job of jobs/, weekly, no catch-up.

Each task is a ``SparkSubmitOperator`` (apache-airflow-providers-apache-spark) submitting a
``jobs/*.py`` entry point through the Airflow connection ``params.spark_conn`` names (default
``spark_default``: host ``spark://master:7077``, ``yarn`` or ``local[*]``; its extra sets
``deploy-mode`` and ``spark-binary``). Inputs, output root, the job options file and the
spark-submit properties file are Airflow params, so a run can be triggered with other values.
Each run writes ``<output_root>/<ds_nodash>/<task>/``.

Parse time imports only Airflow and the Spark provider: no PySpark, no quiltdetect.
Extend TASKS when a job lands in jobs/ (tests/test_deploy_airflow.py checks they agree).
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

# task id -> (job file, upstream task ids). The quilt job ingests the crawl itself (it writes the
# document table, docs/, beside its results). Jobs from other analyses join here with their
# upstreams, e.g. ("find_near_duplicates.py", ("quilts",)).
TASKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "quilts": ("find_quilts.py", ()),
}

HOME = "{{ params.quiltdetect_home }}"
RUN_DIR = "{{ params.output_root }}/{{ ds_nodash }}"

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
        "properties_file": Param(f"{QUILTDETECT_HOME}/conf/spark-defaults.conf", type=["string", "null"],
                                 description="spark-submit --properties-file (archives, Python); null for none"),
        "driver_python": Param("python3", type="string",
                               description="Python of the driver in client mode (has quiltdetect installed)"),
    },
) as dag:
    tasks = {}
    for task_id, (job, _) in TASKS.items():
        tasks[task_id] = SparkSubmitOperator(
            task_id=task_id,
            conn_id=SPARK_CONN,
            application=f"{HOME}/jobs/{job}",
            name=f"quiltdetect-{task_id}-{{{{ ds_nodash }}}}",
            properties_file="{{ params.properties_file or '' }}",
            env_vars={"PYSPARK_DRIVER_PYTHON": "{{ params.driver_python }}",
                      "PYSPARK_PYTHON": "{{ params.driver_python }}"},
            application_args=["--input", "{{ params.input }}", "--output", f"{RUN_DIR}/{task_id}",
                              "--config", "{{ params.job_config }}", "--overwrite"],
        )
    for task_id, (_, upstream) in TASKS.items():
        for up in upstream:
            tasks[up] >> tasks[task_id]
