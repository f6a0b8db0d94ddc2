"""The foreign rule: which server a document lives on, so that a quilt's sources (definitions
§1) and a covering set's preferred donors (§3) can be required to live on another one. One
rule, one name (``foreign``), one set of choices, for the quilt job, the sweep and the phrases.

A configuration holds the rule's name (``foreign: host``, as its files and --set give it); each
job parses it once into a ``ForeignRule`` (the config's ``foreign_rule``) and passes that value
on: whether the rule is on, and the server it compares, are the rule's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from quiltdetect.common.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import Column

FOREIGN_CHOICES = ("none", "host", "domain", "ip")
# What each rule compares, as the summary names it.
_SERVERS = {"host": "host", "domain": "registered domain", "ip": "IP address or domain"}


@dataclass(frozen=True)
class ForeignRule:
    """One foreign rule, by name (one of ``FOREIGN_CHOICES``; any other name is refused)."""

    name: str = "none"

    def __post_init__(self) -> None:
        if self.name not in FOREIGN_CHOICES:
            raise ConfigError(f"--foreign {self.name!r}: use one of {', '.join(FOREIGN_CHOICES)}")

    @property
    def on(self) -> bool:
        """Whether sources (donors) must live on another server than their page: every rule but none."""
        return self.name != "none"

    @property
    def server_kind(self) -> str:
        """What the rule compares, in words ("registered domain"); "" for none."""
        return _SERVERS.get(self.name, "")

    def server_column(self) -> Column:
        """The server of each document under the rule (``common.reference.server_of`` is the
        same rule in plain Python): its host, its registered domain, or its IP address (else
        ``domain:`` its domain); a null when the rule is off. (PySpark is imported here, not
        above: the config classes import this module, and a command's start, ``--help``
        included, should not wait for PySpark.)"""
        from pyspark.sql import functions as F

        if not self.on:
            return F.lit(None).cast("string")
        if self.name == "ip":
            return F.coalesce(F.col("ip"), F.concat(F.lit("domain:"), F.coalesce(F.col("domain"), F.lit(""))))
        return F.coalesce(F.col(self.name), F.lit(""))  # the host or domain column
