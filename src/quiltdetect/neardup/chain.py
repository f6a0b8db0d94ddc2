"""One near-duplicate pipeline: every run is a step of a chain of runs (definitions §2).

A fresh run is the first step of its chain: every page is new and nothing came before it. An
update (``--previous``) is a later step: a new segment added to a finished neardup run. Both go
through the same stages, here, each written once: ``fingerprints_stage``, ``pairs_stage``,
``clusters_stage`` and ``kept_stage``; where a stage of an update has more to do than a fresh
run's (the previous pairs a new page withdraws, the previous clusters, the pages fixed before),
the fresh run is the update of an empty chain (``Chain.fresh``: no previous state).

Every neardup run keeps what the next step needs beside its results (``_quiltdetect/work/``):
every page's fingerprints (``neardup-fingerprints-2``: the shingle set, packed, and band keys for lsh; the
supershingles, simhash and its pieces for Henzinger's algorithms), every page's bucket rows
(``neardup-buckets-<family>-2``: (value, idx, doc_key) per band key, supershingle or simhash
piece, split into parts by value and packed, a Spark bucketed table of one part per Spark
bucket: ``pairs.BUCKET_ROWS``), the buckets over ``bucket_cap`` with their
root (``neardup-capped``), its pairs, clusters and dropped pages on doc_keys (``neardup-pairs``,
``-clusters``, ``-dropped``: read without joining doc_ids), and which run each range of doc_keys
came in with the tables' Spark bucket count (``neardup-state.json``). An update, into a new
output directory,

1. writes ``docs/`` as the previous documents and the new ones not already there, keyed after
   them (``previous.union_documents``);
2. fingerprints only the new pages, and writes them and their bucket rows as layers beside the
   stored tables (whose files are linked or copied, not read);
3. finds the buckets the new pages fall in and only their stored rows (each part's stored and
   new rows together in numpy, Spark bucket by Spark bucket: every stored row is read once and
   none is shuffled), ranks the pages it compares by doc_id (``compared_ranks``: the order a
   fresh run's doc_keys have, which decides a bucket's root and a cluster's id), and from the
   touched buckets finds every candidate pair with a new page, by the bucket rule
   (``pairs.bucket_pairs``: all pairs of a bucket of at most ``bucket_cap`` pages; star edges
   from its smallest page above). Pairs of two old pages can only disappear: a bucket that new
   pages take past the cap, or whose root a new page becomes, gives fewer of them. Those old
   pairs are checked again against every bucket they share (the stored capped buckets say how
   an untouched bucket treated them) and withdrawn when none gives them any more;
4. verifies the new candidates exactly (``pairs.decided_pairs``), and joins the previous pairs
   (less the withdrawn) to make ``pairs/``; the clusters are the connected components of the
   previous clusters (as stars) and the new pairs, or of the previous pairs where one was
   withdrawn;
5. decides only the new pages by the keep rule (``neardup/keep.py``): every page kept before
   stays kept, every page dropped before stays dropped, and ``kept/`` and ``duplicate_of/``
   are the previous files with the new pages' rows beside them.

``pairs/`` and ``clusters/`` equal a fresh run's over the union, for every algorithm (each finds
candidates in buckets and verifies them on per-page fingerprints); ``kept/`` and
``duplicate_of/`` do too when the segments come in crawl order (``tests/test_neardup_update.py``).
The settings that decide the stored fingerprints and pairs must be the previous run's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial, reduce

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from quiltdetect.common import fs
from quiltdetect.common.arrow import ARRAY_WRITE_OPTIONS
from quiltdetect.common.caching import SPILL, cut, keep, release
from quiltdetect.common.finished import FinishedRun
from quiltdetect.common.folder import bucket_files, read_bucketed, read_parquet
from quiltdetect.common.layout import work_table
from quiltdetect.common.shuffle import ADVISORY_SIZE, size_in_bytes
from quiltdetect.documents.keys import in_key_ranges
from quiltdetect.documents.table import DOCS_WRITE_OPTIONS
from quiltdetect.kernel.components import updated_components
from quiltdetect.lifecycle import JobRun
from quiltdetect.neardup import clusters as clusters_module
from quiltdetect.neardup.clusters import connected_components
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.neardup.decisions import crawl_order, dropped_pages, duplicate_of_table, kept_table
from quiltdetect.neardup.keep import DECIDE, DROPPED, KEPT
from quiltdetect.neardup.pairs import (
    BUCKET_ROWS_DDL,
    CAPPED_SCHEMA,
    FAMILIES,
    bucket_members,
    bucket_pairs,
    candidate_pages,
    count_buckets,
    decided_pairs,
    fingerprints,
    in_order,
    packed_bucket_rows,
    pair_columns,
    parts_in_tasks,
    rows_of,
    shared_bucket_rows,
    shared_bucket_rows_of_files,
    small,
    touched_bucket_rows,
    with_keys,
)
from quiltdetect.previous import ranks_of, union_documents

# The state a run keeps for the next (``runstate.work_table`` names; ``FinishedRun.table`` reads them)
# "-2": lsh's shingle set is packed bytes (``pairs.LSH_SCHEMA``), was array<long>; a run made
# before holds "neardup-fingerprints" only, and an update of it is refused (``Job.open_previous``:
# run afresh once)
FINGERPRINTS = "neardup-fingerprints-2"
CAPPED = "neardup-capped"
# One table per bucket family: BUCKETS-<family>-2 ("-2": packed by part, ``pairs.BUCKET_ROWS``;
# a run made before holds one row per entry in BUCKETS-<family>, and an update of it is refused)
BUCKETS = "neardup-buckets"
STATE = "neardup-state.json"  # {"runs": [[first doc_key, run_id], ...], "spark_buckets": n}
# pairs/, clusters/ and the dropped pages on doc_keys: an update reads them without the doc_ids
PAIRS = "neardup-pairs"  # (a, b, pair_columns…)
CLUSTERS = "neardup-clusters"  # (doc_key, cluster_key)
DROPPED_PAGES = "neardup-dropped"  # (doc_key)
# Settings the stored fingerprints and pairs depend on: an update must use the previous run's.
STORED_SETTINGS = ("algorithm", "k", "wrap", "resemblance_threshold", "containment_threshold", "lsh_bands",
                   "lsh_rows", "b_threshold", "c_threshold", "combined_c_threshold", "bucket_cap")


@dataclass(frozen=True)
class PreviousNearDup:
    """A finished neardup run that an update extends (checked by the run: ``NearDupJob``)."""

    finished: FinishedRun
    runs: list[list]  # [first doc_key, run_id] of every run of its chain, in order
    spark_buckets: int  # the Spark buckets its bucket rows are hashed into
    kept: int  # its kept/ rows
    dropped: int  # its duplicate_of/ rows

    @property
    def documents(self) -> int | None:
        return self.finished.documents


def kept_state(algorithm: str) -> tuple[str, ...]:
    """The state a neardup run keeps for its updates (``work_table`` names)."""
    return (STATE, FINGERPRINTS, PAIRS, CLUSTERS, DROPPED_PAGES, CAPPED,
            *(bucket_table(family) for family, _ in FAMILIES[algorithm]))


def previous_near_dup(finished: FinishedRun) -> PreviousNearDup:
    """What an update reads of the finished neardup run it extends."""
    described = json.loads(finished.text(STATE) or "{}")
    kept = finished.counts("kept")
    return PreviousNearDup(finished, described["runs"], int(described["spark_buckets"]),
                           int(kept.get("documents_kept", 0)), int(kept.get("documents_dropped", 0)))


def bucket_table(family: str) -> str:
    """The state table of a bucket family's rows (``pairs.BUCKET_ROWS``)."""
    return f"{BUCKETS}-{family}-2"


