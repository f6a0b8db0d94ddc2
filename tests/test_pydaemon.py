"""The Python worker daemon of local sessions (``common/pydaemon.py``): PySpark imported from its
compiled installed modules, and archives on ``sys.path`` read again only when they change."""

from __future__ import annotations

import importlib
import sys
import zipfile
import zipimport
from pathlib import Path

import pytest

from quiltdetect.common import pydaemon


def _zip(path: Path, modules: dict[str, str]) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, source in modules.items():
            archive.writestr(f"{name}.py", source)


@pytest.fixture
def restored(monkeypatch):
    """sys.path, the zipimporter method and the modules imported here, as they were."""
    monkeypatch.setattr(zipimport.zipimporter, "invalidate_caches", zipimport.zipimporter.invalidate_caches)
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("qd_zipped_"):
            del sys.modules[name]


def test_an_archive_is_read_again_only_when_its_file_changed(tmp_path, monkeypatch, restored):
    archive = tmp_path / "code.zip"
    _zip(archive, {"qd_zipped_a": "X = 1\n"})
    sys.path.insert(0, str(archive))
    assert importlib.import_module("qd_zipped_a").X == 1
    reads: list[str] = []
    read = zipimport._read_directory
    monkeypatch.setattr(zipimport, "_read_directory", lambda path: reads.append(path) or read(path))

    assert pydaemon.read_archives_once()
    assert pydaemon.read_archives_once()  # twice: still one wrapper
    for _ in range(3):
        importlib.invalidate_caches()  # what PySpark's worker calls at the start of every task
    assert reads.count(str(archive)) == 1  # the first call reads it (no stamp yet), the others do not

    _zip(archive, {"qd_zipped_a": "X = 1\n", "qd_zipped_b": "Y = 2  # a longer file\n"})
    importlib.invalidate_caches()
    assert reads.count(str(archive)) == 2
    assert importlib.import_module("qd_zipped_b").Y == 2  # the changed archive's new module is found


def _package(root: Path, name: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text("")


def test_the_archives_of_an_installed_pyspark_leave_the_path_and_others_stay(tmp_path):
    site, user = tmp_path / "site-packages", tmp_path / "user"
    _package(site, "pyspark")
    _package(site, "py4j")
    user.mkdir()
    shipped = [site / "pyspark/python/lib/pyspark.zip", site / "pyspark/python/lib/py4j-0.10.9.9-src.zip",
               site / "pyspark/jars/spark-core_2.13-4.0.5.jar"]
    own = tmp_path / "job.zip"
    for path in [*shipped, own]:
        path.parent.mkdir(parents=True, exist_ok=True)
        _zip(path, {"m": ""})
    path = [str(user), *map(str, shipped), str(own), str(tmp_path / "missing.zip"), str(site)]

    assert pydaemon.without_installed_archives(path) == [str(user), str(own), str(tmp_path / "missing.zip"), str(site)]
    # A Spark distribution: PySpark (or py4j) only in its archives, which then stay.
    assert pydaemon.without_installed_archives(path[:-1]) == path[:-1]
    (site / "py4j" / "__init__.py").unlink()
    (site / "py4j").rmdir()
    assert pydaemon.without_installed_archives(path) == path


def test_the_sessions_python_workers_import_the_installed_compiled_pyspark(spark):
    """The tests' session is a local session with the shipped daemon: its workers' PySpark is the
    installed package (not ``pyspark.zip``, where nothing is compiled)."""
    if spark.conf.get("spark.python.daemon.module", None) != pydaemon.__name__:
        pytest.fail("the tests' session does not run the shipped daemon (tests/conftest.py)")

    def origins(batches):  # defined here: pickled by value, the workers cannot import this module
        import sys

        import pyarrow as pa

        for _ in batches:
            pass
        pyspark = sys.modules["pyspark"]
        yield pa.RecordBatch.from_arrays([pa.array([pyspark.__file__]), pa.array([str(pyspark.__spec__.cached)])],
                                         names=["file", "cached"])

    rows = spark.range(2).repartition(2).mapInArrow(origins, "file string, cached string").collect()
    assert rows
    for row in rows:
        assert ".zip" not in row["file"], row["file"]
        assert row["file"].endswith("__init__.py") and row["cached"].endswith(".pyc")
