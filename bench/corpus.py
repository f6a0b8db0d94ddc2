"""The synthetic corpus generator's command line: ``python bench/corpus.py --help``.

The generator is the package ``testkit.corpus`` (test and benchmark support code beside
``src/``, not in the wheel); this script puts the repository root on ``sys.path`` and runs
``testkit.corpus.cli.main``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from testkit.corpus.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
