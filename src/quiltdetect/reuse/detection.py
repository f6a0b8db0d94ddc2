"""Detection on Spark: object matching (step 4), contains per page (step 5), badness (step 6).

Pages with no chunk left after stop-chunk removal have no ``contains`` (0/0); they are
counted and stay out of partial matching and of every neighborhood's mean.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DecimalType

BADNESS_BINS = 20  # histogram of Figs. 12-13: bins of width 0.05 on [0, 1]
# A page's contains in [0, 1] to 18 decimals: exact sums of up to 10^20 pages per neighborhood.
EXACT = DecimalType(38, 18)


def match_chunks(chunks: DataFrame, labeled_chunks: DataFrame, *, broadcast: bool) -> DataFrame:
    """T_c: every chunk occurrence whose hash is in L_c (doc_key, pos, sha1)."""
    table = labeled_chunks.select("sha1").distinct()
    if broadcast:
        table = F.broadcast(table)
    return chunks.join(table, on="sha1").select("doc_key", "pos", "sha1")


def match_files(hashes: DataFrame, labeled_files: DataFrame, *, broadcast: bool) -> DataFrame:
    """T_f: every document whose file hash is in L_f (doc_key, sha1)."""
    table = labeled_files.select(F.col("sha1").alias("file_sha1")).distinct()
    if broadcast:
        table = F.broadcast(table)
    return hashes.join(table, on="file_sha1").select("doc_key", F.col("file_sha1").alias("sha1"))


def page_contains(hashes: DataFrame, chunk_matches: DataFrame, file_matches: DataFrame) -> DataFrame:
    """Per page: n_chunks, n_labeled_chunks, contains = n_labeled / n_chunks, file_match."""
    labeled = chunk_matches.groupBy("doc_key").agg(F.count(F.lit(1)).alias("n_labeled_chunks"))
    files = file_matches.select("doc_key", F.lit(True).alias("file_match"))
    n_chunks = F.size("chunks")
    return (
        hashes.select("doc_key", n_chunks.alias("n_chunks"), "n_stop")
        .join(labeled, on="doc_key", how="left")
        .join(files, on="doc_key", how="left")
        .select(
            "doc_key", "n_chunks", "n_stop",
            F.coalesce("n_labeled_chunks", F.lit(0)).alias("n_labeled_chunks"),
            F.when(F.col("n_chunks") > 0, F.coalesce("n_labeled_chunks", F.lit(0)) / F.col("n_chunks")).alias("contains"),
            F.coalesce("file_match", F.lit(False)).alias("file_match"),
        )
    )


def mean_plus_std(frame: DataFrame, column: str) -> tuple[float | None, float | None, int, int]:
    """(mean, population standard deviation, n) of a column over the non-null rows, and the
    number of null rows (one pass: the aggregates skip nulls)."""
    row = frame.agg(F.avg(column), F.stddev_pop(column), F.count(column), F.count(F.lit(1))).first()
    return (None if row[0] is None else float(row[0]), None if row[1] is None else float(row[1]), int(row[2]),
            int(row[3]) - int(row[2]))


def neighborhood_members(pages: DataFrame, paths: DataFrame) -> DataFrame:
    """(neighborhood, doc_key, contains, n_chunks, n_labeled_chunks): each scored page once per prefix."""
    scored = pages.where(F.col("contains").isNotNull()).join(paths.select("doc_key", "prefixes"), on="doc_key")
    return scored.select(F.explode("prefixes").alias("neighborhood"), "doc_key", "contains", "n_chunks",
                         "n_labeled_chunks")


def neighborhood_badness(pages: DataFrame, paths: DataFrame) -> DataFrame:
    """Per neighborhood (URL-path prefix): pages, chunks, bad chunks, badness = mean contains.

    Each page is exploded into its prefixes and the prefixes aggregated independently, which
    is the paper's parallelism over distinct neighborhoods. ``chunk_ratio`` is the ratio over
    the neighborhood's pooled chunk vector (§3.3's contains(L_c, N)), kept beside it.

    The mean is summed in decimals (``EXACT``), which add without rounding: a sum of doubles
    depends on the order its partial sums meet, so the last bit of a badness changed with the
    partitioning.
    """
    return neighborhood_members(pages, paths).groupBy("neighborhood").agg(
        F.count(F.lit(1)).alias("n_pages"),
        F.sum("n_chunks").alias("n_chunks"),
        F.sum("n_labeled_chunks").alias("bad_chunks"),
        F.avg(F.col("contains").cast(EXACT)).cast("double").alias("badness"),
    ).select(
        "neighborhood",
        F.split("neighborhood", "/", 2)[0].alias("host"),
        (F.size(F.split("neighborhood", "/")) - 1).alias("depth"),
        "n_pages", "n_chunks", "bad_chunks", "badness",
        (F.col("bad_chunks") / F.col("n_chunks")).alias("chunk_ratio"),
    )


def badness_histogram(neighborhoods: DataFrame) -> DataFrame:
    """Neighborhoods per badness bin of width 1/BADNESS_BINS (the last bin includes 1.0)."""
    bin_ = F.least(F.floor(F.col("badness") * BADNESS_BINS), F.lit(BADNESS_BINS - 1)).cast("int")
    return neighborhoods.groupBy(bin_.alias("bin")).agg(F.count(F.lit(1)).alias("n_neighborhoods")).orderBy("bin")
