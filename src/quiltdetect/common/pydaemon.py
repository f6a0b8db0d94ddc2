"""PySpark's worker daemon, importing PySpark's compiled modules and reading archives once.

Spark puts three archives first on its Python workers' ``sys.path``: ``pyspark.zip``, py4j's
zip and the spark-core jar (about 6,500 entries). Two costs follow, paid again and again:

* Python imports PySpark from ``pyspark.zip``, which holds no compiled bytecode, so every daemon,
  and every worker it forks, compiled the PySpark modules it imports from source. When PySpark is
  pip-installed, those archives are files of the installed package (``.../pyspark/python/lib``,
  ``.../pyspark/jars``), whose compiled modules are the same code: here they are taken off
  ``sys.path`` before PySpark is imported (``without_installed_archives``).
* At the start of every task the worker adds the task's files to ``sys.path`` and calls
  ``importlib.invalidate_caches()`` (``pyspark.worker_util.setup_spark_files``). CPython's
  ``zipimporter`` answers by reading its archive's whole central directory again, in Python:
  a cost every task pays, whatever it does. Here an
  archive's directory is read again only when its file changed (``read_archives_once``), which
  is what the call is for; this covers the archives left on ``sys.path`` (a Spark
  distribution's PySpark, a task's own zip files).

docs/performance.md ("What every Python task paid") has the figures. The console's local
sessions start this module instead of ``pyspark.daemon`` (``spark.python.daemon.module``,
``common/config.py``), which then runs as it is. Under ``spark-submit`` that default is not
passed on (``session.build_session``): the daemon's module must be importable before any task's
files arrive, which ``--py-files`` deployments do not give. ``conf/spark-defaults.conf`` sets it
for the packed environment, whose Python has quiltdetect installed (docs/deploy.md).
"""

from __future__ import annotations

import os
import runpy
import sys
import zipimport
from importlib.machinery import PathFinder

_STAMP = "_quiltdetect_archive_stamp"


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


def read_archives_once() -> bool:
    """Make ``zipimporter.invalidate_caches`` re-read an archive only when its file changed.

    Returns False (and changes nothing) on a Python whose zipimporter has no such method."""
    original = getattr(zipimport.zipimporter, "invalidate_caches", None)
    if original is None or getattr(original, "_quiltdetect_stamped", False):
        return original is not None

    def invalidate_caches(self: zipimport.zipimporter) -> None:
        stamp = _stamp(self.archive)
        if stamp is not None and getattr(self, _STAMP, None) == stamp:
            return
        original(self)
        setattr(self, _STAMP, stamp)

    invalidate_caches._quiltdetect_stamped = True  # type: ignore[attr-defined]
    zipimport.zipimporter.invalidate_caches = invalidate_caches  # type: ignore[method-assign]
    return True


def without_installed_archives(path: list[str]) -> list[str]:
    """``path`` without the archives that an installed PySpark package ships (its
    ``python/lib/*.zip`` and ``jars/*.jar``), when PySpark and py4j import without any archive;
    else ``path`` unchanged (a Spark distribution's PySpark lives only in its ``pyspark.zip``)."""
    archives = [p for p in path if os.path.isfile(p)]
    plain = [p for p in path if p not in archives]
    spec = PathFinder.find_spec("pyspark", plain)
    if spec is None or not spec.submodule_search_locations or PathFinder.find_spec("py4j", plain) is None:
        return path
    package = os.path.realpath(list(spec.submodule_search_locations)[0]) + os.sep
    ours = {p for p in archives if os.path.realpath(p).startswith(package)}
    return [p for p in path if p not in ours]


def main() -> None:
    """Run ``pyspark.daemon`` (with its arguments) after the two changes above."""
    sys.path[:] = without_installed_archives(sys.path)
    read_archives_once()
    runpy.run_module("pyspark.daemon", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
