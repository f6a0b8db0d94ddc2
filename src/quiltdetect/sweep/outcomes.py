"""One Spark pass per (k, m): each document's patch fraction and cover size (Theorems 1-3).

Every text is tokenised and hashed once for the whole sweep; the gram buckets of one k are
computed once from those hashes; when a k has several m, its patch pairs are found once, at the
largest m with each pair's gram df, and every m takes those with df <= m (``narrow_doc_table``);
per m the quilt job's own dataflow (``quilts.patch_grams``, ``patchfrac``, ``cover``) runs
with θ = min θ.
What every (θ, c, φ) needs follows from the per-document outcome
``(patchfrac, n_sources[φ], n_attributed[φ])``, so no (θ, c) needs another pass.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from quiltdetect.common.caching import ON_DISK, keep
from quiltdetect.quilts.arrays import bucket_count
from quiltdetect.quilts.cover import cover_sources
from quiltdetect.quilts.gram_table import gram_buckets, word_hash_table
from quiltdetect.quilts.patch_grams import doc_buckets, narrow_doc_table
from quiltdetect.quilts.patchfrac import fractions_of
from quiltdetect.quilts.sources import mark_attributed
from quiltdetect.sweep.config import SweepConfig


def bucket_counts(docs: DataFrame) -> int:
    """The gram and document bucket count, from the shuffle partitions (as the quilt job's)."""
    return bucket_count(int(docs.sparkSession.conf.get("spark.sql.shuffle.partitions")))


def word_pass(docs: DataFrame) -> DataFrame:
    """Every document's word hashes (``quilts.gram_table.word_hash_table``), persisted for all k:
    the sweep tokenises and hashes each text once.

    On local disk only: 8 bytes per word held in memory took the execution memory the k = 2
    covers needed (a task failed with UNABLE_TO_ACQUIRE_MEMORY: docs/performance.md, "Memory
    and defaults at a million pages"); read back from disk it costs nothing of it.
    """
    return keep(word_hash_table(docs), ON_DISK)


def gram_pass(words: DataFrame, k: int, cfg: SweepConfig, n: int) -> DataFrame:
    """The gram buckets of one k from the word hashes (``quilts.gram_table``), persisted for all its m.

    On local disk only, as the quilt job's gram table is (a Parquet table): every document's
    k-gram set. Kept in memory and disk, its blocks being cached took the execution memory of
    the bucket merge's sort, and at a million pages the first k failed with
    UNABLE_TO_ACQUIRE_MEMORY under the shipped driver memory.
    """
    return keep(gram_buckets(words, k, n, with_counts=cfg.count_occurrences, hashed=True), ON_DISK)


def patch_pass(docs: DataFrame, grams: DataFrame, n: int, m: int, cfg: SweepConfig, *,
               with_df: bool = False) -> DataFrame:
    """The doc-bucket table of one (k, m): patch pairs and per-document counts (persist it: both
    the patch fractions and the covers read it). On disk only, like the gram buckets: cached in
    memory, the k = 2 table of a million pages starved the covers' sort of execution memory
    (UNABLE_TO_ACQUIRE_MEMORY under the shipped driver memory). ``with_df``: the table of the
    largest m of a k, from which ``pass_table`` derives every smaller m."""
    return doc_buckets(grams, docs, m, n, n, with_counts=cfg.count_occurrences, foreign=cfg.foreign_rule,
                       with_df=with_df)


def pass_table(shared: DataFrame, m: int, largest: int) -> DataFrame:
    """The doc-bucket table at m from the shared one made ``with_df`` at ``largest`` >= m.

    Reading the gram buckets again and shuffling every patch pair per m cost, at 1,000,000
    pages, more than a third of each pass of the k = 5 series; a gram's df does not depend
    on m, so the pairs at m are those with df <= m (a map over the shared table, no shuffle).
    """
    return shared if m == largest else narrow_doc_table(shared, m)


def pass_tables(doc_table: DataFrame, n: int, cfg: SweepConfig) -> tuple[DataFrame, DataFrame]:
    """(fractions, covers) of one pass, persisted on local disk (unpersist both after the pass).

    The covers are those of the quilt job run with θ = min θ. The outcomes read both tables
    more than once (``mark_attributed`` alone reads the covers three times); unpersisted, each
    read ran the covers' first shuffle again (three times per pass: docs/performance.md,
    "Figures behind choices in the code") and the patch fractions twice. On disk only, as the
    doc table.
    """
    fractions = keep(fractions_of(doc_table), ON_DISK)
    covers = cover_sources(doc_table, min(cfg.thetas), n, n)  # foreign sources as the doc table was made
    return fractions, keep(covers, ON_DISK)


def doc_outcomes(docs: DataFrame, fractions: DataFrame, covers: DataFrame, cfg: SweepConfig) -> DataFrame:
    """Per document with grams: doc_key, doc_id, n_grams, n_patch_grams, patchfrac,
    n_sources and n_attributed (int arrays, one entry per φ of ``cfg.phis``), from a pass's
    ``pass_tables``.

    Covers exist only for documents with patchfrac >= min θ (others get zeros), exactly as
    the quilt job run with θ = min θ; a source counts for φ when it covered >= φ·|pgrams(d)|
    grams at its pick, and is attributed when d links to its URL.
    """
    covers = mark_attributed(covers, docs)
    need = F.col("n_patch_grams")
    per_phi_sources = [F.sum((F.col("covered") >= F.lit(phi) * need).cast("int")) for phi in cfg.phis]
    per_phi_attributed = [
        F.sum(((F.col("covered") >= F.lit(phi) * need) & F.col("attributed")).cast("int")) for phi in cfg.phis
    ]
    sizes = (
        covers.join(fractions.select(F.col("doc_key").alias("target"), "n_patch_grams"), on="target")
        .groupBy(F.col("target").alias("doc_key"))
        .agg(F.array(*per_phi_sources).alias("n_sources"), F.array(*per_phi_attributed).alias("n_attributed"))
    )
    zeros = F.array(*[F.lit(0) for _ in cfg.phis])
    return (
        fractions.join(sizes, on="doc_key", how="left")
        .join(docs.select("doc_key", "doc_id"), on="doc_key")
        .select(
            "doc_key", "doc_id",
            F.col("n_grams").cast("int").alias("n_grams"),
            F.col("n_patch_grams").cast("int").alias("n_patch_grams"),
            F.col("patchfrac").cast("double").alias("patchfrac"),
            F.coalesce("n_sources", zeros).alias("n_sources"),
            F.coalesce("n_attributed", zeros).alias("n_attributed"),
        )
    )


def _index(value: Column, bounds: list) -> Column:
    """The largest i with bounds[i] <= value, or -1: a sum of comparisons (bounds sorted)."""
    return sum((value >= F.lit(b)).cast("int") for b in bounds) - F.lit(1)


def _cells(outcomes: DataFrame, cfg: SweepConfig, prefix: str = "", *, exclude: bool = False) -> DataFrame:
    """(phi index, θ index, c index) per document and φ; with ``exclude`` an attributed
    document gets c index -1 (it is quilted nowhere)."""
    exploded = outcomes.select(
        "doc_key", "patchfrac",
        F.posexplode(F.arrays_zip("n_sources", "n_attributed")).alias("phi_i", "z"),
    )
    t_i = _index(F.col("patchfrac"), cfg.thetas)
    c_i = _index(F.col("z.n_sources"), cfg.cs)
    if exclude:
        c_i = F.when(F.col("z.n_attributed") > 0, F.lit(-1)).otherwise(c_i)
    return exploded.select(
        "doc_key", "phi_i",
        t_i.alias(prefix + "t_i"), c_i.alias(prefix + "c_i"),
        F.col("z.n_sources").alias(prefix + "n_sources"),
        (F.col("z.n_attributed") > 0).alias(prefix + "attributed"),
    )


def cell_counts(outcomes: DataFrame, cfg: SweepConfig) -> list[tuple[int, int, int, bool, int, int]]:
    """Rows (phi_i, t_i, c_i, attributed, documents, sum of n_sources): a few hundred at most."""
    cells = _cells(outcomes, cfg).where((F.col("t_i") >= 0) & (F.col("c_i") >= 0))
    rows = (
        cells.groupBy("phi_i", "t_i", "c_i", "attributed")
        .agg(F.count(F.lit(1)).alias("n"), F.sum("n_sources").alias("s"))
        .collect()
    )
    return [(r.phi_i, r.t_i, r.c_i, bool(r.attributed), int(r.n), int(r.s)) for r in rows]


def transition_counts(before: DataFrame, after: DataFrame, cfg: SweepConfig) -> list[tuple[int, int, int, int, int, int]]:
    """Rows (phi_i, t_i before, c_i before, t_i after, c_i after, documents) between two m
    of one k, for the documents quilted at some grid point before (Theorem 3's breaks)."""
    b = _cells(before, cfg, "b_", exclude=cfg.exclude_attributed).where((F.col("b_t_i") >= 0) & (F.col("b_c_i") >= 0))
    a = _cells(after, cfg, "a_", exclude=cfg.exclude_attributed)
    rows = (
        b.join(a, on=["doc_key", "phi_i"], how="left")
        .groupBy("phi_i", "b_t_i", "b_c_i", F.coalesce("a_t_i", F.lit(-1)).alias("a_t_i"),
                 F.coalesce("a_c_i", F.lit(-1)).alias("a_c_i"))
        .agg(F.count(F.lit(1)).alias("n"))
        .collect()
    )
    return [(r.phi_i, r.b_t_i, r.b_c_i, r.a_t_i, r.a_c_i, int(r.n)) for r in rows]
