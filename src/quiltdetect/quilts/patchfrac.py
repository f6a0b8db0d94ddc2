"""The patchfrac stage (figure 5, stage 8): each document's patch fraction from the doc-bucket
table, and the patchy ones."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.common.arrow import ddl
from quiltdetect.quilts.arrays import int64s

FRACTIONS = pa.schema([("doc_key", pa.int64()), ("n_grams", pa.int64()), ("n_patch_grams", pa.int64()),
                       ("patchfrac", pa.float64())])
FRACTIONS_DDL = ddl(FRACTIONS)
FRACTION_INPUTS = ("sdoc", "n_grams", "n_patch", "recompute")  # the doc-bucket columns _fraction_rows reads


def _fraction_rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        for i in range(batch.num_rows):
            sdoc = int64s(batch.column("sdoc")[i])
            if sdoc.shape[0] == 0:
                continue
            n_grams, n_patch = int64s(batch.column("n_grams")[i]), int64s(batch.column("n_patch")[i])
            flags = batch.column("recompute")[i]
            if flags.is_valid:  # an update: only the documents it recomputes
                keep = int64s(flags).astype(bool)
                sdoc, n_grams, n_patch = sdoc[keep], n_grams[keep], n_patch[keep]
            yield pa.RecordBatch.from_arrays(
                [pa.array(sdoc), pa.array(n_grams), pa.array(n_patch), pa.array(n_patch / n_grams)], schema=FRACTIONS)


def fractions_of(doc_table: DataFrame) -> DataFrame:
    """(doc_key, n_grams, n_patch_grams, patchfrac) for every document with grams (in an
    update: every one it recomputes)."""
    # only the per-document columns go to Python: the patch pairs are most of the table's bytes
    return doc_table.select(*FRACTION_INPUTS).mapInArrow(_fraction_rows, FRACTIONS_DDL)


def patchy_docs(fractions: DataFrame, theta: float) -> DataFrame:
    """Documents whose patch fraction is at least theta and that have a patch gram."""
    return fractions.where((F.col("patchfrac") >= theta) & (F.col("n_patch_grams") > 0))

