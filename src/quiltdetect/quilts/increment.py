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
   "smallest doc_id" tie-break uses each document's rank over the union (``doc_ranks``).

Its output is the fresh run's over the union of every input so far (the incremental parity
test chains updates and checks each against the reference), holds the state for the next
update, and does not need the previous output any more. The previous output is only read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from quiltdetect.common import fs
from quiltdetect.common.caching import SPILL, keep, release
from quiltdetect.common.config import ConfigError
from quiltdetect.common.folder import OutputFolder, read_bucketed, read_parquet
from quiltdetect.common.runstate import COMPLETE, STATE_DIR
from quiltdetect.ingest.keys import doc_id_ranges, numbered_documents
from quiltdetect.ingest.read import DOC_COLUMNS, with_doc_keys
from quiltdetect.ingest.table import DEFINITIONS, DOCS_WRITE_OPTIONS, read_documents
from quiltdetect.lifecycle import JobRun
from quiltdetect.quilts.arrays import ARRAY_WRITE_OPTIONS
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
class PreviousRun:
    """A finished quilt run that an update reads: where it is and what it was made with."""

    path: str
    inputs_key: str
    run_id: str
    config: dict
    grams: str  # the URI of its gram-bucket table
    gram_buckets: int  # that table's bucket count, which the update keeps
    spark_buckets: int | None  # the Spark buckets it is written in (None: an older run's, not bucketed)
    layers: int  # how many layers it holds (1 for a fresh run's; an update adds one)
    documents: int | None  # its document count (keys 0 .. documents-1), None if not recorded


def open_previous(spark: SparkSession | None, cfg: QuiltConfig, path: str) -> PreviousRun:
    """Check that ``path`` (``--previous``, resolved) is a finished quilt run an update can
    extend, and describe it."""
    text = fs.read_text(spark, fs.join(path, COMPLETE))
    if text is None:
        raise ConfigError(f"--previous {path} is not a finished quiltdetect output (no {COMPLETE}); "
                          "give the --output of a quilt run that completed")
    done = json.loads(text)
    if done.get("job") != "quilts":
        raise ConfigError(f"--previous {path} holds a {done.get('job')} run; an update extends a quilt run")
    made_under = done.get("definitions") or {}
    if made_under != DEFINITIONS:
        changed = [k for k in DEFINITIONS if made_under.get(k) != DEFINITIONS[k]]
        raise ConfigError(
            f"--previous {path} was made under an older definition of {' and '.join(changed)} "
            f"({', '.join(f'{k} {made_under.get(k, 1)!s}' for k in changed)}; this version uses "
            f"{', '.join(DEFINITIONS[k] for k in changed)}: docs/definitions.md §0), so its stored grams do not "
            "match; run once without --previous to start afresh, then update that run")
    before = done.get("config", {})
    for name in GRAM_STATE:
        if before.get(name) != getattr(cfg, name):
            option = "-k" if name == "k" else "--" + name.replace("_", "-")
            raise ConfigError(
                f"{option} is {getattr(cfg, name)!r} but the previous run ({path}) used {before.get(name)!r}: "
                f"an update keeps the stored gram sets' settings ({', '.join(GRAM_STATE)}); "
                "give the previous run's value, or run without --previous to start afresh")
    name = gram_table_name(cfg)
    marker_text = fs.read_text(spark, fs.join(path, STATE_DIR, "stages", f"{name}.json"))
    grams = fs.join(path, STATE_DIR, "work", name)
    if marker_text is None or not fs.exists(spark, fs.join(grams, "_SUCCESS")):
        raise ConfigError(f"--previous {path} has no gram state ({STATE_DIR}/work/{name}); "
                          "it was made by an older version: run afresh once, then update that run")
    marker = json.loads(marker_text).get("counts", {})
    buckets = int(marker.get("gram_buckets", 0))
    spark_buckets = int(marker["spark_buckets"]) if marker.get("spark_buckets") else None
    documents = done.get("metrics", {}).get("stages", {}).get("ingest", {}).get("documents")
    return PreviousRun(path, str(done.get("inputs_key")), str(done.get("run_id")), before, grams, buckets,
                       spark_buckets, int(marker.get("layers", 1)), None if documents is None else int(documents))


SEGMENT = f"{STATE_DIR}/work/segment"  # the new documents of an update, keyed as in docs/
# An update's new records whose doc_id the previous run holds are left out of the texts by a
# broadcast join up to this many doc_ids (a re-crawl of part of the archive), by a shuffle above.
BROADCAST_SEEN = 1_000_000


