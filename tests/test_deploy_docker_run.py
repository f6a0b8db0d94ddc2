"""The Docker image built and run (docs/deploy.md, "Docker"): the docs' own command lines, in a
Docker engine, compared with local runs of the same jobs in the test's Spark session.

* the docs' ``docker build`` line builds the image from ``docker/Dockerfile`` (both stages,
  ``deploy/pack.sh`` inside) in a copy of the repository, on a stand-in for the official Spark
  base image (``.ci/docker.sh base``: none can be pulled here) given as ``--build-arg
  SPARK_IMAGE=...``, with ``--network host`` (this machine's containers reach no package index
  through a bridge);
* ``docker run --rm quiltdetect`` prints the quilts that the demo prints outside Docker;
* the console command and a ``jobs/`` file, each as the docs show it (``--user "$(id -u):$(id
  -g)"``, the crawl mounted read-only at ``/data``, absolute and relative outputs), write tables
  equal to a local run's, owned by the invoking user;
* the compose cluster (master, two workers, submit) writes the local run's tables, and ``down``
  leaves no container, network or volume of the project behind;
* a container killed mid-run (``docker kill``), without a network and as a user the image does
  not know, resumes from its finished stages when run again, to the same tables, and leaves the
  JVM's class archive whole on the mounted cache directory.

Marked ``deploy``. Without an engine and the stand-in base the tests skip with one line saying how
to get both; ``.ci/run`` sets QUILTDETECT_DOCKER_REQUIRED=1, under which they fail instead.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from quiltdetect.common.jvmclasses import WRITTEN
from quiltdetect.quilts.cli import DEMO_SETTINGS
from testkit.tables import canonical_rows

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
# The crawl mounted at /data: the bundled sample's crawl files (its README and SHA256SUMS stay out).
CRAWL = ("sample-0000.warc.gz", "clueweb-quirk.warc.gz", "synthetic-quilts.warc.gz")
VERSION = re.search(r"^ARG SPARK_IMAGE=apache/spark:([\d.]+)-", (REPO / "docker" / "Dockerfile").read_text(), re.M).group(1)
BASE = os.environ.get("QUILTDETECT_SPARK_BASE", f"quiltdetect/spark-standin:{VERSION}")
STANDIN_LABEL = "quiltdetect.recipe"  # .ci/docker.sh labels the stand-in so; images built on it inherit it
HOW = ("sudo bash .ci/docker.sh engine && sudo bash .ci/docker.sh base, then "
       "pytest -m deploy tests/test_deploy_docker_run.py")
PREFIX = f"quiltdetect-test-{os.getpid()}"
TABLES = ("quilts", "doc_stats", "docs")
# The demo's own settings, as options of the quilt job.
DEMO = [word for key, value in DEMO_SETTINGS.items() for word in (f"--{key}", str(value))]


def _sh(command: str, cwd: Path, timeout: int = 900, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """One shell line as a user types it; its transcript (command, time, last lines) is printed."""
    started = time.monotonic()
    done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    took = time.monotonic() - started
    tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-6:])
    print(f"\n$ {command}\n[exit {done.returncode}, {took:.0f} s]\n{tail}", flush=True)
    if check:
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _problem() -> str | None:
    if shutil.which("docker") is None:
        return "no docker command"
    if subprocess.run(["docker", "info"], capture_output=True).returncode:
        return "no Docker engine answers `docker info`"
    if subprocess.run(["docker", "image", "inspect", BASE], capture_output=True).returncode:
        return f"no stand-in base image {BASE}"
    if _compose() is None:
        return "neither `docker compose` nor `docker-compose`"
    return None


def _compose() -> str | None:
    """``docker compose`` (the plugin the docs name), else Debian's ``docker-compose``."""
    if subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return "docker compose"
    return "docker-compose" if shutil.which("docker-compose") else None


def docs_blocks() -> list[list[str]]:
    """The bash blocks of docs/deploy.md's Docker section, each as its command lines (a line
    continued with ``\\`` joined to the next)."""
    text = (REPO / "docs" / "deploy.md").read_text(encoding="utf-8")
    section = text.split("\n## Docker\n", 1)[1].split("\n## ", 1)[0]
    return [[line.strip() for line in block.replace("\\\n", " ").splitlines() if line.strip()]
            for block in re.findall(r"^```bash\n(.*?)^```", section, re.M | re.S)]


def _line(block: list[str], pattern: str) -> str:
    found = [line for line in block if re.search(pattern, line)]
    assert len(found) == 1, (pattern, block)
    return found[0]