def write_state(run: JobRun, runs: list[list], spark_buckets: int) -> None:
    """``STATE``: the runs of the chain and the bucket tables' Spark bucket count."""
    run.out.write_text(work_table(STATE), json.dumps({"runs": runs, "spark_buckets": spark_buckets}))


def read_bucket_rows(run: JobRun, family: str, spark_buckets: int) -> DataFrame:
    """The run's packed bucket rows of ``family``, read hashed on the part (grouping a part's
    rows shuffles none)."""
    return read_bucketed(run.spark, run.out.path(work_table(bucket_table(family))), BUCKET_ROWS_DDL, "part",
                         spark_buckets)


def kept_run(keeper: Column, runs: list[list]) -> Column:
    """The run_id of the run that added the page with doc_key ``keeper`` (the run it was kept in)."""
    chosen = F.lit(str(runs[0][1]))
    for first, run_id in runs[1:]:
        chosen = F.when(keeper >= F.lit(int(first)), F.lit(str(run_id))).otherwise(chosen)
    return chosen


@dataclass(frozen=True)
class Chain:
    """The run's step of its chain: the documents it holds, the pages it decides, and what came
    before (nothing, in a fresh run)."""

    docs: DataFrame  # docs/: every document of the chain so far
    new: DataFrame  # the pages this run decides: all of docs/ in a fresh run, an update's new ones
    previous: PreviousNearDup | None  # the finished run it extends; None in a fresh run
    # (doc_key, rank): doc_id order among the pages an update compares (``compared_ranks``),
    # persisted; None in a fresh run (the doc_keys are it) and in an update before its pairs stage
    ranks: DataFrame | None
    n_old: int  # the first new doc_key (0 in a fresh run)
    spark_buckets: int  # the Spark buckets the bucket rows are hashed into
    runs: list[list]  # [first doc_key, run_id] of every run of the chain, this one last

    @property
    def fresh(self) -> bool:
        """The first step: every page is new, no previous state."""
        return self.previous is None

    def is_new(self, key: str = "doc_key") -> Column:
        return F.col(key) >= F.lit(self.n_old)

    def release(self) -> None:
        """Let go of what the chain persisted (an update's ranks)."""
        if self.ranks is not None:
            release(self.ranks)

    def with_ranks(self, frame: DataFrame, key: str, rank: str) -> DataFrame:
        """``frame`` with the doc_id rank of its column ``key`` as ``rank``."""
        if self.ranks is None:
            assert self.fresh, "an update's pages are ranked in its pairs stage"
            return frame.withColumn(rank, F.col(key))
        return frame.join(self.ranks.select(F.col("doc_key").alias(key), F.col("rank").alias(rank)), on=key)


