"""docker/: the Dockerfile, its entry point and the compose cluster agree with each other and with
what CI runs, without an engine (the fast tier): the compose file is parsed, the Dockerfile's base
image is checked against the pinned PySpark, and the entry point's dispatch is run against stub
spark-submit / python executables. tests/test_deploy_docker_run.py builds and runs the image."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pyspark
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DOCKER = REPO / "docker"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


@pytest.fixture(scope="module")
def dockerfile() -> str:
    return (DOCKER / "Dockerfile").read_text()


def test_base_image_is_the_official_spark_of_the_pinned_pyspark(dockerfile):
    image = re.search(r"^ARG SPARK_IMAGE=(\S+)$", dockerfile, re.M).group(1)
    match = re.fullmatch(r"apache/spark:(\d+\.\d+\.\d+)-scala2\.13-java17-python3-ubuntu", image)
    assert match, image
    # The image's Spark is in the pinned range, on the minor release CI tests with.
    assert match.group(1).split(".")[:2] == pyspark.__version__.split(".")[:2]
    pin = re.search(r'"pyspark([^"]+)"', (REPO / "pyproject.toml").read_text()).group(1)
    low, high = re.fullmatch(r">=([\d.]+),<([\d.]+)", pin).groups()
    as_tuple = lambda v: tuple(int(x) for x in v.split("."))  # noqa: E731
    assert as_tuple(low) <= as_tuple(match.group(1)) < as_tuple(high)
    assert dockerfile.count("FROM ${SPARK_IMAGE}") == 2


def test_image_builds_with_the_command_ci_runs_from_what_the_context_keeps(dockerfile):
    # deploy/pack.sh is what tests/test_deploy_cluster.py runs in CI.
    assert "RUN PYTHON=python3 OUT=dist deploy/pack.sh" in dockerfile
    assert re.findall(r"^COPY (.+)$", dockerfile, re.M) == [". /build", "--from=pack /runtime /"]
    # The build context is what .dockerignore keeps: everything the first stage uses, nothing else
    # (a checkout's .venv and .git would otherwise go to the engine on every build).
    ignore = (REPO / ".dockerignore").read_text().splitlines()
    assert ignore[ignore.index("*") - 1].startswith("#") and "*" in ignore
    kept = {line[1:] for line in ignore if line.startswith("!")}
    assert kept == {"pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "src", "conf",
                    "data/sample", "deploy", "jobs", "docker/entrypoint.sh"}
    for path in kept:
        assert (REPO / path).exists(), f".dockerignore keeps {path}: not in the repository"
    assert re.search(r'^ENTRYPOINT \["/opt/quiltdetect/entrypoint.sh"\]$', dockerfile, re.M)
    assert re.search(r'^CMD \["demo"\]$', dockerfile, re.M)


def test_compose_is_one_master_two_workers_and_a_submit_from_one_image(compose):
    services = compose["services"]
    assert set(services) == {"spark-master", "spark-worker-1", "spark-worker-2", "submit"}
    images = {(s["image"], s["build"]["context"], s["build"]["dockerfile"], *s["build"]["args"]) for s in services.values()}
    assert images == {("quiltdetect:latest", "..", "docker/Dockerfile", "SPARK_IMAGE")}
    assert (DOCKER / "..").resolve() == REPO and (DOCKER / "../data/sample").is_dir()
    master = services["spark-master"]
    assert master["command"][0] == "master" and master["hostname"] == "spark-master"
    port = master["command"][master["command"].index("--port") + 1]
    for name, service in services.items():
        assert service["environment"]["SPARK_MASTER"] == f"spark://spark-master:{port}", name
        mounts = dict(v.split(":")[:2] for v in service["volumes"])
        assert mounts["../data/sample"] == "/data/sample" and mounts["../out"] == "/out", name
    for worker in ("spark-worker-1", "spark-worker-2"):
        assert services[worker]["command"][0] == "worker"
        assert services[worker]["depends_on"]["spark-master"]["condition"] == "service_healthy"
    submit = services["submit"]["command"]
    assert (REPO / "jobs" / f"{submit[0]}.py").is_file()
    for flag, value in zip(submit, submit[1:], strict=False):
        if flag == "--input":
            assert value.startswith("/data/sample")
        if flag == "--output":
            assert value.startswith("/out/")


def _stub(path: Path, name: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / name).write_text(f'#!/bin/sh\necho "$PYTHONPATH" > "$(dirname "$0")/{name}.pythonpath"\necho {name} "$@"\n')
    (path / name).chmod(0o755)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], "python -m quiltdetect.cli demo --sample {Q}/data/sample --output /out/demo"),
        (["quilts", "--input", "x"], "python -m quiltdetect.cli quilts --input x"),
        (["quiltdetect", "neardup", "--input", "x"], "python -m quiltdetect.cli neardup --input x"),
        (["find_quilts", "--input", "/data/sample", "--output", "/out/q"],
         "spark-submit --master spark://m:7077 --conf spark.pyspark.python={Q}/env/bin/python "
         "--conf spark.pyspark.driver.python={Q}/env/bin/python {Q}/jobs/find_quilts.py --input /data/sample --output /out/q"),
        (["worker", "--cores", "1"], "spark-class org.apache.spark.deploy.worker.Worker spark://m:7077 --cores 1"),
        (["master", "--port", "7077"], "spark-class org.apache.spark.deploy.master.Master --host {host} --port 7077"),
        (["echo", "hi"], "hi"),
    ],
)
def test_entrypoint_dispatch(tmp_path, argv, expected):
    """Run docker/entrypoint.sh with stub executables: every compose command and the default."""
    home, spark_home = tmp_path / "q", tmp_path / "spark"
    (spark_home / "python" / "lib").mkdir(parents=True)
    (spark_home / "python" / "lib" / "py4j-0.10.9.9-src.zip").write_bytes(b"")
    _stub(home / "env" / "bin", "python")
    _stub(spark_home / "bin", "spark-submit")
    _stub(spark_home / "bin", "spark-class")
    (home / "jobs").mkdir()
    for job in (REPO / "jobs").glob("*.py"):
        (home / "jobs" / job.name).write_text(job.read_text())
    env = {**os.environ, "QUILTDETECT_HOME": str(home), "SPARK_HOME": str(spark_home), "SPARK_MASTER": "spark://m:7077"}
    out = subprocess.run(["bash", str(DOCKER / "entrypoint.sh"), *argv], env=env, capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    host = subprocess.run(["hostname"], capture_output=True, text=True).stdout.strip()
    assert shlex.split(out.stdout) == shlex.split(expected.format(Q=home, host=host))
    if argv[:1] in ([], ["quilts"], ["quiltdetect"]):  # the packed env finds the image's PySpark and py4j
        seen = (home / "env" / "bin" / "python.pythonpath").read_text().strip().split(":")
        assert seen[:2] == [f"{spark_home}/python", f"{spark_home}/python/lib/py4j-0.10.9.9-src.zip"]


def test_entrypoint_keeps_the_console_commands_exit_status_while_it_waits_for_the_jvm(tmp_path):
    """With a class archive kept (QUILTDETECT_JVM_CACHE names a directory) the entry point runs the
    console command as a child, to outlive it while the JVM writes: its exit status is the command's."""
    home = tmp_path / "q"
    (home / "env" / "bin").mkdir(parents=True)
    (home / "env" / "bin" / "python").write_text('#!/bin/sh\necho python "$@"\nexit 3\n')
    (home / "env" / "bin" / "python").chmod(0o755)
    env = {**os.environ, "QUILTDETECT_HOME": str(home), "SPARK_HOME": str(tmp_path / "spark"),
           "QUILTDETECT_JVM_CACHE": str(tmp_path / "cache")}
    out = subprocess.run(["bash", str(DOCKER / "entrypoint.sh"), "quilts", "--input", "x"], env=env,
                         capture_output=True, text=True, timeout=90)
    assert (out.returncode, out.stdout.split()) == (3, ["python", "-m", "quiltdetect.cli", "quilts", "--input", "x"])
