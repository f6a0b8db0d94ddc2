"""The foreign rule: which server a document lives on, so that a quilt's sources (definitions
§1) and a covering set's preferred donors (§3) can be required to live on another one. One
rule, one name (``foreign``), one set of choices, for the quilt job, the sweep and the phrases.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column

FOREIGN_CHOICES = ("none", "host", "domain", "ip")


def server_column(foreign: str) -> Column:
    """The server of each document under the foreign rule (``common.reference.server_of`` is the same rule in plain Python):
    its host, its registered domain, or its IP address (else ``domain:`` its domain); a null
    for ``none``. (PySpark is imported here, not above: the config classes import this module's
    choices, and a command's start, ``--help`` included, should not wait for PySpark.)"""
    from pyspark.sql import functions as F

    if foreign == "none":
        return F.lit(None).cast("string")
    if foreign == "host":
        return F.coalesce(F.col("host"), F.lit(""))
    if foreign == "domain":
        return F.coalesce(F.col("domain"), F.lit(""))
    if foreign == "ip":
        return F.coalesce(F.col("ip"), F.concat(F.lit("domain:"), F.coalesce(F.col("domain"), F.lit(""))))
    raise ValueError(f"unknown foreign rule {foreign!r}")
