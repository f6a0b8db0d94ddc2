"""The slice-and-dice test crawl's command line: ``python bench/phrases_corpus.py --help``.

The crawl is built by ``testkit.corpus.phrases`` (test and benchmark support code beside
``src/``, not in the wheel); this script puts the repository root on ``sys.path`` and runs its
``main``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from testkit.corpus.phrases import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
