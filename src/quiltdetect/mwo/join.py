"""The corpus-wide MWO self-join on Spark: prefix filtering, positional filtering, verification.

Candidate pairs meet on a shared weighted-prefix term (a self-join of the prefix postings on
term_id, never all pairs); per pair the overlap of the shared prefix terms plus the smaller
weight left after the last of them bounds MWO (the weighted positional filter); survivors
are verified with the exact MWO kernel.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from quiltdetect.mwo.filtering import EPS, mwo

PAIR_SCHEMA = "key_a long, key_b long, mwo double"


def prefix_candidates(postings: DataFrame, t: float) -> DataFrame:
    """(key_a, key_b, bound) with key_a < key_b: the pairs sharing a weighted-prefix term at t.

    ``bound`` = Σ min(w_a, w_b) over the shared prefix terms + min(weight of a, weight of b
    after the last shared prefix term): an upper bound of MWO (docs/mwo.md).
    """
    prefix = postings.where(F.col("rem") >= t - EPS).select(
        "term_id", "doc_key", "weight", (F.col("rem") - F.col("weight")).alias("after"))
    a = prefix.select("term_id", F.col("doc_key").alias("key_a"), F.col("weight").alias("w_a"),
                      F.col("after").alias("after_a"))
    b = prefix.select("term_id", F.col("doc_key").alias("key_b"), F.col("weight").alias("w_b"),
                      F.col("after").alias("after_b"))
    shared = a.join(b, on="term_id").where(F.col("key_a") < F.col("key_b"))
    per_pair = shared.groupBy("key_a", "key_b").agg(
        F.sum(F.least("w_a", "w_b")).alias("overlap"),
        F.max(F.struct("term_id", "after_a", "after_b")).alias("last"),
    )
    return per_pair.select(
        "key_a", "key_b", (F.col("overlap") + F.least("last.after_a", "last.after_b")).alias("bound"))


def positional_candidates(candidates: DataFrame, t: float) -> DataFrame:
    """The candidates whose MWO bound reaches t."""
    return candidates.where(F.col("bound") >= t - EPS).select("key_a", "key_b")


def verify_batches(batches: Iterator[pd.DataFrame], t: float) -> Iterator[pd.DataFrame]:
    """Pairs with both records -> the pairs whose MWO >= t, with their MWO."""
    for batch in batches:
        values = [
            mwo(np.asarray(ia), np.asarray(wa), np.asarray(ib), np.asarray(wb))
            for ia, wa, ib, wb in zip(batch["ids_a"], batch["w_a"], batch["ids_b"], batch["w_b"], strict=True)
        ]
        out = pd.DataFrame({"key_a": batch["key_a"].astype("int64"), "key_b": batch["key_b"].astype("int64"),
                            "mwo": np.asarray(values, dtype=np.float64)})
        yield out[(out["mwo"] >= t) & (out["mwo"] > 0)]


def verified_pairs(pairs: DataFrame, canon: DataFrame, t: float) -> DataFrame:
    """(doc_id_a, doc_id_b, mwo) for the candidate pairs whose MWO >= t; doc_id_a < doc_id_b."""
    rec_a = canon.select(F.col("doc_key").alias("key_a"), F.col("term_ids").alias("ids_a"), F.col("weights").alias("w_a"))
    rec_b = canon.select(F.col("doc_key").alias("key_b"), F.col("term_ids").alias("ids_b"), F.col("weights").alias("w_b"))
    joined = pairs.join(rec_a, on="key_a").join(rec_b, on="key_b").select("key_a", "key_b", "ids_a", "w_a", "ids_b", "w_b")
    kept = joined.mapInPandas(lambda it: verify_batches(it, t), schema=PAIR_SCHEMA)
    ids = canon.select("doc_key", "doc_id")
    return (
        kept.join(ids.select(F.col("doc_key").alias("key_a"), F.col("doc_id").alias("doc_id_a")), on="key_a")
        .join(ids.select(F.col("doc_key").alias("key_b"), F.col("doc_id").alias("doc_id_b")), on="key_b")
        .select("doc_id_a", "doc_id_b", "mwo")
    )
