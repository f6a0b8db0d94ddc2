"""The patch_grams stage (figure 5, stages 5-7): the doc-bucket table, per ``doc_key mod n``:
the patch pairs (1 < df <= m) of its documents and each document's n_grams, n_patch_grams and
server id (with the foreign rule on; null without); in an update (``increment``), also which
documents to recompute (``recompute``) and each document's rank in doc_id order (``rank``), both
null in a fresh run (every document is computed, and its key is its rank).

The gram-bucket rows travel to their doc buckets as parts (``DOC_PARTS``), one table whose
``part`` says which columns a row fills.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

import mmh3
import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.common.arrow import ddl
from quiltdetect.common.foreign import ForeignRule
from quiltdetect.kernel.buckets import (
    doc_sums,
    gram_runs,
    is_member,
    patch_dfs,
    patch_mask,
    sort_pairs,
    touched_docs,
)
from quiltdetect.quilts.arrays import EMPTY, blob, concat, docs_by_bucket, int64s, rows_by

SERVER_SEED = 0x53525652  # "SRVR": server names -> 64-bit ids, compared for equality only

# Rows shuffled to doc buckets, by ``part``: PAIRS (``gram``, ``doc``, ``count``, and ``df`` when
# dfs are kept), STATS (``doc``; ``value`` = n_grams), SERVERS (``doc``; ``value`` = server id),
# RECOMPUTE (``doc``: documents an update recomputes), RANKS (``doc``; ``value`` = rank in doc_id
# order), IF_PATCHY (``doc``: documents an update recomputes if they are patchy, ``touched_docs``'
# ``gained``). A gram bucket's counts go to dbucket -1 (``n_distinct``, ``n_patch_grams``; in
# ``df`` the patch grams per df when dfs are kept).
PAIRS, STATS, SERVERS, RECOMPUTE, RANKS, IF_PATCHY = range(6)
DOC_PARTS = pa.schema([("dbucket", pa.int32()), ("part", pa.int8()), ("n_distinct", pa.int64()),
                       ("n_patch_grams", pa.int64()), ("doc", pa.binary()), ("value", pa.binary()),
                       ("gram", pa.binary()), ("count", pa.binary()), ("df", pa.binary())])
# ``df`` (each pair's gram df; in the dbucket -1 row, patch grams per df) only in a table made
# ``with_df`` for ``narrow_doc_table``; null otherwise. ``server`` (each document's server id)
# only with the foreign rule on: the covers compare servers where the table holds them.
DOC_BUCKETS = pa.schema([("dbucket", pa.int32()), ("distinct_grams", pa.int64()), ("patch_grams", pa.int64()),
                         ("n_pairs", pa.int64()), ("gram", pa.binary()), ("doc", pa.binary()), ("count", pa.binary()),
                         ("sdoc", pa.binary()), ("n_grams", pa.binary()), ("n_patch", pa.binary()),
                         ("server", pa.binary()), ("recompute", pa.binary()), ("rank", pa.binary()),
                         ("df", pa.binary())])
DOC_PARTS_DDL = ddl(DOC_PARTS)
DOC_BUCKETS_DDL = ddl(DOC_BUCKETS)


def _doc_parts(n_docs: int, m: int, with_counts: bool, n_gram: int, first_new_key: int | None = None,
               with_df: bool = False):
    """Gram-bucket rows -> doc-bucket parts: patch pairs (1 < df <= m) and document statistics.

    ``first_new_key`` (an update: the new documents are keyed from it on) adds the
    documents to recompute: the new ones and the old ones ``touched_docs`` finds (its
    ``gained`` ones as IF_PATCHY: only if patchy, which the doc bucket knows). ``with_df``:
    each patch pair carries its gram's df, and the bucket's counts the patch grams per df.
    """
    parts_of = partial(_parts_of_pairs, n_docs, m, with_counts, first_new_key, with_df)

    def doc_parts(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            rows: list[tuple] = []
            buckets = batch.column("bucket").to_numpy()
            for i in range(batch.num_rows):
                rows += parts_of(*(int64s(batch.column(c)[i]) for c in ("gram", "doc", "count")),
                                 stats=bool(buckets[i] >= n_gram))
            yield _doc_parts_batch(rows)

    return doc_parts


def _layered_doc_parts(n_docs: int, m: int, with_counts: bool, n_gram: int, first_new_key: int | None = None,
                       with_df: bool = False) -> Callable[[pa.Table], pa.Table]:
    """``_doc_parts`` of one gram bucket of a layered gram table (an update's: the previous
    table's files and a layer per update, ``increment``), whose grams may each have rows in
    several layers: the rows are merged first. Layers hold ascending ranges of doc keys, so in
    the order of their smallest doc the rows give each gram's documents in ascending order."""
    parts_of = partial(_parts_of_pairs, n_docs, m, with_counts, first_new_key, with_df)

    def doc_parts(table: pa.Table) -> pa.Table:
        rows: list[tuple] = []
        if table.num_rows and table.column("bucket")[0].as_py() >= n_gram:  # statistics: a document in one row
            for i in range(table.num_rows):
                rows += parts_of(*(int64s(table.column(c)[i]) for c in ("gram", "doc", "count")), stats=True)
        elif table.num_rows:
            order = rows_by(table.column("doc"), None, lambda docs: int(docs.min()))
            grams, docs, counts = (concat(table.column(c), order) for c in ("gram", "doc", "count"))
            grams, docs, counts = (sort_pairs(grams, docs, counts) if with_counts
                                   else (*sort_pairs(grams, docs), counts))
            rows = parts_of(grams, docs, counts, stats=False)
        return pa.Table.from_batches([_doc_parts_batch(rows)])

    return doc_parts


def _parts_of_pairs(n_docs: int, m: int, with_counts: bool, new: int | None, with_df: bool,
                    grams: np.ndarray, docs: np.ndarray, counts: np.ndarray, *, stats: bool) -> list[tuple]:
    """The doc-bucket parts of one gram-bucket row (every document of its grams, sorted by
    (gram, doc)), or with ``stats`` of one statistics row (doc, n_grams, n_distinct)."""
    rows: list[tuple] = []
    add = rows.append
    if stats:
        for dbucket, at in docs_by_bucket(grams, n_docs):
            add((dbucket, STATS, 0, 0, blob(grams[at]), blob(docs[at]), None, None, None))  # (documents, n_grams)
        if new is not None:
            rows += _recompute_parts(grams[grams >= new], n_docs)
        return rows
    runs = gram_runs(grams)
    if new is not None:
        changed, gained = touched_docs(grams, docs, docs >= new, m, runs)
        rows += _recompute_parts(changed, n_docs) + _recompute_parts(gained, n_docs, part=IF_PATCHY)
    is_patch, n_distinct, n_patch = patch_mask(grams, m, runs)
    dfs = hist = None
    if with_df:
        dfs, hist = patch_dfs(grams, m)
        dfs = dfs[is_patch]
    grams, docs = grams[is_patch], docs[is_patch]
    counts = counts[is_patch] if with_counts else np.ones(grams.shape[0], dtype=np.int64)
    # the bucket's gram counts
    add((-1, PAIRS, n_distinct, n_patch, None, None, None, None, None if hist is None else blob(hist)))
    for dbucket, at in docs_by_bucket(docs, n_docs):
        add((dbucket, PAIRS, 0, 0, blob(docs[at]), None, blob(grams[at]), blob(counts[at]),
             None if dfs is None else blob(dfs[at])))
    return rows


def _doc_parts_batch(rows: list[tuple]) -> pa.RecordBatch:
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in DOC_PARTS]
    return pa.RecordBatch.from_arrays([pa.array(list(v), f.type) for v, f in zip(columns, DOC_PARTS, strict=True)],
                                      schema=DOC_PARTS)


