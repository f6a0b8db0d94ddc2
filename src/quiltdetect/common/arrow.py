"""Arrow tables as Spark reads and writes them: one schema per table, written once in Arrow,
and the writer options of tables whose rows hold packed arrays."""

from __future__ import annotations

import pyarrow as pa

SPARK_TYPES = {pa.int8(): "byte", pa.int32(): "int", pa.int64(): "long", pa.float64(): "double",
               pa.binary(): "binary", pa.string(): "string", pa.bool_(): "boolean"}


def ddl(schema: pa.Schema) -> str:
    """The Spark DDL of an Arrow schema, so each table's columns are written once (here, in Arrow)."""
    return ", ".join(f"{f.name} {SPARK_TYPES[f.type]}" for f in schema)


# Tables of packed arrays: written in 16 MB row groups where parquet-mr allows it; parquet-mr checks
# a row group's size every 100 rows at first, which here is up to 150 MB (a 78-line warning each
# time), so it checks every 4; no dictionary (each value is unique; hashing them for one cost a
# fifth of the gram table's write time).
ARRAY_WRITE_OPTIONS = {
    "parquet.block.size": str(16 << 20),
    "parquet.block.size.row.check.min": "4",
    "parquet.page.size.row.check.min": "4",
    "parquet.enable.dictionary": "false",
}
