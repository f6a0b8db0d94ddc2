"""What every update (``--previous``) shares: the finished run it extends, and the union of its
documents with the new ones.

An update reads a finished run (``finished_run``: complete, of the same job, under the same
definitions of documents and words), writes ``docs/`` as the previous documents with their
keys unchanged plus the new ones keyed after them in doc_id order (``union_documents``: the
previous files are linked or copied, never rewritten), and, where an analysis needs the
fresh run's order, ranks every document by doc_id over the union (``doc_ranks``). The
previous output is only read.
"""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from quiltdetect.common import fs
from quiltdetect.common.caching import SPILL, keep, release
from quiltdetect.common.config import ConfigError, flag_of
from quiltdetect.common.folder import read_parquet
from quiltdetect.common.runstate import COMPLETE, STATE_DIR
from quiltdetect.ingest.keys import doc_id_ranges, numbered_documents
from quiltdetect.ingest.read import DOC_COLUMNS, with_doc_keys
from quiltdetect.ingest.table import DEFINITIONS, DOCS_WRITE_OPTIONS, read_documents
from quiltdetect.lifecycle import JobRun


def finished_run(spark: SparkSession | None, path: str, job: str, state: str) -> dict[str, Any]:
    """The _COMPLETE record of ``path`` (``--previous``, resolved), checked: a finished run of
    ``job`` made under this version's definitions (else its stored ``state`` would not match)."""
    text = fs.read_text(spark, fs.join(path, COMPLETE))
    if text is None:
        raise ConfigError(f"--previous {path} is not a finished quiltdetect output (no {COMPLETE}); "
                          f"give the --output of a {job} run that completed")
    done = json.loads(text)
    if done.get("job") != job:
        raise ConfigError(f"--previous {path} holds a {done.get('job')} run; an update extends a {job} run")
    made_under = done.get("definitions") or {}
    if made_under != DEFINITIONS:
        changed = [k for k in DEFINITIONS if made_under.get(k) != DEFINITIONS[k]]
        raise ConfigError(
            f"--previous {path} was made under an older definition of {' and '.join(changed)} "
            f"({', '.join(f'{k} {made_under.get(k, 1)!s}' for k in changed)}; this version uses "
            f"{', '.join(DEFINITIONS[k] for k in changed)}: docs/definitions.md §0), so its stored {state} do not "
            "match; run once without --previous to start afresh, then update that run")
    return done


def check_same_settings(done: dict[str, Any], cfg: Any, names: tuple[str, ...], path: str, why: str) -> None:
    """Refuse an update whose ``names`` settings differ from the previous run's (``done``, its
    _COMPLETE record), with a line naming the option and the way out; ``why`` says what of
    the stored state depends on them."""
    before = done.get("config", {})
    for name in names:
        if before.get(name) != getattr(cfg, name):
            option = flag_of(type(cfg), name)
            raise ConfigError(
                f"{option} is {getattr(cfg, name)!r} but the previous run ({path}) used {before.get(name)!r}: "
                f"an update keeps {why}; give the previous run's value, or run without --previous to start afresh")


SEGMENT = f"{STATE_DIR}/work/segment"  # the new documents of an update, keyed as in docs/
# An update's new records whose doc_id the previous run holds are left out of the texts by a
# broadcast join up to this many doc_ids (a re-crawl of part of the archive), by a shuffle above.
BROADCAST_SEEN = 1_000_000


def union_documents(run: JobRun, previous: str, documents: int | None) -> tuple[DataFrame, DataFrame, int]:
    """The ingest stage of an update: docs/ = the previous documents (their keys unchanged) and
    the new ones not already there, keyed after them in doc_id order. Returns docs/, the new
    documents and the number of previous documents (the first new key)."""
    spark, cfg, out = run.spark, run.cfg, run.out

    def build(counts: dict) -> tuple[DataFrame, DataFrame, int]:
        old = read_parquet(spark, fs.join(previous, "docs"))
        n_old = documents if documents is not None else int(old.count())
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
        table = out.concat_tables([fs.join(previous, "docs"), out.path(SEGMENT)], "docs")
        n_new = ranges.documents
        n_read = n_new + n_seen
        read.release()
        release(seen)
        read.count_into(counts, n_read)
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


def doc_ranks(docs: DataFrame) -> DataFrame:
    """(doc_key, rank): each document's rank in doc_id order over the union, for the greedy
    cover's last tie-break (an update keys new documents after the old ones, so keys no longer
    order like doc_ids). One sort of the doc_id column."""
    keyed = with_doc_keys(docs.select("doc_id", F.col("doc_key").alias("_key")))
    return keyed.select(F.col("_key").alias("doc_key"), F.col("doc_key").alias("rank"))
