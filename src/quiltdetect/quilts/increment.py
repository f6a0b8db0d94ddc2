"""Incremental quilt detection: a new crawl segment added to a finished quilt run (``--previous``).

Every quilt run keeps what an update needs beside its results: ``docs/`` (each document with its
doc_key: the rank of its doc_id in a fresh run, kept by every update) and the gram-bucket table of
the grams stage (``_quiltdetect/work/gram-buckets-k…``: every (gram, doc) pair and each
document's gram counts).
An update into a new output directory

1. reads the new inputs and drops every document whose doc_id the previous run holds (the
   old page is kept: ``already_seen`` in the ingest counts); old documents keep their keys and
   the new ones are keyed after them, in doc_id order, so stored pairs never change;
2. writes the new documents' (gram, doc) pairs as a layer beside the previous gram buckets:
   the table is bucketed (Spark's ``bucketBy``), the previous files are linked or copied as
   they are, and patch_grams merges each gram bucket's layers without a shuffle (a gram's new
   documents come after its old ones: still sorted);
3. runs the remaining stages of figure 5 on the union. With the previous run's settings
   (``RESULT_SETTINGS``), patch_grams marks the old documents the new ones touch
   (``touched_docs``), only those and the new ones get patch fractions and covers, and the
   previous run's rows of every other document are kept (``Restriction``); with other
   settings every document is recomputed. Keys no longer order like doc_ids, so the cover's
   "smallest doc_id" tie-break uses each document's rank over the union (``previous.doc_ranks``).

Its output is the fresh run's over the union of every input so far (the incremental parity
test chains updates and checks each against the reference), holds the state for the next
update, and does not need the previous output any more. The previous output is only read.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from quiltdetect.common import fs
from quiltdetect.common.arrow import ARRAY_WRITE_OPTIONS
from quiltdetect.common.config import ConfigError
from quiltdetect.common.finished import FinishedRun
from quiltdetect.common.folder import OutputFolder, read_bucketed, read_parquet
from quiltdetect.common.layout import work_table
from quiltdetect.lifecycle import JobRun
from quiltdetect.quilts.config import QuiltConfig
from quiltdetect.quilts.gram_table import (
    GRAM_BUCKETS_DDL,
    GramTable,
    gram_bucket_counts,
    gram_rows,
    merge_gram_bucket,
)

# Settings the stored gram table depends on: an update must use the previous run's values.
GRAM_STATE = ("k", "count_occurrences", "collapse_near_duplicates")
# Settings the previous results depend on besides the gram sets: an update with the same values
# recomputes only the documents the new ones touch; with others, every document.
RESULT_SETTINGS = ("m", "c", "theta", "phi", "foreign", "exclude_attributed")


def gram_table_name(cfg: QuiltConfig) -> str:
    """The grams stage's table under ``_quiltdetect/work/``: one per k and counting mode."""
    return (f"gram-buckets-k{cfg.k}" + ("-occurrences" if cfg.count_occurrences else "")
            + ("-collapsed" if cfg.collapse_near_duplicates else ""))


@dataclass(frozen=True)
class PreviousGrams:
    """The gram-bucket table of the finished quilt run an update extends."""

    path: str  # the previous output
    config: dict  # its configuration
    grams: str  # the URI of its gram-bucket table
    gram_buckets: int  # that table's bucket count, which the update keeps
    spark_buckets: int | None  # the Spark buckets it is written in (None: an older run's, not bucketed)
    layers: int  # how many layers it holds (1 for a fresh run's; an update adds one)


def previous_grams(previous: FinishedRun, cfg: QuiltConfig) -> PreviousGrams:
    """The gram table that ``previous`` (checked by the run: ``QuiltsJob.update_state``) keeps
    for an update with ``cfg``, as its grams stage's marker describes it."""
    name = gram_table_name(cfg)
    marker = previous.marker(name)
    if marker is None:
        raise ConfigError(f"--previous {previous.path} has no gram state ({work_table(name)}); "
                          "it was made by an older version: run afresh once, then update that run")
    spark_buckets = int(marker["spark_buckets"]) if marker.get("spark_buckets") else None
    return PreviousGrams(previous.path, previous.config, previous.table(name), int(marker.get("gram_buckets", 0)),
                         spark_buckets, int(marker.get("layers", 1)))


