"""The scripts of ``bench/`` as modules, for the tests that test a script itself.

``bench/`` is a folder of scripts, not a package: a test imports one by its path rather than
putting ``bench/`` on ``sys.path`` (where its names, ``floor`` or ``corpus``, would shadow others).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def bench_script(name: str) -> ModuleType:
    """``bench/<name>.py`` imported by its path, once per process, as the module ``bench_<name>``."""
    module_name = f"bench_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None, name
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # before it runs: dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module
