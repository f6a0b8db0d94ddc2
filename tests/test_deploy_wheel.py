"""The built wheel is all a user needs: build it (sdist, then the wheel from the sdist, as
``uv build`` does), install it with its dependencies into a fresh virtual environment outside
the checkout, and run ``quiltdetect demo`` and a ``jobs/`` file through that environment's
``spark-submit`` from a directory outside the checkout, with this checkout's PYTHONPATH and
Spark variables removed (as in a shell that only activated the new environment).

The wheel must carry ``conf/*.yaml`` and ``data/sample/`` (setup.py copies them in; MANIFEST.in
puts them in the sdist). Marked ``deploy`` (``pytest -m deploy``, as .ci/run runs it); needs
``uv`` (installed by .ci/run) and PyPI or uv's cache for the dependencies. Two JVM runs.
The check of docs/deploy.md's install-without-pyspark recipe runs in the default suite.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from tiers import SHORT_JVM

REPO = Path(__file__).resolve().parents[1]
UV = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")

needs_uv = pytest.mark.skipif(UV is None, reason="the wheel test builds and installs with uv: pip install uv")

# What the wheel must carry, as (folder of the checkout, pattern): the same paths inside the package.
BUNDLED = (("conf", "*.yaml"), ("data/sample", "*"))


@dataclass(frozen=True)
class Installed:
    sdist: Path
    wheel: Path
    venv: Path
    env: dict[str, str]  # an "activated" environment: the venv first on PATH, nothing of the checkout
    site: Path  # cwd for the runs, outside the checkout

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)


def _run(argv: list, timeout: int, **kwargs) -> subprocess.CompletedProcess:
    started = time.monotonic()
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout, **kwargs)
    print(f"\n{Path(str(argv[0])).name} {argv[1]}: {time.monotonic() - started:.0f} s")
    assert done.returncode == 0, f"{argv}\n" + done.stdout[-3000:] + done.stderr[-5000:]
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    assert REPO not in base.parents, "the install must be outside the checkout"
    dist = base / "dist"
    # No --wheel: build the sdist, then the wheel from the unpacked sdist (what a user gets
    # from PyPI's sdist and the strictest path: only files the sdist carries reach the wheel).
    _run([UV, "build", "--quiet", "--out-dir", dist, REPO], timeout=600, cwd=base)
    (sdist,), (wheel,) = dist.glob("quiltdetect-*.tar.gz"), dist.glob("quiltdetect-*.whl")
    venv = base / "venv"
    _run([UV, "venv", "--quiet", "--python", sys.executable, venv], timeout=300, cwd=base)
    install = [UV, "pip", "install", "--quiet", "--python", venv / "bin" / "python", wheel]
    # From uv's cache when it holds every dependency (.ci/run's install step filled it minutes
    # before), else from the index: an index that answers the revalidation of PySpark's sdist as
    # modified (this machine's does) makes uv download and build PySpark again, 33 of the 75 s.
    started = time.monotonic()
    offline = subprocess.run([str(a) for a in [*install, "--offline"]], capture_output=True, timeout=1200, cwd=base)
    print(f"\nuv pip install --offline: {time.monotonic() - started:.0f} s, exit {offline.returncode}")
    if offline.returncode != 0:
        _run(install, timeout=1200, cwd=base)
    drop = ("PYTHONPATH", "PYTHONHOME", "SPARK_HOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv), SPARK_LOCAL_IP="127.0.0.1")
    site = base / "elsewhere"
    site.mkdir()
    return Installed(sdist, wheel, venv, env, site)


def _expected() -> dict[str, str]:
    """Path inside the package -> sha256, for every bundled file of the checkout."""
    files = [p for folder, pattern in BUNDLED for p in (REPO / folder).glob(pattern) if p.is_file()]
    assert len(files) > 10, files
    return {f"quiltdetect/{p.relative_to(REPO).as_posix()}": hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


@needs_uv
def test_wheel_and_sdist_carry_the_configs_and_the_sample(installed):
    expected = _expected()
    assert "quiltdetect/conf/quilts.yaml" in expected and "quiltdetect/data/sample/SHA256SUMS" in expected
    with zipfile.ZipFile(installed.wheel) as whl:
        got = {n: hashlib.sha256(whl.read(n)).hexdigest() for n in whl.namelist() if n in expected}
    assert got == expected, sorted(set(expected) - set(got))
    with tarfile.open(installed.sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"setup.py", "MANIFEST.in"} <= names
    assert {n.removeprefix("quiltdetect/") for n in expected} <= names


@needs_uv
def test_bundled_sample_is_the_installed_packages(installed):
    probe = ("import quiltdetect; from quiltdetect.quilts.cli import bundled_sample; "
             "print(quiltdetect.__file__); print(bundled_sample())")
    done = _run([installed.bin("python"), "-c", probe], timeout=120, cwd=installed.site, env=installed.env)
    module, sample = (Path(line) for line in done.stdout.split())
    assert installed.venv in module.parents, module
    assert sample == module.parent / "data" / "sample" and (sample / "synthetic-quilts.warc.gz").is_file()


def _installed_sample(installed: Installed) -> Path:
    (sample,) = installed.venv.glob("lib/python*/site-packages/quiltdetect/data/sample")
    return sample


@needs_uv
def test_demo_runs_from_the_installed_wheel(installed):
    """As the README's first command runs it: no options, so into ./quiltdetect-demo."""
    out = installed.site / "quiltdetect-demo"
    done = _run([installed.bin("quiltdetect"), "demo"], timeout=1200, cwd=installed.site, env=installed.env)
    first = done.stdout.splitlines()[0]
    assert first.startswith("quiltdetect quilts (") and first.endswith(f"-> {out}"), done.stdout[:2000]
    assert "\n  1. " in done.stdout, done.stdout[:3000]  # the top quilts with their sources
    assert (out / "_COMPLETE").is_file()
    config = yaml.safe_load((out / "config.yaml").read_text())
    assert config["inputs"] == [str(_installed_sample(installed))]
    assert pq.read_table(out / "quilts").num_rows >= 10


