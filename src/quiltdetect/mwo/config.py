"""MwoConfig: every setting of the MWO index and self-join (definitions §5), defaults in conf/mwo.yaml."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from quiltdetect.common.config import BOTH_COMPILERS, JobConfig, local_spark_defaults, option

__all__ = ["MwoConfig", "MwoQueryConfig"]

JOIN = ("mwo join",)  # the options of the self-join alone (`mwo index` offers the others)


@dataclass
class MwoConfig(JobConfig):
    """Parameters of ``mwo index`` and ``mwo join``, plus I/O."""

    t: float = option(0.5, commands=JOIN, low=0, high=1, help="near-duplicates have MWO >= t")
    min_weight_ratio: float = option(0.0, low=0, help="dynamic threshold: drop terms below this fraction of the mean "
                                                      "term weight")
    index_threshold: float = option(0.1, low=0, high=1, help="keep prefix postings for queries with t >= this")
    shared_prefix_terms: int = option(8, commands=JOIN, low=1, metavar="L",
                                      help="l-prefix filter: candidates share L terms of their extended prefixes "
                                           "(1 = plain prefix; lossless for every L, larger L: longer prefixes, "
                                           "fewer candidates)")
    broadcast_order_terms: int = option(5_000_000, cli=False, low=0, help="canonicalise by broadcasting the global "
                                                                          "order up to this many terms; 0: never")
    block_size: int = option(2000, commands=JOIN, low=1, metavar="N",
                             help="records per block of the self-join (two blocks meet in one task; memory grows "
                                  "with N^2)")
    top: int = option(10, low=0, help="pairs shown in the summary")
    # Both JIT compilers: the index and the join move every record term through the JVM as list
    # elements, where C2's code pays for its compile time (common/config.py, C1_ONLY).
    spark: dict[str, Any] = field(default_factory=lambda: local_spark_defaults(BOTH_COMPILERS))

    def validate(self, *, need_io: bool = True) -> MwoConfig:
        """Fail with a message naming the option when a value cannot work."""
        self.validate_io(need_io=need_io)
        self.t, self.index_threshold = float(self.t), float(self.index_threshold)
        self.min_weight_ratio = float(self.min_weight_ratio)
        return self


@dataclass
class MwoQueryConfig:
    """What ``mwo query`` shows of its answers (it reads an index, not a crawl)."""

    top: int = option(20, help="matches shown per page, 0 = all")
