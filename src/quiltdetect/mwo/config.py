"""MwoConfig: every setting of the MWO index and self-join (definitions §5), defaults in conf/mwo.yaml."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from quiltdetect.common.config import (
    BOTH_COMPILERS,
    ConfigError,
    JobConfig,
    check_int,
    local_spark_defaults,
    option,
)

__all__ = ["MwoConfig"]


def _check_fraction(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        flag = "-t" if name == "t" else "--" + name.replace("_", "-")
        raise ConfigError(f"{flag} must be a number in [0, 1], got {value!r}")
    return float(value)


@dataclass
class MwoConfig(JobConfig):
    """Parameters of ``mwo index`` and ``mwo join``, plus I/O."""

    t: float = option(0.5, help="near-duplicates have MWO >= t")
    min_weight_ratio: float = option(0.0, help="dynamic threshold: drop terms below this fraction of the mean "
                                               "term weight")
    index_threshold: float = option(0.1, help="keep prefix postings for queries with t >= this")
    shared_prefix_terms: int = option(8, metavar="L", help="l-prefix filter: candidates share L terms of their "
                                                           "extended prefixes (1 = plain prefix; lossless for every "
                                                           "L, larger L: longer prefixes, fewer candidates)")
    broadcast_order_terms: int = option(5_000_000, cli=False, help="canonicalise by broadcasting the global "
                                                                   "order up to this many terms; 0: never")
    block_size: int = option(2000, metavar="N", help="records per block of the self-join (two blocks meet in one "
                                                     "task; memory grows with N^2)")
    top: int = option(10, help="pairs shown in the summary")
    # Both JIT compilers: the index and the join move every record term through the JVM as list
    # elements, where C2's code pays for its compile time (common/config.py, C1_ONLY).
    spark: dict[str, Any] = field(default_factory=lambda: local_spark_defaults(BOTH_COMPILERS))

    def validate(self, *, need_io: bool = True) -> MwoConfig:
        """Fail with a message naming the option when a value cannot work."""
        self.validate_io(need_io=need_io)
        self.t = _check_fraction("t", self.t)
        self.index_threshold = _check_fraction("index_threshold", self.index_threshold)
        if isinstance(self.min_weight_ratio, bool) or not isinstance(self.min_weight_ratio, (int, float)) \
                or self.min_weight_ratio < 0:
            raise ConfigError(f"--min-weight-ratio must be a number >= 0, got {self.min_weight_ratio!r}")
        self.min_weight_ratio = float(self.min_weight_ratio)
        check_int("shared_prefix_terms", self.shared_prefix_terms, 1)
        check_int("broadcast_order_terms", self.broadcast_order_terms, 0)
        check_int("block_size", self.block_size, 1)
        check_int("top", self.top, 0)
        return self