@pytest.fixture(scope="module")
def engine() -> None:
    problem = _problem()
    if problem and os.environ.get("QUILTDETECT_DOCKER_REQUIRED") == "1":
        pytest.fail(f"{problem}: .ci/run starts the engine and builds the base ({HOW})")
    if problem:
        pytest.skip(f"Docker image tests: {problem}; to run them: {HOW}")


@pytest.fixture(scope="module")
def place(engine, tmp_path_factory) -> Path:
    """A copy of the repository (what the build context keeps, and docker/), with ``crawl/``."""
    root = tmp_path_factory.mktemp("docker") / "quiltdetect"
    kept = [line[1:] for line in (REPO / ".dockerignore").read_text().splitlines() if line.startswith("!")]
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in sorted({*kept, "docker", ".dockerignore"}):
        src = REPO / name
        if (root / name).exists():  # docker/entrypoint.sh, within docker/
            continue
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree(src, root / name, ignore=ignore) if src.is_dir() else shutil.copy2(src, root / name))
    (root / "crawl").mkdir()
    for name in CRAWL:
        shutil.copy(SAMPLE / name, root / "crawl" / name)
    yield root
    _remove_containers()


def _remove_containers() -> None:
    """Nothing of these tests outlives them: containers by name (a killed run's included)."""
    names = subprocess.run(["docker", "ps", "-aq", "--filter", f"name={PREFIX}"], capture_output=True, text=True).stdout.split()
    if names:
        subprocess.run(["docker", "rm", "-f", *names], capture_output=True)


@pytest.fixture(scope="module")
def image(place) -> str:
    """The docs' build line, on the stand-in base."""
    build = _line(docs_blocks()[0], r"^docker build ")
    _sh(f"{build} --build-arg SPARK_IMAGE={BASE} --network host", place, timeout=1500)
    yield "quiltdetect"
    # Nor does the image: each build left ~3.2 GB behind (the image and its first stage, untagged
    # once the next build takes the name), and a machine that runs the tier daily ran out of disk.
    # Only images made over the stand-in base (its label) go: no other image is pruned.
    _remove_containers()  # a container of the image keeps it
    subprocess.run(["docker", "rmi", "quiltdetect"], capture_output=True)
    subprocess.run(["docker", "image", "prune", "-f", "--filter", f"label={STANDIN_LABEL}"], capture_output=True)


def _local_run(argv: list[str]) -> str:
    """``jobs/find_quilts.py`` in the test's session, as ``spark-submit`` would run it; what it printed."""
    from job_batch import run_jobs

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        done = run_jobs([{"name": "local", "script": "find_quilts.py", "argv": argv}])
    assert done["local"]["code"] == 0, printed.getvalue()[-3000:]
    return printed.getvalue()


@pytest.fixture(scope="module")
def local(spark, place, tmp_path_factory) -> dict:
    """Local runs: the quilt job on ``crawl/`` (default settings), and the demo's settings on the
    bundled sample, with the quilts it prints."""
    root = tmp_path_factory.mktemp("local")
    _local_run(["--input", str(place / "crawl"), "--output", str(root / "crawl")])
    printed = _local_run(["--input", str(SAMPLE), "--output", str(root / "demo"), *DEMO])
    return {"crawl": root / "crawl", "demo_listing": _listing(printed)}


def _listing(printed: str) -> list[str]:
    """The top quilts a run prints, with their sources (from ``top N quilts`` on)."""
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"top \d+ quilts", line.strip()))
    return [line.rstrip() for line in lines[start:] if re.match(r"\s*(\d+\.|<-|\.\.\.)", line)]


def _same_tables(run: Path, reference: Path) -> None:
    for table in TABLES:
        mine = canonical_rows(run / table, source=lambda s: Path(s).name)
        theirs = canonical_rows(reference / table, source=lambda s: Path(s).name)
        assert theirs, f"{table}: empty in the local run"
        assert mine == theirs, f"{run / table}: differs from the local run's"


def _owned_by(path: Path, uid: int) -> None:
    owners = {p.stat().st_uid for p in [path, *path.rglob("*")]}
    assert owners == {uid}, f"{path}: owned by {owners}, not by {uid}"


def test_the_demo_in_a_container_prints_the_quilts_of_the_demo(image, place, local):
    demo = _line(docs_blocks()[0], r"^docker run --rm quiltdetect\b(?! \w)")
    shown = _sh(demo, place, timeout=600)
    assert _listing(shown.stdout) == local["demo_listing"]
    assert len(local["demo_listing"]) > 10


