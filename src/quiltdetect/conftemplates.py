"""The conf/*.yaml templates, generated from the config classes (``common.config.config_template``):

    python -m quiltdetect.conftemplates [DIR]     # writes DIR/<command>.yaml (default: conf)

Each setting is declared once, on its config field; ``tests/test_cli.py`` fails when a
committed template differs from what this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from quiltdetect.common.config import JobConfig, config_template
from quiltdetect.ingest.job import IngestConfig
from quiltdetect.mwo.config import MwoConfig
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.phrases.config import PhrasesConfig
from quiltdetect.quilts.config import QuiltConfig
from quiltdetect.reuse.config import ReuseConfig
from quiltdetect.sweep.config import SweepConfig

# command -> (its config class, the file that declares it)
TEMPLATES: dict[str, tuple[type[JobConfig], str]] = {
    "quilts": (QuiltConfig, "src/quiltdetect/quilts/config.py"),
    "ingest": (IngestConfig, "src/quiltdetect/ingest/job.py"),
    "neardup": (NearDupConfig, "src/quiltdetect/neardup/config.py"),
    "phrases": (PhrasesConfig, "src/quiltdetect/phrases/config.py"),
    "reuse": (ReuseConfig, "src/quiltdetect/reuse/config.py"),
    "mwo": (MwoConfig, "src/quiltdetect/mwo/config.py"),
    "sweep": (SweepConfig, "src/quiltdetect/sweep/config.py"),
}


def templates() -> dict[str, str]:
    """Each command's conf file name -> its text."""
    return {f"{command}.yaml": config_template(cls, command, source) for command, (cls, source) in TEMPLATES.items()}


def main(argv: list[str] | None = None) -> int:
    folder = Path((argv if argv is not None else sys.argv[1:]) [0] if (argv or sys.argv[1:]) else "conf")
    for name, text in templates().items():
        (folder / name).write_text(text, encoding="utf-8")
        print(f"wrote {folder / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