def start_chain(run: JobRun) -> Chain:
    """The ingest stage of either step: a fresh run's docs/ (every page new), or an update's
    union with the previous documents (``previous.union_documents``), its pages not yet ranked."""
    if run.previous is None:
        docs = run.docs()
        return Chain(docs, docs, None, None, 0, int(run.spark.conf.get("spark.sql.shuffle.partitions")),
                     [[0, run.state.run_id]])
    previous = previous_near_dup(run.previous)
    docs, new, n_old = union_documents(run)
    return Chain(docs, new, previous, None, n_old, previous.spark_buckets,
                 [*previous.runs, [n_old, run.state.run_id]])


def step_table(chain: Chain, name: str) -> str:
    """Where this step writes its rows of the state table ``name``: the table itself in a fresh
    run, a layer beside it in an update (``beside_previous`` then joins the previous run's)."""
    return work_table(name if chain.fresh else f"{name}-layer")


def beside_previous(run: JobRun, chain: Chain, name: str, schema: str | None = None) -> DataFrame | None:
    """An update's state table ``name``: the previous run's files (linked or copied, not read)
    and this step's layer (``step_table``), made one table and read back; None in a fresh run,
    whose table is its step's."""
    if chain.previous is None:
        return None
    layer = step_table(chain, name)
    table = run.out.concat_tables([chain.previous.finished.table(name), run.out.path(layer)], work_table(name),
                                  schema)
    run.out.delete(layer)
    return table


def fingerprints_stage(run: JobRun, chain: Chain, cfg: NearDupConfig) -> tuple[DataFrame, dict[str, DataFrame]]:
    """The pages' fingerprints (``pairs.fingerprints``) and, per bucket family, their bucket rows
    packed by part, both kept as state: a fresh run's of every page; an update's of the new
    pages, beside the previous run's (the rows in the same Spark buckets). Returns the chain's
    fingerprints and bucket rows per family: a fresh run's as written, each part's rows in one
    task (``pairs.parts_in_tasks``), persisted (the pairs stage releases them); an update's read
    bucketed on the part."""
    out, buckets = run.out, chain.spark_buckets
    if chain.fresh:
        what = (f"terms, {cfg.k}-shingles, {cfg.lsh_bands} bands of {cfg.lsh_rows} min-hashes"
                if cfg.algorithm == "lsh" else f"terms, {cfg.k}-shingles, supershingles, simhash")
    else:
        what = "the new pages' fingerprints, beside the previous"
    with run.metrics.stage(run.spark, "fingerprints", what) as counts:
        entries = {column: F.sum(F.when(F.col(column).isNotNull(), F.size(column)).otherwise(0))
                   for _, column in FAMILIES[cfg.algorithm]}  # each family's bucket rows
        added, row = out.write_counted(fingerprints(chain.new, cfg), step_table(chain, FINGERPRINTS), {
            "documents": F.count(F.lit(1)), "without_terms": F.sum((F.col("n_terms") == 0).cast("long")),
            "terms": F.sum("n_terms"), **entries})
        counts["documents" if chain.fresh else "new_documents"] = int(row["documents"])
        counts["without_terms"] = int(row["without_terms"] or 0)
        counts["terms"] = int(row["terms"] or 0)
        rows = {}
        for family, column in FAMILIES[cfg.algorithm]:
            packed = parts_in_tasks(packed_bucket_rows(added, column, buckets), int(row[column] or 0))
            if chain.fresh:  # kept for the pairs stage as it is written, with its partitioning (a
                # checkpoint forgets it: the pairs stage would shuffle the parts again)
                rows[family] = packed = keep(packed, SPILL)
            out.write_bucketed_table(packed, step_table(chain, bucket_table(family)), "part", buckets,
                                     ARRAY_WRITE_OPTIONS)
            if not chain.fresh:
                beside_previous(run, chain, bucket_table(family), BUCKET_ROWS_DDL)
                rows[family] = read_bucket_rows(run, family, buckets)
        table = beside_previous(run, chain, FINGERPRINTS)
    return (added if table is None else table), rows


# An update's stored bucket rows, as local files, are read by pyarrow in the Python workers
# (``pairs.shared_bucket_rows_of_files``); False: by Spark, as other file systems' are.
PARTS_READ_BY_PYARROW = True