@pytest.mark.parametrize("kind", ["quilts", "find_quilts"], ids=["console-command", "jobs-file"])
def test_a_run_in_a_container_equals_a_local_run(image, place, local, kind):
    """The docs' ``quilts`` (absolute output) and ``find_quilts`` (relative output) lines."""
    block = docs_blocks()[0]
    _sh(_line(block, r"^mkdir -p out\b"), place)
    line = _line(block, rf"quiltdetect {kind} ")
    output = re.search(r"--output (\S+)", line).group(1)
    _sh(line, place, timeout=600)
    run = place / "out" / output.removeprefix("/out/")
    assert (run / "_COMPLETE").is_file()
    _same_tables(run, local["crawl"])
    _owned_by(run, os.getuid())


def test_the_compose_cluster_equals_a_local_run_and_leaves_nothing_behind(image, place, spark, tmp_path):
    """The docs' compose block as written (``docker compose`` or ``docker-compose``), under a
    project name of its own, on a free port for the master's UI; its input is the bundled sample,
    so the local reference is the quilt job on the sample."""
    block = docs_blocks()[1]
    compose = _compose()
    project = PREFIX.replace("-", "")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {"COMPOSE_PROJECT_NAME": project, "SPARK_IMAGE": BASE, "SPARK_UI_PORT": str(port)}
    try:
        for line in block:
            _sh(re.sub(r"^docker compose\b", compose, line), place, timeout=900, env=env)
    finally:
        _sh(f"{compose} -f docker/compose.yaml down -v --remove-orphans", place, env=env, check=False)
    reference = tmp_path / "sample"
    _local_run(["--input", str(SAMPLE), "--output", str(reference)])
    submit = yaml.safe_load((place / "docker" / "compose.yaml").read_text())["services"]["submit"]["command"]
    _same_tables(place / "out" / submit[submit.index("--output") + 1].removeprefix("/out/"), reference)
    label = f"label=com.docker.compose.project={project}"
    for kind in ("container", "network", "volume"):
        left = subprocess.run(["docker", kind, "ls", *(["-a"] if kind == "container" else []), "-q", "--filter", label],
                              capture_output=True, text=True).stdout.split()
        assert not left, f"compose left {kind}s behind: {left}"


def test_a_killed_container_resumes_to_the_same_output(image, place, local):
    """``docker kill`` once the first stage is done; the same command then resumes. No network
    (the JVM binds to the loopback address) and a user id the image has no name for. The class
    archive is kept on a mounted directory: the container waits for its JVM to write it whole."""
    uid = 4321 if os.getuid() == 0 else os.getuid()
    out, cache = place / "killed", place / "jvm-cache"
    for folder in (out, cache):
        folder.mkdir()
        os.chown(folder, uid, uid)
    name = f"{PREFIX}-kill"
    command = (f'--network none --user {uid}:{uid} -v "$PWD/killed:/out" -v "$PWD/crawl:/data:ro" '
               '-e QUILTDETECT_JVM_CACHE=/cache -v "$PWD/jvm-cache:/cache" '
               "quiltdetect quilts --input /data --output /out/k")
    _sh(f"docker run -d --name {name} {command}", place)
    stage = out / "k" / "_quiltdetect" / "stages" / "ingest.json"
    deadline = time.monotonic() + 300
    while not stage.exists():
        state = subprocess.run(["docker", "inspect", "-f", "{{.State.Running}}", name], capture_output=True, text=True).stdout
        assert state.strip() == "true" and time.monotonic() < deadline, \
            subprocess.run(["docker", "logs", name], capture_output=True, text=True).stderr[-3000:]
        time.sleep(0.5)
    _sh(f"docker kill {name} && docker rm {name}", place)
    assert not (out / "k" / "_COMPLETE").exists(), "the run finished before it was killed"
    _sh(f"docker run --rm {command}", place, timeout=600)
    stages = json.loads((out / "k" / "metrics.json").read_text())["stages"]
    assert stages["ingest"].get("reused") is True, stages["ingest"]
    _same_tables(out / "k", local["crawl"])
    _owned_by(out / "k", uid)
    # The resumed run's JVM wrote the archive whole before its container ended (the killed one's
    # never began: it writes as the JVM exits); the next container's run maps it
    # (tests/test_jvmclasses.py: a writer of another container is gone whatever its pids).
    logs = list(cache.glob("jvm-classes-*.jvm*.log"))
    assert len(logs) == 1 and WRITTEN in logs[0].read_text(), sorted(p.name for p in cache.iterdir())
    assert list(cache.glob("jvm-classes-*.part"))
