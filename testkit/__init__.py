"""Test and benchmark support code of the repository: not part of the installed package.

``pyproject.toml`` finds the wheel's packages under ``src/`` only, so nothing here is shipped;
the tests import it from the repository root (pytest's ``pythonpath``), and the scripts of
``bench/`` put the repository root on ``sys.path`` themselves.

* ``testkit.corpus``  the synthetic web corpus with planted quilts (and the slice-and-dice
  crawl of ``testkit.corpus.phrases``), built from the real prose of ``../shared/data``.
* ``testkit.tables``  result tables compared across runs that read the same files from other paths.
* ``testkit.warc``    WARC records built byte by byte: hostile, huge and streamed ones.
* ``testkit.memory``  the peak memory and CPU of a run's JVM and Python workers, from /proc.
* ``testkit.shared``  where ``../shared/data`` is (or ``$QUILTDETECT_SHARED_DATA``).
* ``testkit.scripts`` a script of ``bench/`` imported by its path, for the tests of that script.
"""
