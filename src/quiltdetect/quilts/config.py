"""QuiltConfig: every setting of the quilt job, with SPEC §1's defaults."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from quiltdetect.common.config import ConfigError

FOREIGN_CHOICES = ("none", "host", "domain", "ip")
INPUT_FORMATS = ("warc", "wet", "parquet", "jsonl")


def local_spark_defaults() -> dict[str, Any]:
    """Spark settings for the console command on a laptop-sized machine (local mode)."""
    return {
        "spark.master": "local[*]",
        "spark.driver.memory": "4g",
        "spark.sql.shuffle.partitions": 32,
        "spark.sql.execution.arrow.maxRecordsPerBatch": 2000,
        "spark.log.level": "WARN",
    }


@dataclass
class QuiltConfig:
    """Parameters of a quilt run: the paper's (k, m, c, θ), the input, the output and Spark."""

    inputs: list[str] = field(default_factory=list)
    input_format: str | None = None  # inferred per file from its name when None
    output: str | None = None
    k: int = 5  # gram length in words
    m: int = 50  # a patch gram occurs in at most m documents
    c: int = 4  # a quilt has at least c sources
    theta: float = 0.5  # a quilt's patch fraction is at least theta
    foreign: str = "none"  # sources must live on another server: none | host | domain | ip
    count_occurrences: bool = False  # patchfrac over gram occurrences (figure 5) instead of sets
    max_payload_bytes: int = 50_000_000  # larger WARC payloads are skipped and counted
    overwrite: bool = False  # replace an existing output directory
    top: int = 10  # quilts shown in the end-of-run summary
    spark: dict[str, Any] = field(default_factory=local_spark_defaults)

    def validate(self, *, need_io: bool = True) -> QuiltConfig:
        """Fail with a message naming the option when a value cannot work."""
        if need_io and not self.inputs:
            raise ConfigError("no input: give --input PATH (a file, directory or glob; repeatable)")
        if need_io and not self.output:
            raise ConfigError("no output: give --output DIR")
        if self.input_format is not None and self.input_format not in INPUT_FORMATS:
            raise ConfigError(
                f"--input-format {self.input_format!r}: use one of {', '.join(INPUT_FORMATS)}"
            )
        for name, low in (("k", 1), ("m", 2), ("c", 1), ("top", 0), ("max_payload_bytes", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"-{name if len(name) == 1 else '-' + name.replace('_', '-')} "
                                  f"must be an integer >= {low}, got {value!r}")
        if isinstance(self.theta, bool) or not isinstance(self.theta, (int, float)) or not 0.0 <= self.theta <= 1.0:
            raise ConfigError(f"--theta must be a number in [0, 1], got {self.theta!r}")
        self.theta = float(self.theta)
        if self.foreign not in FOREIGN_CHOICES:
            raise ConfigError(f"--foreign {self.foreign!r}: use one of {', '.join(FOREIGN_CHOICES)}")
        if isinstance(self.inputs, str):
            self.inputs = [self.inputs]
        return self
