"""Are two outputs' tables the same? ``python bench/compare_outputs.py OUT_A OUT_B quilts,doc_stats,docs [--any-order]``

Compares each table's Parquet part files: the data pages byte for byte (everything before the
footer), then the rows, schema and key-value metadata read back. The footer bytes themselves can
differ between two runs of the very same code (parquet-mr lists each column's encodings from a
hash set), so they are compared by what they describe, not byte for byte. Exit status 1 on any
difference: a refactoring that must not change results is checked with this.

``--any-order``: for tables whose row order is not part of their contract (the MWO index's
records/ and postings/), the rows are compared as sorted by their scalar columns, and the data
pages are reported but do not count.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def data_pages(path: Path) -> bytes:
    """A Parquet file without its footer (the footer length sits before the closing magic)."""
    blob = path.read_bytes()
    footer = struct.unpack("<I", blob[-8:-4])[0]
    return blob[: len(blob) - footer - 8]


def in_order(table: pa.Table) -> pa.Table:
    """The table sorted by its scalar (non-list) columns."""
    keys = [(f.name, "ascending") for f in table.schema if not pa.types.is_list(f.type)]
    return table.sort_by(keys) if keys else table


def same_table(a: Path, b: Path, any_order: bool = False) -> tuple[bool, bool, int, int]:
    """(data pages identical, rows/schema/metadata identical, part files, rows)."""
    parts_a, parts_b = sorted(a.rglob("*.parquet")), sorted(b.rglob("*.parquet"))
    pages = len(parts_a) == len(parts_b) > 0 and all(
        data_pages(x) == data_pages(y) for x, y in zip(parts_a, parts_b, strict=True))
    ta, tb = pq.read_table(a), pq.read_table(b)
    if any_order:
        ta, tb = in_order(ta), in_order(tb)
    rows = ta.equals(tb) and ta.schema.metadata == tb.schema.metadata
    return pages, rows, len(parts_a), ta.num_rows


def main(argv: list[str]) -> int:
    any_order = "--any-order" in argv
    argv = [x for x in argv if x != "--any-order"]
    if len(argv) != 3:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    a, b, tables = Path(argv[0]), Path(argv[1]), argv[2].split(",")
    ok = True
    for table in tables:
        pages, rows, parts, n = same_table(a / table, b / table, any_order)
        ok &= (pages or any_order) and rows
        print(f"{table}: {parts} part files, {n:,} rows; data pages {'identical' if pages else 'DIFFERENT'}; "
              f"rows, schema, metadata {'identical' if rows else 'DIFFERENT'}")
    print("all identical" if ok else "DIFFERENT")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