def shared_rows(run: JobRun, rows: DataFrame, family: str, union: Chain) -> DataFrame:
    """The rows of the buckets of two or more pages that hold a new page, old pages' too
    (``pairs.MEMBERS``), persisted (the caller releases them). ``rows``: the family's packed
    bucket rows of the union, hashed on the part: each part's stored and new rows meet in numpy
    (``pairs.shared_bucket_rows``), without a shuffle; a local table's files are read a part
    at a time by pyarrow instead (``PARTS_READ_BY_PYARROW``)."""
    where = run.out.path(work_table(bucket_table(family)))
    if PARTS_READ_BY_PYARROW and fs.is_local(where):
        return cut(shared_bucket_rows_of_files(run.spark, bucket_files(fs.local_path(where)), union.n_old), SPILL)
    return cut(shared_bucket_rows(rows, union.n_old), SPILL)


def compared_ranks(docs: DataFrame, keys: list[DataFrame]) -> DataFrame:
    """(doc_key, rank) of the pages of ``keys`` (doc_key): their order by doc_id, persisted. An
    update compares doc_ids only among the pages of its touched buckets, of the previous pairs
    and clusters and the roots of the previous capped buckets (every page of a new pair or
    cluster is one of them), so ranks among these order every comparison as ranks over the union
    would: only their doc_ids are sorted, not the whole archive's, and in one task where they
    are few (``previous.ranks_of``)."""
    picked, n = with_keys(docs.select("doc_key", "doc_id"), reduce(DataFrame.unionByName, keys))
    return cut(ranks_of(picked, n), SPILL)


def touched_buckets(shared: DataFrame, union: Chain) -> DataFrame:
    """Every row of the buckets of two or more pages that hold a new page (``shared_rows``), with
    the bucket's size and root over the union and over the old pages alone: (doc_key, rank,
    is_new, idx, value, size, old_size, root, root_key, old_root); persisted (the caller
    releases it): ranked by doc_id and rooted (``pairs.touched_bucket_rows``)."""
    return cut(touched_bucket_rows(shared, union.ranks, union.n_old), SPILL)


def affected_rows(members: DataFrame, cap: int) -> DataFrame:
    """The old pages' rows of the buckets that now give old pairs they gave before no more: past
    the cap with new pages (before: 2..cap pages), or past it before with a new page as root."""
    root_is_new = F.col("old_root").isNull() | (F.col("old_root") != F.col("root"))
    affected = (F.col("size") > cap) & (F.col("old_size").between(2, cap) | ((F.col("old_size") > cap) & root_is_new))
    return members.where(affected & ~F.col("is_new")).select("idx", "value", "doc_key", "rank")


def withdrawn_pairs(fps: DataFrame, column: str, family: str, affected: DataFrame, old_pairs: DataFrame,
                    members: DataFrame, previous_capped: DataFrame, union: Chain, cap: int) -> DataFrame:
    """(a, b) of the previous pairs that no bucket of ``family`` gives any more: of the old pairs
    inside an affected bucket, those whose every shared bucket is now capped with another root
    (touched buckets: their union size and root; untouched ones: as the previous run had them)."""
    inside = (affected.alias("x").join(affected.alias("y"), on=["value", "idx"])
              .where(F.col("x.rank") < F.col("y.rank"))
              .select(F.col("x.doc_key").alias("a"), F.col("y.doc_key").alias("b")).distinct())
    suspects = cut(old_pairs.select("a", "b", "a_rank", "b_rank").join(inside, on=["a", "b"], how="left_semi"),
                   SPILL)
    ends = suspects.select(F.col("a").alias("doc_key")).unionByName(suspects.select(F.col("b").alias("doc_key")))
    arrays, _ = rows_of(fps.select("doc_key", column), ends)
    shared = (suspects.join(arrays.select(F.col("doc_key").alias("a"), F.col(column).alias("xs")), on="a")
              .join(arrays.select(F.col("doc_key").alias("b"), F.col(column).alias("ys")), on="b")
              .select("a", "b", "a_rank", "b_rank",
                      F.posexplode(F.arrays_zip("xs", "ys")).alias("idx", "pair"))
              .where(F.col("pair.xs") == F.col("pair.ys"))
              .select("a", "b", "a_rank", "b_rank", F.col("idx").cast("int").alias("idx"),
                      F.col("pair.xs").alias("value")))
    now = members.select("idx", "value", F.col("size").alias("now_size"), F.col("root").alias("now_root")).distinct()
    before = (previous_capped.where(F.col("family") == family)
              .join(union.ranks.withColumnRenamed("doc_key", "root"), on="root")
              .select("idx", "value", F.col("rank").alias("before_root")))
    ends = F.col("a_rank"), F.col("b_rank")
    gives = (F.when(F.col("now_size").isNotNull(), (F.col("now_size") <= cap) | F.col("now_root").isin(*ends))
             .when(F.col("before_root").isNotNull(), F.col("before_root").isin(*ends))
             .otherwise(F.lit(True)))
    support = (shared.join(now, on=["idx", "value"], how="left").join(before, on=["idx", "value"], how="left")
               .groupBy("a", "b").agg(F.max(gives.cast("int")).alias("given")))
    return support.where(F.col("given") == 0).select("a", "b")