def _recompute_parts(docs: np.ndarray, n_docs: int, part: int = RECOMPUTE) -> list[tuple]:
    """RECOMPUTE parts: the documents an update recomputes, by doc bucket (IF_PATCHY: if patchy)."""
    return [(dbucket, part, 0, 0, blob(docs[at]), None, None, None, None)
            for dbucket, at in docs_by_bucket(docs, n_docs)]


def _server_ids(column: pa.Array) -> np.ndarray:
    return np.fromiter((mmh3.hash64(s, SERVER_SEED)[0] for s in column.to_pylist()), dtype=np.int64,
                       count=len(column))


def _rank_values(column: pa.Array) -> np.ndarray:
    return column.to_numpy(zero_copy_only=False).astype(np.int64)


def _value_parts(n_docs: int, part: int, values: Callable[[pa.Array], np.ndarray]):
    """(doc_key, x) rows -> doc-bucket parts ``part`` (SERVERS, RANKS) holding each document's int64
    ``values(x)``."""

    def value_parts(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            keys = batch.column(0).to_numpy(zero_copy_only=False).astype(np.int64)
            ids = values(batch.column(1))
            parts = docs_by_bucket(keys, n_docs)
            yield pa.RecordBatch.from_arrays(
                [pa.array([d for d, _ in parts], pa.int32()), pa.array([part] * len(parts), pa.int8()),
                 pa.array([0] * len(parts), pa.int64()), pa.array([0] * len(parts), pa.int64()),
                 pa.array([blob(keys[r]) for _, r in parts], pa.binary()),
                 pa.array([blob(ids[r]) for _, r in parts], pa.binary()),
                 *(pa.nulls(len(parts), pa.binary()) for _ in ("gram", "count", "df"))],
                schema=DOC_PARTS)

    return value_parts


def _doc_values(table: pa.Table, rows: np.ndarray, sdoc: np.ndarray) -> np.ndarray:
    """The values of the (doc, value) parts ``rows``, aligned with ``sdoc`` (0 where absent)."""
    found_values = np.zeros(sdoc.shape[0], dtype=np.int64)
    if rows.shape[0] == 0:
        return found_values
    key, value = concat(table.column("doc"), rows), concat(table.column("value"), rows)
    if not np.all(key[:-1] <= key[1:]):
        o = np.argsort(key)
        key, value = key[o], value[o]
    at = np.searchsorted(key, sdoc)
    found = at < key.shape[0]
    found_values[found] = value[at[found]]
    return found_values


def _patch_counts_of(sdoc: np.ndarray, docs: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each document of ``sdoc`` (sorted) with its patch gram count: the sum of its pairs'
    counts, 0 for a document without patch pairs."""
    with_patch, n_patch_of = doc_sums(docs, counts)
    n_patch = np.zeros(sdoc.shape[0], dtype=np.int64)
    n_patch[np.searchsorted(sdoc, with_patch)] = n_patch_of
    return n_patch


def _merge_doc_bucket(table: pa.Table, restricted: float | None = None, ranked: bool = False,
                      with_servers: bool = False) -> pa.Table:
    """One doc bucket's parts -> its row of the doc-bucket table; ``restricted`` (an update, the
    run's theta): flag in ``recompute`` the documents that RECOMPUTE parts name and those IF_PATCHY
    parts name that are patchy; ``ranked``: each document's rank from the RANKS parts in ``rank``;
    ``with_servers`` (the foreign rule on): each document's server from the SERVERS parts in
    ``server``, else null."""
    part = table.column("part").to_numpy()
    dbucket = table.column("dbucket")[0].as_py()
    distinct = int(pa.compute.sum(table.column("n_distinct")).as_py() or 0)
    patch = int(pa.compute.sum(table.column("n_patch_grams")).as_py() or 0)
    # Each pair row holds one gram bucket's pairs sorted by (gram, doc): in gram order they are sorted.
    pairs = rows_by(table.column("gram"), np.flatnonzero(part == PAIRS), lambda grams: int(grams[0]))
    grams, docs, counts = (concat(table.column(c), pairs) for c in ("gram", "doc", "count"))
    with_df = bool(pa.compute.any(table.column("df").is_valid()).as_py())
    dfs = concat(table.column("df"), pairs) if with_df else EMPTY
    if grams.shape[0] and with_df:
        grams, docs, counts, dfs = sort_pairs(grams, docs, counts, dfs)
    elif grams.shape[0]:
        grams, docs, counts = sort_pairs(grams, docs, counts)
    stats = np.flatnonzero(part == STATS)
    sdoc, n_grams = concat(table.column("doc"), stats), concat(table.column("value"), stats)
    order = np.argsort(sdoc)
    sdoc, n_grams = sdoc[order], n_grams[order]
    n_patch = _patch_counts_of(sdoc, docs, counts)
    server = _doc_values(table, np.flatnonzero(part == SERVERS), sdoc) if with_servers else None
    flags = ranks = None
    if restricted is not None:
        named = np.unique(concat(table.column("doc"), np.flatnonzero(part == RECOMPUTE)))
        if_patchy = np.unique(concat(table.column("doc"), np.flatnonzero(part == IF_PATCHY)))
        patchy = (n_patch / np.maximum(n_grams, 1) >= restricted) & (n_patch > 0)  # as _fraction_rows
        flags = blob((is_member(sdoc, named) | (is_member(sdoc, if_patchy) & patchy)).astype(np.int64))
    if ranked:
        ranks = blob(_doc_values(table, np.flatnonzero(part == RANKS), sdoc))
    df = blob(dfs) if with_df else None
    if dbucket < 0:
        sdoc = n_grams = n_patch = EMPTY
        server = EMPTY if with_servers else None
        flags = ranks = None
        if with_df:  # patch grams per df, summed over the gram buckets
            hists = [int64s(h) for h in table.column("df") if h.is_valid]
            df = blob(np.sum(hists, axis=0))
    values = [dbucket, distinct, patch, grams.shape[0], blob(grams), blob(docs), blob(counts), blob(sdoc),
              blob(n_grams), blob(n_patch), None if server is None else blob(server), flags, ranks, df]
    return pa.Table.from_arrays([pa.array([v], f.type) for v, f in zip(values, DOC_BUCKETS, strict=True)],
                                schema=DOC_BUCKETS)


def doc_buckets(
    grams_table: DataFrame, docs: DataFrame, m: int, n_gram: int, n_docs: int, *, with_counts: bool,
    foreign: ForeignRule,
    first_new_key: int | None = None, theta: float = 0.0, ranks: DataFrame | None = None, with_df: bool = False,
    layered: bool = False,
) -> DataFrame:
    """The doc-bucket table: patch pairs and per-document counts, grouped by ``doc_key mod n_docs``.

    ``foreign``: the run's foreign rule; when it is on, each document's server under it (which
    the covers then compare: ``cover.cover_sources``).

    ``first_new_key``: an update's first new key (the new documents are keyed from it on): the
    table then flags the documents whose figures may change at ``theta`` (the previous run's), and
    later stages compute only those.
    ``ranks``: (doc_key, rank) when keys do not order like doc_ids (an update, ``doc_ranks``).
    ``with_df``: keep each pair's gram df, so ``narrow_doc_table`` can derive any smaller m.
    ``layered``: ``grams_table`` holds several layers (``GramTable``); each gram bucket's rows
    are merged first (a group per bucket: without a shuffle when the table is read bucketed).
    """
    if layered:
        parts = grams_table.groupBy("bucket").applyInArrow(
            _layered_doc_parts(n_docs, m, with_counts, n_gram, first_new_key, with_df), DOC_PARTS_DDL)
    else:
        parts = grams_table.mapInArrow(_doc_parts(n_docs, m, with_counts, n_gram, first_new_key, with_df),
                                       DOC_PARTS_DDL)
    if foreign.on:
        servers = docs.select("doc_key", foreign.server_column().alias("server"))
        parts = parts.unionByName(servers.mapInArrow(_value_parts(n_docs, SERVERS, _server_ids), DOC_PARTS_DDL))
    if ranks is not None:
        parts = parts.unionByName(ranks.select("doc_key", "rank").mapInArrow(_value_parts(n_docs, RANKS, _rank_values),
                                                                             DOC_PARTS_DDL))
    merge = partial(_merge_doc_bucket, restricted=theta if first_new_key is not None else None,
                    ranked=ranks is not None, with_servers=foreign.on)
    return parts.groupBy("dbucket").applyInArrow(merge, DOC_BUCKETS_DDL)


def _narrow_rows(m: int):
    """Doc-bucket rows made ``with_df`` -> the same rows at a smaller m: the pairs with df <= m,
    each document's n_patch summed again, the patch grams counted from the per-df counts."""
    changed = ("patch_grams", "n_pairs", "gram", "doc", "count", "n_patch")

    def narrow_rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            out: dict[str, list] = {name: [] for name in changed}
            for i in range(batch.num_rows):
                dfs = int64s(batch.column("df")[i])
                if batch.column("dbucket")[i].as_py() < 0:  # the gram counts: patch grams with df <= m
                    row = {"patch_grams": int(dfs[: m + 1].sum()), "n_pairs": 0}
                    row.update({c: batch.column(c)[i].as_py() for c in ("gram", "doc", "count", "n_patch")})
                else:
                    keep = dfs <= m
                    grams, docs, counts = (int64s(batch.column(c)[i])[keep] for c in ("gram", "doc", "count"))
                    sdoc = int64s(batch.column("sdoc")[i])
                    n_patch = _patch_counts_of(sdoc, docs, counts)
                    row = {"patch_grams": batch.column("patch_grams")[i].as_py(), "n_pairs": int(grams.shape[0]),
                           "gram": blob(grams), "doc": blob(docs), "count": blob(counts), "n_patch": blob(n_patch)}
                for name in changed:
                    out[name].append(row[name])
            arrays = [pa.array(out[f.name], f.type) if f.name in out
                      else pa.nulls(batch.num_rows, f.type) if f.name == "df" else batch.column(f.name)
                      for f in DOC_BUCKETS]
            yield pa.RecordBatch.from_arrays(arrays, schema=DOC_BUCKETS)

    return narrow_rows


def narrow_doc_table(doc_table: DataFrame, m: int) -> DataFrame:
    """The doc-bucket table at ``m`` from one made ``with_df`` at a larger m (no shuffle): a
    gram's df does not depend on m, so the patch pairs at m are those with df <= m."""
    return doc_table.mapInArrow(_narrow_rows(m), DOC_BUCKETS_DDL)


def patch_counts(doc_table: DataFrame) -> tuple[int, int, int]:
    """(distinct grams, patch grams, (doc, patch gram) pairs) of a doc-bucket table."""
    row = doc_table.agg(F.sum("distinct_grams"), F.sum("patch_grams"), F.sum("n_pairs")).first()
    return int(row[0] or 0), int(row[1] or 0), int(row[2] or 0)

