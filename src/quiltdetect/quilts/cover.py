"""The sources stage (figure 5, stages 9-14): the patch pairs by gram bucket, the (target, gram,
source) triples by target bucket, and each patchy document's greedy cover.

The greedy cover breaks its last tie on the smallest doc_id. A fresh run's keys are the ranks of
the doc_ids, so the cover compares keys; an update's new documents are keyed after the old ones,
so there the triples carry each source's rank (computed over the union, ``doc_ranks``) instead
of its key, the cover compares ranks, and its picks are turned back into keys by a join with the
ranks (a row per pick, not per triple).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.common.arrow import ddl
from quiltdetect.kernel.buckets import candidate_triple_rows, covers, gram_bucket, stable_argsort
from quiltdetect.quilts.arrays import blob, concat, docs_by_bucket, int64s

# The patch pairs by gram bucket: each with its document's server (null when the foreign rule is
# off: the doc table holds no servers) and whether it is a target (patchy, and in an update
# recomputed); ``rank``: the document's rank in doc_id order (an update), else null.
PATCH_PAIRS = pa.schema([("bucket", pa.int32()), ("gram", pa.binary()), ("doc", pa.binary()),
                         ("server", pa.binary()), ("is_target", pa.binary()), ("rank", pa.binary())])
# The (target, gram, source) triples by target bucket; in an update ``source`` is the source's
# rank (what the cover's tie-break compares), else its key.
TRIPLES = pa.schema([("bucket", pa.int32()), ("target", pa.binary()), ("gram", pa.binary()),
                     ("source", pa.binary())])
COVER_SCHEMA = pa.schema([("target", pa.int64()), ("rank", pa.int32()), ("source", pa.int64()),
                          ("covered", pa.int64()), ("shared", pa.int64()), ("n_pairs", pa.int64())])
PATCH_PAIRS_DDL = ddl(PATCH_PAIRS)
# the doc-bucket columns _target_pairs reads
TARGET_PAIR_INPUTS = ("gram", "doc", "sdoc", "n_grams", "n_patch", "server", "recompute", "rank")
TRIPLES_DDL = ddl(TRIPLES)
COVER_DDL = ddl(COVER_SCHEMA)


def _target_pairs(n_gram: int, theta: float):
    """Doc-bucket rows -> the patch pairs, marked with the doc's server and patchiness, by gram bucket."""

    def target_pairs(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for i in range(batch.num_rows):
                grams, docs = int64s(batch.column("gram")[i]), int64s(batch.column("doc")[i])
                if grams.shape[0] == 0:
                    continue
                sdoc = int64s(batch.column("sdoc")[i])
                n_grams, n_patch = int64s(batch.column("n_grams")[i]), int64s(batch.column("n_patch")[i])
                server = batch.column("server")[i]
                patchy = (n_patch / n_grams >= theta) & (n_patch > 0)
                flags = batch.column("recompute")[i]
                if flags.is_valid:  # an update: only the documents it recomputes are targets
                    patchy &= int64s(flags).astype(bool)
                at = np.searchsorted(sdoc, docs)
                is_target = patchy[at].astype(np.int64)
                servers = int64s(server)[at] if server.is_valid else None
                rank = batch.column("rank")[i]
                ranks = int64s(rank)[at] if rank.is_valid else None
                buckets = gram_bucket(grams, n_gram)  # grams are sorted: buckets ascending
                bounds = np.flatnonzero(np.concatenate(([True], buckets[1:] != buckets[:-1], [True])))
                rows = list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
                yield pa.RecordBatch.from_arrays(
                    [pa.array([int(buckets[s]) for s, _ in rows], pa.int32()),
                     pa.array([blob(grams[s:e]) for s, e in rows], pa.binary()),
                     pa.array([blob(docs[s:e]) for s, e in rows], pa.binary()),
                     pa.array([None if servers is None else blob(servers[s:e]) for s, e in rows], pa.binary()),
                     pa.array([blob(is_target[s:e]) for s, e in rows], pa.binary()),
                     pa.array([None if ranks is None else blob(ranks[s:e]) for s, e in rows], pa.binary())],
                    schema=PATCH_PAIRS)

    return target_pairs


def _triples_of_bucket(n_targets: int):
    """All pairs of one gram bucket -> (target, gram, source) triples, by target bucket; a source
    on its target's server is left out when the pairs carry servers (the foreign rule on)."""

    def triples(table: pa.Table) -> pa.Table:
        grams, docs, is_target = (concat(table.column(c)) for c in ("gram", "doc", "is_target"))
        foreign = table.num_rows > 0 and table.column("server")[0].is_valid
        servers = concat(table.column("server")) if foreign else np.zeros(grams.shape[0], dtype=np.int64)
        ranked = table.num_rows > 0 and table.column("rank")[0].is_valid
        ids = concat(table.column("rank")) if ranked else docs  # what the cover orders sources by
        # Runs of equal grams are all the triples need: the cover of a target does not depend on
        # the order of its triples, so the pairs are not sorted by document within a gram.
        order = stable_argsort(grams)
        grams, ids, servers, is_target, docs = (a[order] for a in (grams, ids, servers, is_target, docs))
        t_at, s_at = candidate_triple_rows(grams, ids, servers, is_target.astype(bool), foreign=foreign)
        # targets by key; sources by what the cover orders them by (ranks in an update)
        target, gram, source = docs[t_at], grams[t_at], ids[s_at]
        parts = docs_by_bucket(target, n_targets)
        return pa.Table.from_arrays(
            [pa.array([b for b, _ in parts], pa.int32()), pa.array([blob(target[r]) for _, r in parts], pa.binary()),
             pa.array([blob(gram[r]) for _, r in parts], pa.binary()),
             pa.array([blob(source[r]) for _, r in parts], pa.binary())],
            schema=TRIPLES)

    return triples


def _cover_bucket(table: pa.Table) -> pa.Table:
    picks = covers(concat(table.column("target")), concat(table.column("gram")), concat(table.column("source")))
    arrays = [pa.array(picks[f.name].astype(np.int32 if f.name == "rank" else np.int64)) for f in COVER_SCHEMA]
    return pa.Table.from_arrays(arrays, schema=COVER_SCHEMA)


def cover_sources(doc_table: DataFrame, theta: float, n_gram: int, n_targets: int, *,
                  ranks: DataFrame | None = None) -> DataFrame:
    """Greedy covers of every patchy document: (target, rank, source, covered, shared, n_pairs).

    Sources on their target's server are left out when the doc table holds servers: the foreign
    rule the table was made under (``patch_grams.doc_buckets``) is the only one they can follow.

    ``ranks`` (an update, ``doc_ranks``: the doc table's ``rank`` column holds them too): the
    covers order sources by rank and are given back with the sources' keys."""
    # without the columns _target_pairs does not read (``count`` is as large as ``doc``)
    pairs = doc_table.select(*TARGET_PAIR_INPUTS).mapInArrow(_target_pairs(n_gram, theta), PATCH_PAIRS_DDL)
    triples = pairs.groupBy("bucket").applyInArrow(_triples_of_bucket(n_targets), TRIPLES_DDL)
    picked = triples.groupBy("bucket").applyInArrow(_cover_bucket, COVER_DDL)
    return picked if ranks is None else sources_by_key(picked, ranks)


def sources_by_key(picked: DataFrame, ranks: DataFrame) -> DataFrame:
    """Covers whose sources are ranks (an update's) with each source's key instead: a join of
    the picks, not of the triples, which then need not carry the keys."""
    keys = ranks.select(F.col("rank").cast("long").alias("source"), F.col("doc_key").cast("long").alias("key"))
    return picked.join(keys, on="source").select("target", "rank", F.col("key").alias("source"), "covered", "shared",
                                                 "n_pairs")
