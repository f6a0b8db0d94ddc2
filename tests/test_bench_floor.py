"""bench/floor.py: the floor jobs count what they say (in the tests' Spark session)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from quiltdetect.kernel.words import words
from testkit.scripts import bench_script

floor = bench_script("floor")

TEXTS = [
    "The quick brown fox jumps over the lazy dog, and the quick brown fox jumps again.",
    "A lazy dog sleeps; the quick brown fox jumps over the lazy dog once more.",
    "Nothing here is shared with the others at all, not one five word run.",
    "Short text.",
    "",
    "the quick brown fox jumps over the lazy dog " * 3,
]


def _distinct_grams(text: str, k: int) -> int:
    ws = words(text)
    return len({tuple(ws[i:i + k]) for i in range(len(ws) - k + 1)})


def test_floor_counts_every_documents_distinct_grams(spark, tmp_path: Path) -> None:
    table = tmp_path / "corpus.parquet"
    pq.write_table(pa.table({"id": [f"d{i}" for i in range(len(TEXTS))], "text": TEXTS}), table)
    k = 3
    found = floor.floor_jobs(spark, str(table), ["scan", "write", "map", "merge"], k, str(tmp_path / "docs"))
    expected = sum(_distinct_grams(t, k) for t in TEXTS)
    assert found["characters"] == sum(len(t) for t in TEXTS)
    assert found["pairs_mapped"] == found["pairs_merged"] == expected
    assert set(found["seconds"]) == {"scan", "write", "map", "merge"}
    assert pq.read_table(tmp_path / "docs").num_rows == len(TEXTS)