def capped_after(members: DataFrame, previous_capped: DataFrame | None, family: str, cap: int,
                 order: str = "rank") -> DataFrame:
    """The family's buckets over the cap in the chain (``CAPPED_SCHEMA``): the touched ones now
    over it (``members`` holds every touched bucket of two or more pages, so every one that was
    over the cap; a fresh run touches every bucket), and the previous ones no new page touched."""
    now = (members.where((F.col("size") > cap) & (F.col(order) == F.col("root")))
           .select(F.lit(family).alias("family"), "idx", "value", "size", F.col("doc_key").alias("root")))
    if previous_capped is None:
        return now
    touched = members.select("idx", "value").distinct()
    kept = previous_capped.where(F.col("family") == family).join(touched, on=["idx", "value"], how="left_anti")
    return kept.select(*[c.split()[0] for c in CAPPED_SCHEMA.split(", ")]).unionByName(now)


def previous_pairs(stored: DataFrame, union: Chain, algorithm: str) -> DataFrame:
    """The previous run's pairs (``stored``) on the union's keys (an old page keeps its key): (a,
    b, a_rank, b_rank, pair_columns…)."""
    return (stored
            .join(union.ranks.select(F.col("doc_key").alias("a"), F.col("rank").alias("a_rank")), on="a")
            .join(union.ranks.select(F.col("doc_key").alias("b"), F.col("rank").alias("b_rank")), on="b")
            .select("a", "b", "a_rank", "b_rank", *pair_columns(algorithm)))


def family_pairs(old_pairs: DataFrame, family: str, algorithm: str) -> DataFrame:
    """The previous pairs a family's buckets gave: for combined-sites, the B part is the pairs on
    one site and the C part the others; every other algorithm has one family."""
    if algorithm != "combined-sites":
        return old_pairs
    return old_pairs.where(F.col("same_site") if family == "b" else ~F.col("same_site"))


def pairs_stage(run: JobRun, fps: DataFrame, rows: dict[str, DataFrame], chain: Chain,
                cfg: NearDupConfig) -> tuple[DataFrame, DataFrame, Chain]:
    """The pairs of the chain on doc_keys (a the smaller doc_id, then ``pair_columns``; with
    a_rank, b_rank after an update), the previous pairs withdrawn (a, b), both persisted, and the
    chain with its pages' ranks (an update's: ``compared_ranks``).

    For each bucket family: the buckets this step decides (every bucket of two or more pages in
    a fresh run, ``pairs.bucket_members``; those that hold a new page in an update,
    ``touched_buckets``), their candidates by the bucket rule (``pairs.bucket_pairs``), and the
    buckets over the cap, kept as state. The candidates are verified exactly
    (``pairs.decided_pairs``) and join the previous pairs less those no bucket gives any more.
    ``rows``: each family's bucket rows (``fingerprints_stage``)."""
    spark, cap, previous = run.spark, cfg.bucket_cap, chain.previous
    what = "candidates from buckets" if chain.fresh else "candidates with a new page"
    with run.metrics.stage(spark, "pairs", f"{cfg.algorithm}: {what}, verified exactly") as counts:
        old_pairs = previous_capped = None
        shared: dict[str, DataFrame] = {}
        if previous is not None:
            stored = read_parquet(spark, previous.finished.table(PAIRS))
            previous_capped = read_parquet(spark, previous.finished.table(CAPPED))
            shared = {family: shared_rows(run, rows[family], family, chain) for family, _ in FAMILIES[cfg.algorithm]}
            compared = [*(frame.select("doc_key") for frame in shared.values()),
                        stored.select(F.col("a").alias("doc_key")), stored.select(F.col("b").alias("doc_key")),
                        previous_capped.select(F.col("root").alias("doc_key")),
                        read_parquet(spark, previous.finished.table(CLUSTERS)).select("doc_key")]
            chain = replace(chain, ranks=compared_ranks(chain.docs, compared))
            old_pairs = cut(previous_pairs(stored, chain, cfg.algorithm), SPILL)
        candidates, withdrawn, capped, held = {}, [], [], []
        for family, column in FAMILIES[cfg.algorithm]:
            if previous is None:
                members = bucket_members(rows[family])
                release(rows[family])
                candidates[family] = cut(bucket_pairs(members, cap), SPILL)
                count_buckets(members, cap, counts, family)
            else:
                members = touched_buckets(shared[family], chain)
                release(shared[family])
                candidates[family] = cut(bucket_pairs(members, cap, order="rank", root_key="root_key", new="is_new"),
                                         SPILL)
                counts[f"{family}_candidates"] = candidates[family].count()
                affected = cut(affected_rows(members, cap), SPILL)
                held.append(affected)
                counts[f"{family}_affected_rows"] = n_affected = affected.count()
                if n_affected:
                    withdrawn.append(withdrawn_pairs(fps, column, family, affected,
                                                     family_pairs(old_pairs, family, cfg.algorithm), members,
                                                     previous_capped, chain, cap))
            held += [members, candidates[family]]
            capped.append(capped_after(members, previous_capped, family, cap,
                                       order="doc_key" if previous is None else "rank"))
        pages = candidate_pages(candidates, fps)  # both ends of every candidate, picked out once
        held.append(pages)
        new = decided_pairs(candidates, pages, cfg)
        if previous is None:
            pairs = keep(new, SPILL)
            counts["pairs"] = pairs.count()
            gone = spark.createDataFrame([], "a long, b long")
        else:
            new = chain.with_ranks(chain.with_ranks(new, "a", "a_rank"), "b", "b_rank")
            gone = (cut(reduce(DataFrame.unionByName, withdrawn).distinct(), SPILL) if withdrawn
                    else spark.createDataFrame([], "a long, b long"))
            remaining = old_pairs.join(gone, on=["a", "b"], how="left_anti")
            columns = ["a", "b", "a_rank", "b_rank", *pair_columns(cfg.algorithm)]
            pairs = cut(remaining.select(*columns).unionByName(new.select(*columns)), SPILL)
            counts["previous_pairs"] = old_pairs.count()
            counts["withdrawn_pairs"] = gone.count()
            counts["pairs"] = pairs.count()
            counts["new_pairs"] = counts["pairs"] - counts["previous_pairs"] + counts["withdrawn_pairs"]
            release(old_pairs)
        run.out.write_table(reduce(DataFrame.unionByName, capped), work_table(CAPPED))
        for frame in held:
            release(frame)
    return pairs, gone, chain


