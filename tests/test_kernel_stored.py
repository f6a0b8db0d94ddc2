"""kernel/stored.py: the Unicode tables a process builds are kept on disk and read by the next
process as they were built; a damaged or unwritable store only means building them again."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from quiltdetect.kernel import stored

TABLES = ("_category_letters", "combining_classes", "_seconds_of_pairs", "needs_composing", "needs_folding",
          "simple_folds", "joins_previous")


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv(stored.CACHE_ENV, str(tmp_path / "tables"))
    return tmp_path / "tables"


def counted(calls: list[int]):
    @stored.stored
    def table(size: int = 8) -> np.ndarray:
        calls.append(size)
        return np.arange(size, dtype=np.int32)

    return table


def test_a_table_is_built_once_and_read_back_by_the_next_process(store):
    calls: list[int] = []
    table = counted(calls)
    assert table().tolist() == list(range(8)) and calls == [8]
    assert table(8) is table() and calls == [8]  # the default and the same size given: one table
    [written] = list(store.glob("*/table-8.npy"))
    assert written.parent.name.startswith(f"unicode-{__import__('unicodedata').unidata_version}-")
    table.cache_clear()  # as a new process: read, not built
    assert table().tolist() == list(range(8)) and calls == [8]
    assert table(size=5).tolist() == list(range(5)) and calls == [8, 5]


def test_a_damaged_table_is_built_again_and_replaced(store):
    calls: list[int] = []
    table = counted(calls)
    table()
    [written] = list(store.glob("*/table-8.npy"))
    written.write_bytes(written.read_bytes()[:20])  # cut short, as by a full disk
    table.cache_clear()
    assert table().tolist() == list(range(8)) and calls == [8, 8]
    table.cache_clear()
    assert table().tolist() == list(range(8)) and calls == [8, 8]
    assert not list(store.glob("*/*.part"))


def test_an_unwritable_store_or_off_builds_in_every_process(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    for value in (str(blocked / "tables"), "off"):
        monkeypatch.setenv(stored.CACHE_ENV, value)
        calls: list[int] = []
        table = counted(calls)
        assert table().tolist() == list(range(8))
        table.cache_clear()
        assert table().tolist() == list(range(8)) and calls == [8, 8]
    assert blocked.read_text() == "not a directory"


def test_a_new_key_deletes_other_keys_tables_unused_for_a_month(store):
    old, recent = store / "unicode-0.0-old", store / "unicode-0.0-recent"
    for d in (old, recent):
        d.mkdir(parents=True)
        (d / "t.npy").write_bytes(b"x")
    month = time.time() - stored.UNUSED_SECONDS - 60
    os.utime(old, (month, month))
    counted([])()
    assert not old.exists() and recent.exists()


def test_the_unicode_tables_read_back_equal_the_tables_built(store, tmp_path):
    """Every stored table of kernel/unicode.py, at both sizes, written by one process and read
    back by another, equals the table a process without a store builds from unicodedata."""
    code = ("import sys, numpy as np\n"
            "from quiltdetect.kernel import unicode as u\n"
            "out = {}\n"
            f"for name in {TABLES!r}:\n"
            "    fn = getattr(u, name)\n"
            "    for args in ([()] if name == '_seconds_of_pairs' else [(u.BMP,), (u.FULL,)]):\n"
            "        out['-'.join([name, *map(str, args)])] = fn(*args)\n"
            "np.savez(sys.argv[1], **out)\n")
    run = [sys.executable, "-c", code]
    subprocess.run([*run, str(tmp_path / "built.npz")], env={**os.environ, stored.CACHE_ENV: "off"}, check=True)
    subprocess.run([*run, str(tmp_path / "first.npz")], env={**os.environ, stored.CACHE_ENV: str(store)}, check=True)
    files = {p.stem: p for p in store.glob("*/*.npy")}
    written = {name: p.stat().st_mtime_ns for name, p in files.items()}
    subprocess.run([*run, str(tmp_path / "read.npz")], env={**os.environ, stored.CACHE_ENV: str(store)}, check=True)
    assert {name: p.stat().st_mtime_ns for name, p in files.items()} == written  # read, not built again
    built, read = np.load(tmp_path / "built.npz"), np.load(tmp_path / "read.npz")
    assert sorted(files) == sorted(built.files) and len(files) == 2 * len(TABLES) - 1
    for name in built.files:
        assert read[name].dtype == built[name].dtype and np.array_equal(read[name], built[name]), name
        assert np.array_equal(np.load(files[name]), built[name]), name


def test_the_key_is_the_unicode_version_and_the_builders_source(tmp_path, monkeypatch):
    module = tmp_path / "quiltdetect_stored_probe.py"
    module.write_text("x = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import quiltdetect_stored_probe  # noqa: F401  (a module whose source is read)

    first = stored._source_key.__wrapped__("quiltdetect_stored_probe")
    module.write_text("x = 2\n")
    assert first != stored._source_key.__wrapped__("quiltdetect_stored_probe")
    monkeypatch.setitem(sys.modules, "zipped", type(sys)("zipped"))
    sys.modules["zipped"].__file__ = str(tmp_path / "archive.zip" / "zipped.py")
    assert stored._source_key.__wrapped__("zipped") is None  # no source to read: not kept