def union_documents(run: JobRun, previous: PreviousRun) -> tuple[DataFrame, DataFrame, int]:
    """The ingest stage of an update: docs/ = the previous documents (their keys unchanged) and
    the new ones not already there, keyed after them in doc_id order. Returns docs/, the new
    documents and the number of previous documents (the first new key)."""
    spark, cfg, out = run.spark, run.cfg, run.out

    def build(counts: dict) -> tuple[DataFrame, DataFrame, int]:
        old = read_parquet(spark, fs.join(previous.path, "docs"))
        n_old = previous.documents if previous.documents is not None else int(old.count())
        read = read_documents(spark, cfg, out, files=run.files, frame=run.frame, reread=True)
        # The new records' doc_ids that the previous run holds (at most the segment's, found on
        # the doc_ids alone): the texts leave them out on their way to the one shuffle.
        seen = keep(read.candidate_ids.join(old.select("doc_id"), on="doc_id", how="left_semi").distinct(), SPILL)
        n_seen = seen.count()
        known = F.broadcast(seen) if n_seen <= BROADCAST_SEEN else seen
        unseen = read.candidate_ids.join(known, "doc_id", "left_anti")
        ranges = doc_id_ranges(unseen, read.candidates, read.candidate_bytes)
        rows = read.candidate_rows.join(known, "doc_id", "left_anti")
        new = numbered_documents(rows, ranges, [*DOC_COLUMNS, "doc_key"], first_key=n_old)
        new = out.write_table(new, SEGMENT, DOCS_WRITE_OPTIONS)
        # docs/ = the previous docs/ files and the segment's, linked or copied as they are: the
        # old texts are not read, decoded and encoded again.
        table = out.concat_tables([fs.join(previous.path, "docs"), out.path(SEGMENT)], "docs")
        n_new = ranges.documents
        n_read = n_new + n_seen
        read.release()
        release(seen)
        read.count_into(counts, n_read)
        counts["previous_run"] = previous.path
        counts["previous_documents"] = n_old
        counts["new_documents"] = n_new
        counts["already_seen"] = n_read - n_new
        counts["documents"] = n_old + n_new
        return table, new, n_old

    return run.stage("ingest", "read the new inputs, add them to the previous docs/", build,
                     key=run.state.inputs_key, tables=["docs", SEGMENT], needs=["previous_documents"],
                     reuse=lambda done: (out.read_table("docs"), out.read_table(SEGMENT),
                                         int(done["previous_documents"])))


def merged_gram_table(run: JobRun, previous: PreviousRun, new: DataFrame, key: str) -> GramTable:
    """The grams stage of an update: the previous gram buckets and the new documents' pairs.

    When the previous table is bucketed (``spark_buckets``), the new pairs are written as a layer
    in the same buckets and the table is the previous files and the layer's, linked or copied as
    they are: nothing of the archive is read, shuffled or written again here; patch_grams merges
    each gram bucket's layers (``doc_buckets(layered=True)``) without a shuffle. An older run's
    table is merged with the new pairs and written again, bucketed, once."""
    spark, cfg, out = run.spark, run.cfg, run.out
    name = gram_table_name(cfg)
    table = f"{STATE_DIR}/work/{name}"
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


def doc_ranks(docs: DataFrame) -> DataFrame:
    """(doc_key, rank): each document's rank in doc_id order over the union, for the greedy
    cover's last tie-break (an update keys new documents after the old ones, so keys no longer
    order like doc_ids). One sort of the doc_id column."""
    keyed = with_doc_keys(docs.select("doc_id", F.col("doc_key").alias("_key")))
    return keyed.select(F.col("_key").alias("doc_key"), F.col("doc_key").alias("rank"))


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


def restriction(cfg: QuiltConfig, previous: PreviousRun, n_old: int) -> Restriction | None:
    """The update's restriction to touched documents (the new ones keyed from ``n_old`` on), or
    None when a setting of RESULT_SETTINGS differs from the previous run's (then every document
    is recomputed)."""
    if any(previous.config.get(name) != getattr(cfg, name) for name in RESULT_SETTINGS):
        return None
    return Restriction(n_old, previous.path)


__all__ = ["RESULT_SETTINGS", "Restriction", "doc_ranks", "restriction", "GRAM_STATE", "PreviousRun", "gram_table_name", "merged_gram_table", "open_previous",
           "union_documents"]