def clusters_stage(run: JobRun, pairs: DataFrame, gone: DataFrame, chain: Chain, cfg: NearDupConfig) -> DataFrame:
    """The clusters of the chain: (doc_key, cluster_key: the doc_key of the component's smallest
    doc_id), persisted. The connected components of the pairs; in an update, of the previous
    clusters (each as a star) and the new pairs, a previous cluster that lost a pair rebuilt
    from its remaining pairs, computed on the doc_id ranks and named by doc_key again."""
    what = ("connected components (one task up to 4 M edges, else large-star / small-star)" if chain.fresh
            else "connected components of the previous clusters and the new pairs (one task up to 4 M edges)")
    with run.metrics.stage(run.spark, "clusters", what) as counts:
        rebuilt = None
        if chain.previous is None:
            clusters = keep(connected_components(pairs.select("a", "b"), checkpoint_every=cfg.cc_checkpoint_every,
                                                 max_rounds=cfg.cc_max_rounds), SPILL)
        else:
            clusters, rebuilt = previous_clusters_and_new_pairs(run, chain, pairs, gone, cfg)
        row = clusters.agg(F.count(F.lit(1)), F.countDistinct("cluster_key")).first()
        counts["clustered_documents"] = int(row[0])
        counts["clusters"] = int(row[1])
        if rebuilt is not None:
            counts["rebuilt_clusters"] = rebuilt
    return clusters


def previous_clusters_and_new_pairs(run: JobRun, chain: Chain, pairs: DataFrame, gone: DataFrame,
                                    cfg: NearDupConfig) -> tuple[DataFrame, int]:
    """An update's clusters (persisted) and how many previous clusters it rebuilt."""
    union = chain
    clustered = read_parquet(run.spark, chain.previous.finished.table(CLUSTERS))
    pair_counts = run.metrics.stages["pairs"]
    # the graph: at most every pair and a star edge per previously clustered page (two per pair)
    if int(pair_counts["pairs"]) + 2 * int(pair_counts["previous_pairs"]) <= clusters_module.ONE_TASK_EDGES:
        return clusters_in_one_task(chain, clustered, pairs, gone)
    keys = reduce(DataFrame.unionByName, [clustered.select("doc_key"), pairs.select(F.col("a").alias("doc_key")),
                                          pairs.select(F.col("b").alias("doc_key"))])
    ranked, n = rows_of(union.ranks, keys)  # every page that is or was in a pair
    ranks = small(ranked, n)
    before = (clustered.join(ranks, on="doc_key")
              .join(ranks.select(F.col("doc_key").alias("cluster_key"), F.col("rank").alias("cluster_rank")),
                    on="cluster_key")
              .select("rank", "cluster_rank"))
    ends = gone.select(F.col("a").alias("doc_key")).unionByName(gone.select(F.col("b").alias("doc_key")))
    broken = (before.join(ends.join(ranks, on="doc_key").select("rank"), on="rank", how="left_semi")
              .select("cluster_rank").distinct())
    members = before.join(broken, on="cluster_rank", how="left_semi").select("rank")
    stars = (before.join(broken, on="cluster_rank", how="left_anti").where(F.col("rank") != F.col("cluster_rank"))
             .select(F.col("rank").alias("a"), F.col("cluster_rank").alias("b")))
    rebuilt = pairs.join(members.withColumnRenamed("rank", "a_rank"), on="a_rank", how="left_semi")
    added = pairs.where(union.is_new("a") | union.is_new("b"))
    edges = stars.unionByName(rebuilt.unionByName(added).select(F.col("a_rank").alias("a"), F.col("b_rank").alias("b")))
    components = connected_components(edges, checkpoint_every=cfg.cc_checkpoint_every, max_rounds=cfg.cc_max_rounds)
    by_rank = ranks.select(F.col("rank").alias("r"), F.col("doc_key").alias("k"))
    clusters = cut(components.join(by_rank, components["doc_key"] == by_rank["r"])
                   .select(F.col("k").alias("doc_key"), "cluster_key")
                   .join(by_rank.select(F.col("r").alias("cluster_key"), F.col("k").alias("cluster")), on="cluster_key")
                   .select("doc_key", F.col("cluster").alias("cluster_key")), SPILL)
    n_broken = int(broken.count())
    release(ranked)
    return clusters, n_broken