@needs_uv
def test_spark_submit_job_file_with_the_installed_wheel(installed):
    out = installed.site / "submitted"
    sample = _installed_sample(installed) / "synthetic-quilts.warc.gz"
    # The job file comes from the checkout (jobs/ is not in the wheel); its directory holds no
    # package, so quiltdetect can only be imported from the environment.
    done = _run([installed.bin("spark-submit"), "--master", "local[2]", "--conf", "spark.ui.showConsoleProgress=false",
                 "--conf", f"spark.driver.extraJavaOptions={SHORT_JVM}",
                 REPO / "jobs" / "find_quilts.py", "--input", sample, "--output", out, "--top", "3",
                 "--set", "spark.sql.shuffle.partitions=4"], timeout=1200, cwd=installed.site, env=installed.env)
    assert f"-> {out}" in done.stdout and "\n  1. " in done.stdout, done.stdout[:3000]
    assert (out / "_COMPLETE").is_file()
    assert pq.read_table(out / "quilts").num_rows >= 3


def test_documented_requirements_without_pyspark_are_pyprojects():  # the default suite: a cheap check
    """docs/deploy.md's ``pip install --no-deps`` recipe lists pyproject.toml's dependencies minus pyspark."""
    block = re.search(r"^dependencies = \[(.*?)^\]", (REPO / "pyproject.toml").read_text(), re.M | re.S).group(1)
    pinned = re.findall(r'"([^"]+)"', re.sub(r"#.*", "", block))
    assert any(r.startswith("pyspark") for r in pinned), pinned
    docs = (REPO / "docs" / "deploy.md").read_text()
    recipe = re.search(r"^pip install --no-deps .*\n(pip install (?:.*\\\n)*.*)$", docs, re.M).group(1)
    assert re.findall(r"'([^']+)'", recipe) == [r for r in pinned if not r.startswith("pyspark")]
