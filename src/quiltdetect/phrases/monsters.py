"""Here there be monsters (§3.5): popular shingles per page, averaged over hosts.

Per host with at least ``min_host_pages`` pages: the page count and the mean and (population)
standard deviation of popular shingles per page (Figs. 8-9). Candidates, as the paper picks
them: mean at least ``monster_min_mean`` (the figures show mean >= 30) and standard deviation
below ``monster_max_std`` (< 15), ranked by page count, then higher mean, lower deviation, host.
A slice-and-dice site has many pages, nearly all of each page popular, and little variation.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.phrases.popular import ranked


def host_stats(counts: DataFrame, min_pages: int) -> DataFrame:
    """(host, n_pages, mean_popular, std_popular) for hosts with at least ``min_pages`` pages.

    ``counts``: (doc_key, host, n_popular, ...) of the documents after the collapse.
    """
    return (counts.groupBy("host")
            .agg(F.count(F.lit(1)).alias("n_pages"), F.avg("n_popular").alias("mean_popular"),
                 F.stddev_pop("n_popular").alias("std_popular"))
            .where(F.col("n_pages") >= min_pages))


def monster_sites(stats: DataFrame, min_mean: float, max_std: float) -> DataFrame:
    """The ranked candidates: (rank, host, n_pages, mean_popular, std_popular)."""
    candidates = stats.where((F.col("mean_popular") >= min_mean) & (F.col("std_popular") < max_std))
    return ranked(candidates, F.desc("n_pages"), F.desc("mean_popular"), F.asc("std_popular"), F.asc("host"))