def _updated_clusters(first_new: int, source: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The one task of ``clusters_in_one_task``: its tagged rows in, (doc_key, cluster_key,
    rebuilt) out; a row without a page carries the count when no page is clustered."""
    received = [b for b in source if b.num_rows]
    if not received:
        return
    table = pa.Table.from_batches(received)
    tag, x, y = (table.column(c).to_numpy() for c in ("tag", "x", "y"))
    (clustered, cluster_of), (a, b), (gone_a, gone_b), (keys, ranks) = [(x[tag == t], y[tag == t]) for t in range(4)]
    pages, named, rebuilt = updated_components(keys, ranks, clustered, cluster_of, a, b, gone_a, gone_b, first_new)
    some = pages.shape[0] > 0
    yield pa.RecordBatch.from_arrays(
        [pa.array(pages if some else [None], pa.int64()), pa.array(named if some else [None], pa.int64()),
         pa.array(np.full(max(1, pages.shape[0]), rebuilt, dtype=np.int64))], names=["doc_key", "cluster_key", "rebuilt"])


def clusters_in_one_task(chain: Chain, clustered: DataFrame, pairs: DataFrame,
                         gone: DataFrame) -> tuple[DataFrame, int]:
    """``previous_clusters_and_new_pairs`` in one task (``components.updated_components``): the
    previous clusters, the pairs, the withdrawn ones and the compared pages' ranks, each a tagged
    row, in one numpy call, not ~25 small Spark jobs. Returns the clusters (persisted) and how many
    previous clusters were rebuilt."""
    tagged = [clustered.select("doc_key", "cluster_key"), pairs.select("a", "b"), gone.select("a", "b"),
              chain.ranks.select("doc_key", "rank")]
    rows = reduce(DataFrame.unionByName, [frame.select(F.lit(tag).alias("tag"), F.col(frame.columns[0]).alias("x"),
                                                      F.col(frame.columns[1]).alias("y"))
                                          for tag, frame in enumerate(tagged)])
    found = cut(rows.repartition(1).mapInArrow(partial(_updated_clusters, chain.n_old),
                                               "doc_key long, cluster_key long, rebuilt long"), SPILL)
    rebuilt = found.agg(F.max("rebuilt")).first()[0]
    clusters = cut(found.where(F.col("doc_key").isNotNull()).select("doc_key", "cluster_key"), SPILL)
    release(found)
    return clusters, int(rebuilt or 0)


def write_pair_state(run: JobRun, pairs: DataFrame, clusters: DataFrame, algorithm: str) -> None:
    """The run's pairs and clusters on doc_keys (``PAIRS``, ``CLUSTERS``), for the next update."""
    run.out.write_table(pairs.select("a", "b", *pair_columns(algorithm)), work_table(PAIRS))
    run.out.write_table(clusters.select("doc_key", "cluster_key"), work_table(CLUSTERS))


def clustered_pages(docs: DataFrame, clusters: DataFrame) -> tuple[DataFrame, int]:
    """(doc_key, doc_id, url, warc_date) of the pages of ``clusters`` (what naming and the keep
    rule read of them), persisted, and how many (``rows_of``)."""
    return rows_of(docs.select("doc_key", "doc_id", "url", "warc_date"), clusters.select("doc_key"))


def kept_stage(run: JobRun, chain: Chain, pairs: DataFrame, clusters: DataFrame, algorithm: str,
               clustered: tuple[DataFrame, int]) -> None:
    """kept/ (the document table without the pages the keep rule drops) and duplicate_of/ (each
    dropped page, the kept page it duplicates, the run it was kept in, and why): together they
    name every document once (definitions §2, ``neardup/keep.py``). The keep rule decides this
    step's new pages, in the clusters that hold one, in crawl order against every page kept so
    far; pages an earlier step kept or dropped stay so, and an update's kept/ and duplicate_of/
    are the previous files with the new pages' rows beside them. ``clustered``: every cluster's
    pages and how many (``clustered_pages``, as the write stage read them)."""
    out, previous = run.out, chain.previous
    what = ("pages in crawl order: dropped when a near-duplicate of a kept one" if previous is None
            else "the new pages in crawl order, against every page kept so far")
    with run.metrics.stage(run.spark, "kept", what) as counts:
        held = []
        if previous is None:  # every cluster holds a new page; none is fixed
            open_clusters, ranked, state, dropped_before = clusters, None, None, None
        else:
            reached = clusters.where(chain.is_new()).select("cluster_key").distinct()
            open_clusters = cut(clusters.join(reached, on="cluster_key", how="left_semi"), SPILL)
            ranked, _ = rows_of(chain.ranks, open_clusters.select("doc_key"))
            held += [open_clusters, ranked]
            dropped_before = read_parquet(run.spark, previous.finished.table(DROPPED_PAGES))
            state = (open_clusters.select("doc_key")
                     .join(dropped_before.select("doc_key", F.lit(DROPPED).alias("was")), on="doc_key", how="left")
                     .select("doc_key", F.when(chain.is_new(), F.lit(DECIDE))
                             .otherwise(F.coalesce("was", F.lit(KEPT))).alias("state")))
        if previous is None:  # every page the rule may drop or keep for another
            pages, n = clustered
        else:
            pages, n = clustered_pages(chain.docs, open_clusters)
            held.append(pages)
        order = crawl_order(small(pages, n), None if ranked is None else small(ranked, n))
        dropped = dropped_pages(pairs, open_clusters, order, algorithm, state)
        dropped = cut(dropped, SPILL)  # computed once: kept/ reads it in each of its key ranges
        held.append(dropped)
        new_kept = beside_previous_result(run, chain, "kept", lambda name: out.write_rows(
            kept_in_order(run, chain, small(dropped, n)), name, DOCS_WRITE_OPTIONS)[1])
        rows = duplicate_of_table(small(pages, n), dropped, algorithm, kept_run(F.col("keeper"), chain.runs))
        new_dropped = beside_previous_result(run, chain, "duplicate_of", lambda name: out.write_rows(
            in_order(rows, n, "doc_id"), name)[1])
        now_dropped = dropped.select("doc_key")
        out.write_table(now_dropped if dropped_before is None else dropped_before.unionByName(now_dropped),
                        work_table(DROPPED_PAGES))
        if previous is None:
            counts["documents_kept"], counts["documents_dropped"] = new_kept, new_dropped
        else:
            counts["new_documents_kept"], counts["new_documents_dropped"] = new_kept, new_dropped
            counts["documents_kept"] = previous.kept + new_kept
            counts["documents_dropped"] = previous.dropped + new_dropped
        write_state(run, chain.runs, chain.spark_buckets)
        for frame in held:
            release(frame)


def kept_in_order(run: JobRun, chain: Chain, dropped: DataFrame) -> DataFrame:
    """kept/'s rows of this step: its new documents without the ``dropped`` pages, in doc_key
    order, cut into key ranges of about the advisory partition size of the new documents'
    stored bytes, as the sort before did (``keys.in_key_ranges``: without its sample of every
    row, and the same files for any partitioning). ``dropped`` marked for a broadcast where it
    is small (``small``): the documents are then filtered as they are read, not shuffled to
    the dropped pages first (a persisted frame's size is unknown when the join is planned;
    Spark turned the join into a broadcast only after it had shuffled every text)."""
    files = chain.new.inputFiles()
    stored = sum(fs.status(run.spark, f)[0] for f in files)
    advisory = size_in_bytes(str(run.spark.conf.get(ADVISORY_SIZE, "64m")))
    return in_key_ranges(kept_table(chain.new, dropped.select("doc_key")), chain.n_old, chain.new.count(),
                         max(1, math.ceil(stored / advisory)))


def beside_previous_result(run: JobRun, chain: Chain, name: str, write: Callable[[str], int]) -> int:
    """The result table ``name`` (kept/, duplicate_of/) of this step, written by ``write(name)``
    (which returns the rows it wrote): in place in a fresh run; in an update, the new pages'
    rows as a layer beside the previous run's files, linked or copied. Returns the rows written."""
    if chain.previous is None:
        return write(name)
    written = write(f"{name}-layer")
    run.out.concat_tables([chain.previous.finished.result(name), run.out.path(f"{name}-layer")], name)
    run.out.delete(f"{name}-layer")
    return written