def merged_gram_table(run: JobRun, previous: PreviousGrams, new: DataFrame, key: str) -> GramTable:
    """The grams stage of an update: the previous gram buckets and the new documents' pairs.

    When the previous table is bucketed (``spark_buckets``), the new pairs are written as a layer
    in the same buckets and the table is the previous files and the layer's, linked or copied as
    they are: nothing of the archive is read, shuffled or written again here; patch_grams merges
    each gram bucket's layers (``doc_buckets(layered=True)``) without a shuffle. An older run's
    table is merged with the new pairs and written again, bucketed, once."""
    spark, cfg, out = run.spark, run.cfg, run.out
    name = gram_table_name(cfg)
    table = work_table(name)
    n = previous.gram_buckets

    def build(counts: dict) -> GramTable:
        new_rows = new.select("doc_key", "text").mapInArrow(gram_rows(cfg.k, n, cfg.count_occurrences),
                                                                 GRAM_BUCKETS_DDL)
        merge = merge_gram_bucket(n, cfg.count_occurrences)
        if previous.spark_buckets:
            layer = f"{table}-layer"
            out.write_bucketed_table(new_rows.groupBy("bucket").applyInArrow(merge, GRAM_BUCKETS_DDL), layer,
                                     "bucket", previous.spark_buckets, ARRAY_WRITE_OPTIONS)
            out.concat_tables([previous.grams, out.path(layer)], table, GRAM_BUCKETS_DDL)
            out.delete(layer)
            counts["spark_buckets"], counts["layers"] = previous.spark_buckets, previous.layers + 1
        else:
            old = spark.read.schema(GRAM_BUCKETS_DDL).parquet(previous.grams)
            merged = old.unionByName(new_rows).groupBy("bucket").applyInArrow(merge, GRAM_BUCKETS_DDL)
            spark_buckets = int(spark.conf.get("spark.sql.shuffle.partitions"))
            out.write_bucketed_table(merged, table, "bucket", spark_buckets, ARRAY_WRITE_OPTIONS)
            counts["spark_buckets"], counts["layers"] = spark_buckets, 1
        counts["gram_buckets"] = n
        grams = _gram_table(out, table, counts)
        counts["documents_with_grams"], counts["doc_grams"] = gram_bucket_counts(grams.frame, n)
        return grams

    return run.stage("grams", f"{cfg.k}-gram sets of the new documents, beside the previous", build,
                     key=key, marker=name, tables=[table], needs=["gram_buckets"],
                     reuse=lambda done: _gram_table(out, table, done))


def _gram_table(out: OutputFolder, table: str, counts: dict) -> GramTable:
    """The gram-bucket table ``table`` of ``out`` as the grams stage's ``counts`` describe it:
    read bucketed when it has several layers."""
    n, layers = int(counts["gram_buckets"]), int(counts.get("layers", 1))
    if layers > 1:
        frame = read_bucketed(out.spark, out.path(table), GRAM_BUCKETS_DDL, "bucket", int(counts["spark_buckets"]))
        return GramTable(frame, n, layered=True)
    return GramTable(out.read_table(table, GRAM_BUCKETS_DDL), n)


@dataclass(frozen=True)
class Restriction:
    """An update that recomputes only the documents the new ones may change (``touched_docs``)."""

    first_new_key: int  # the new documents' keys are this one and the ones after it (union_documents)
    previous: str  # the previous output: quilts/ and doc_stats/ of every other document

    def recomputed(self, fractions: DataFrame) -> dict[str, int]:
        """How many documents with grams the update recomputes, and how many of them are old."""
        is_new = F.col("doc_key") >= F.lit(self.first_new_key)
        row = fractions.agg(F.count(F.lit(1)), F.sum(is_new.cast("long"))).first()
        return {"recomputed_documents": int(row[0]), "recomputed_old_documents": int(row[0]) - int(row[1] or 0)}

    def with_previous(self, spark: SparkSession, quilts: DataFrame, stats: DataFrame) -> tuple[DataFrame, DataFrame]:
        """The recomputed rows of quilts/ and doc_stats/ with the previous run's rows of every
        other document (every old document the update touched has grams, so a doc_stats row)."""
        done = stats.select("doc_id")
        before = [read_parquet(spark, fs.join(self.previous, name)).join(done, on="doc_id", how="left_anti")
                  for name in ("quilts", "doc_stats")]
        return (before[0].unionByName(quilts), before[1].unionByName(stats))


def restriction(cfg: QuiltConfig, previous: PreviousGrams, n_old: int) -> Restriction | None:
    """The update's restriction to touched documents (the new ones keyed from ``n_old`` on), or
    None when a setting of RESULT_SETTINGS differs from the previous run's (then every document
    is recomputed)."""
    if any(previous.config.get(name) != getattr(cfg, name) for name in RESULT_SETTINGS):
        return None
    return Restriction(n_old, previous.path)


__all__ = ["RESULT_SETTINGS", "Restriction", "restriction", "GRAM_STATE", "PreviousGrams", "gram_table_name",
           "merged_gram_table", "previous_grams"]
