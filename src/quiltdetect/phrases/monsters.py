"""Here there be monsters (§3.5): popular shingles per page, averaged over hosts.

Per host with at least ``min_host_pages`` pages: the page count and the mean and (population)
standard deviation of popular shingles per page (Figs. 8-9), and, for the host's pages in the
covering-set sample, the mean covering-set size and foreign share. Candidates, as the paper
picks them: mean at least ``monster_min_mean`` (its figures show mean >= 30) and standard
deviation below ``monster_max_std`` (< 15). The paper ranks them by page count
(``monster_order: pages``); the default ranks by ``monster_score`` = pages * (mean - std) / m,
the pages' worth of replicated sample a typical page stays above: a template-driven site with
long boilerplate around short, variable content scores below a slice-and-dice site of the same
size, whose pages are nearly all popular with little variation. Ties: page count, mean, std, host.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from quiltdetect.phrases.popular import ranked


def ordered_mean(value: Column) -> Column:
    """The mean of a double column summed in sorted order: the same bits for any partitioning
    (a plain avg adds in partition order). Nulls are left out, as avg does."""
    values = F.array_sort(F.collect_list(value))
    return F.when(F.size(values) > 0, F.aggregate(values, F.lit(0.0), lambda acc, x: acc + x) / F.size(values))


def host_stats(counts: DataFrame, covers: DataFrame, min_pages: int, m: int) -> DataFrame:
    """(host, n_pages, mean_popular, std_popular, monster_score, sampled_pages, mean_cover_size,
    mean_foreign_share) for hosts with at least ``min_pages`` pages.

    ``counts``: (host, n_popular) per document after the collapse; ``covers``: the
    covering_sets table (host, n_popular, cover_size, foreign_contribution).
    """
    # Exact integer sums, so the statistics are the same bits for any partitioning (Spark's
    # stddev merges floating-point moments in partition order).
    n, total = F.count(F.lit(1)), F.sum(F.col("n_popular").cast("long"))
    squares = F.sum((F.col("n_popular") * F.col("n_popular")).cast("long"))
    stats = (counts.groupBy("host")
             .agg(n.alias("n_pages"), total.alias("_s"), squares.alias("_ss"))
             .where(F.col("n_pages") >= min_pages)
             .select("host", "n_pages", (F.col("_s") / F.col("n_pages")).alias("mean_popular"),
                     (F.sqrt((F.col("n_pages") * F.col("_ss") - F.col("_s") * F.col("_s")).cast("double"))
                      / F.col("n_pages")).alias("std_popular")))
    score = F.col("n_pages") * F.greatest(F.col("mean_popular") - F.col("std_popular"), F.lit(0.0)) / F.lit(float(m))
    share = F.col("foreign_contribution") / F.when(F.col("n_popular") > 0, F.col("n_popular"))
    sampled = covers.groupBy("host").agg(F.count(F.lit(1)).alias("sampled_pages"),
                                         (F.sum("cover_size") / F.count(F.lit(1))).alias("mean_cover_size"),
                                         ordered_mean(share).alias("mean_foreign_share"))
    return (stats.join(sampled, on="host", how="left")
            .select("host", "n_pages", "mean_popular", "std_popular", score.alias("monster_score"),
                    F.coalesce("sampled_pages", F.lit(0)).alias("sampled_pages"), "mean_cover_size",
                    "mean_foreign_share"))


def monster_sites(stats: DataFrame, min_mean: float, max_std: float, order: str = "score") -> DataFrame:
    """The ranked candidates: ``rank`` then the host_stats columns."""
    candidates = stats.where((F.col("mean_popular") >= min_mean) & (F.col("std_popular") < max_std))
    keys = [F.desc("n_pages"), F.desc("mean_popular"), F.asc("std_popular"), F.asc("host")]
    if order == "score":
        keys.insert(0, F.desc("monster_score"))
    return ranked(candidates, *keys)
