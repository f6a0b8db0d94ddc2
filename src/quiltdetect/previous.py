"""What every update (``--previous``) shares: the finished run it extends, and the union of its
documents with the new ones.

An update reads a finished run (``run.previous``, a ``common.finished.FinishedRun`` that the run
checked when it started: complete, of the same job, under the same definitions of documents and
words, with the settings its state depends on), writes ``docs/`` as the previous documents with their
keys unchanged plus the new ones keyed after them in doc_id order (``union_documents``: the
previous files are linked or copied, never rewritten), and, where an analysis needs the
fresh run's order, ranks every document by doc_id over the union (``doc_ranks``). The
previous output is only read.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.common.caching import SPILL, keep, release
from quiltdetect.common.folder import read_parquet
from quiltdetect.common.layout import work_table
from quiltdetect.documents.keys import doc_id_ranges, numbered_documents
from quiltdetect.documents.read import DOC_COLUMNS, with_doc_keys
from quiltdetect.documents.table import DOCS_WRITE_OPTIONS, lenient, read_documents
from quiltdetect.lifecycle import JobRun

SEGMENT = work_table("segment")  # the new documents of an update, keyed as in docs/
# An update's new records whose doc_id the previous run holds are left out of the texts by a
# broadcast join up to this many doc_ids (a re-crawl of part of the archive), by a shuffle above.
BROADCAST_SEEN = 1_000_000
# The previous documents' doc_ids are matched against the new records' by a broadcast of the new
# ones up to this many records (a segment: the archive's doc_ids are read once, not shuffled), by
# a shuffle of both above.
BROADCAST_NEW = 2_000_000


def union_documents(run: JobRun) -> tuple[DataFrame, DataFrame, int]:
    """The ingest stage of an update: docs/ = the previous run's documents (their keys
    unchanged) and the new ones not already there, keyed after them in doc_id order. Returns
    docs/, the new documents and the number of previous documents (the first new key)."""
    spark, cfg, out, finished = run.spark, run.cfg, run.out, run.previous
    assert finished is not None, "an update's run has its previous run"
    previous = finished.path

    def build(counts: dict) -> tuple[DataFrame, DataFrame, int]:
        old = read_parquet(spark, finished.result("docs"))
        n_old = finished.documents if finished.documents is not None else int(old.count())
        read = read_documents(spark, cfg, out, files=run.files, frame=run.frame, reread=True)
        # The new records' doc_ids that the previous run holds (at most the segment's, found on
        # the doc_ids alone; the previous ones read once against a broadcast of the new ones, not
        # shuffled): the texts leave them out on their way to the one shuffle.
        if read.candidates <= BROADCAST_NEW:
            ids = F.broadcast(read.candidate_ids.select("doc_id"))
            seen = old.select("doc_id").join(ids, on="doc_id", how="left_semi")
        else:
            seen = read.candidate_ids.join(old.select("doc_id"), on="doc_id", how="left_semi").distinct()
        seen = keep(seen, SPILL)
        n_seen = seen.count()
        known = F.broadcast(seen) if n_seen <= BROADCAST_SEEN else seen
        unseen = read.candidate_ids.join(known, "doc_id", "left_anti")
        ranges = doc_id_ranges(unseen, read.candidates, read.candidate_bytes)
        rows = read.candidate_rows.join(known, "doc_id", "left_anti")
        new = numbered_documents(rows, ranges, [*DOC_COLUMNS, "doc_key"], first_key=n_old)
        new, written = out.write_counted(new, SEGMENT, {"lenient": lenient()}, DOCS_WRITE_OPTIONS)
        # docs/ = the previous docs/ files and the segment's, linked or copied as they are: the
        # old texts are not read, decoded and encoded again.
        table = out.concat_tables([finished.result("docs"), out.path(SEGMENT)], "docs")
        n_new = ranges.documents
        n_read = n_new + n_seen
        read.release()
        release(seen)
        read.count_into(counts, n_read, int(written["lenient"] or 0))
        counts["previous_run"] = previous
        counts["previous_documents"] = n_old
        counts["new_documents"] = n_new
        counts["already_seen"] = n_read - n_new
        counts["documents"] = n_old + n_new
        return table, new, n_old

    return run.stage("ingest", "read the new inputs, add them to the previous docs/", build,
                     key=run.state.inputs_key, tables=["docs", SEGMENT], needs=["previous_documents"],
                     reuse=lambda done: (out.read_table("docs"), out.read_table(SEGMENT),
                                         int(done["previous_documents"])))


# A few pages' doc_ids (those an update compares) are ranked in one task up to this many rows,
# by Spark's sort above (``doc_ranks``).
ONE_TASK_RANKS = 4_000_000


def ranks_of(picked: DataFrame, n: int) -> DataFrame:
    """(doc_key, rank) of the rows of ``picked`` (doc_key, doc_id; at most ``n``): their order by
    doc_id, 0..len-1, as ``doc_ranks`` gives it. Up to ``ONE_TASK_RANKS`` rows in one task, where
    Arrow sorts the doc_ids by their UTF-8 bytes as Spark does, without the sort's sampling job,
    its shuffle and the jobs that number its partitions."""
    if n > ONE_TASK_RANKS:
        return doc_ranks(picked)

    def rank(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        got = list(batches)
        if not got:
            return
        table = pa.Table.from_batches(got)
        order = pc.sort_indices(table.column("doc_id")).to_numpy()
        ranks = np.empty(order.shape[0], dtype=np.int64)
        ranks[order] = np.arange(order.shape[0], dtype=np.int64)
        yield pa.RecordBatch.from_arrays([pa.array(table.column("doc_key").to_numpy()), pa.array(ranks)],
                                         names=["doc_key", "rank"])

    return picked.select("doc_key", "doc_id").repartition(1).mapInArrow(rank, "doc_key long, rank long")


def doc_ranks(docs: DataFrame) -> DataFrame:
    """(doc_key, rank): each document's rank in doc_id order over the union, for the greedy
    cover's last tie-break (an update keys new documents after the old ones, so keys no longer
    order like doc_ids). One sort of the doc_id column."""
    keyed = with_doc_keys(docs.select("doc_id", F.col("doc_key").alias("_key")))
    return keyed.select(F.col("_key").alias("doc_key"), F.col("doc_key").alias("rank"))
