"""quiltdetect: exhaustive detection of quilted web pages and content reuse on Spark.

The analyses on a DataFrame, on your SparkSession (see ``quiltdetect.api``)::

    from quiltdetect import find_quilts
    quilts = find_quilts(pages, id_col="warc_record_id", text_col="content")
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_API = ("NearDuplicates", "ReuseDetection", "detect_reuse", "find_near_duplicates", "find_quilts", "mwo_pairs",
        "popular_phrases", "run_on")
__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    """The API is imported on first use, so ``quiltdetect --help`` does not load Spark."""
    if name in _API:
        from quiltdetect import api

        return getattr(api, name)
    raise AttributeError(f"module 'quiltdetect' has no attribute {name!r}")
