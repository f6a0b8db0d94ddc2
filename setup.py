"""Build hook only (all metadata is in pyproject.toml): the wheel carries the repository's
``conf/*.yaml`` and ``data/sample/`` as ``quiltdetect/conf/`` and ``quiltdetect/data/sample/``.

Both folders stay at the repository root, where the README, the tests, jobs/, docker/ and
dags/ use them; package data can only name files below ``src/quiltdetect/``, so ``build_py``
copies them in here. The sdist carries them through MANIFEST.in, so sdist -> wheel builds the
same wheel. Editable installs (``pip install -e .``) copy nothing: ``bundled_sample()`` finds
the checkout's ``data/sample`` instead. tests/test_deploy_wheel.py checks the wheel's contents.
"""

from __future__ import annotations

import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

# (folder relative to the repository root, file pattern); each lands at the same path inside
# the package.
BUNDLED = (("conf", "*.yaml"), ("data/sample", "*"))


class BuildPyWithBundledData(build_py):
    """``build_py`` whose package data also lists BUNDLED, so they are copied and recorded
    with the package's own data files (and mapped by strict editable installs)."""

    def _get_data_files(self):
        files = list(super()._get_data_files())
        for folder, pattern in BUNDLED:
            names = sorted(p.name for p in Path(folder).glob(pattern) if p.is_file())
            if not names:  # a wheel without them would fail at `quiltdetect demo`, so stop here
                raise FileNotFoundError(f"setup.py: no {folder}/{pattern} under {Path.cwd()}: build the wheel "
                                        "from the repository root or its sdist (MANIFEST.in includes them)")
            target = os.path.join(self.build_lib, "quiltdetect", *folder.split("/"))
            files.append(("quiltdetect", folder, target, names))
        return files


setup(cmdclass={"build_py": BuildPyWithBundledData})
