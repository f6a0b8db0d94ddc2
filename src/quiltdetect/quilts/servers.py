"""The foreign rule's server of a document: a quilt's sources must live on another one (definitions §1)."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F


def server_column(foreign: str) -> Column:
    """The server of each document under the foreign rule (see ``reference.server_of``)."""
    if foreign == "none":
        return F.lit(None).cast("string")
    if foreign == "host":
        return F.coalesce(F.col("host"), F.lit(""))
    if foreign == "domain":
        return F.coalesce(F.col("domain"), F.lit(""))
    if foreign == "ip":
        return F.coalesce(F.col("ip"), F.concat(F.lit("domain:"), F.coalesce(F.col("domain"), F.lit(""))))
    raise ValueError(f"unknown foreign rule {foreign!r}")
