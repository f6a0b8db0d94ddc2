"""Typed configuration: dataclass defaults <- YAML file <- ``--set key=value`` overrides.

Each analysis defines one dataclass; this module loads, overrides, validates and dumps it.
Keys that start with ``spark.`` are Spark settings and go to the ``spark`` mapping.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, TypeVar

import yaml

T = TypeVar("T")


class ConfigError(ValueError):
    """A configuration value or option that the user must fix; the message says how."""


def local_spark_defaults() -> dict[str, Any]:
    """Spark settings for the console command on a laptop-sized machine (local mode)."""
    return {
        "spark.master": "local[*]",
        "spark.driver.memory": "4g",
        "spark.sql.shuffle.partitions": 32,
        "spark.sql.execution.arrow.maxRecordsPerBatch": 2000,
        "spark.log.level": "WARN",
    }


INPUT_FORMATS = ("warc", "wet", "parquet", "jsonl")


@dataclasses.dataclass
class JobConfig:
    """Settings every job shares: inputs, output, ingestion limits and Spark settings."""

    inputs: list[str] = dataclasses.field(default_factory=list)
    input_format: str | None = None  # inferred per file from its name when None
    output: str | None = None
    max_payload_bytes: int = 50_000_000  # larger WARC payloads are skipped and counted
    overwrite: bool = False  # replace an existing output directory
    hadoop_reader: bool = False  # read local WARC/WET through Spark's binaryFile source too
    write_rejects: bool = False  # write skipped records with their reason to <output>/rejects/
    spark: dict[str, Any] = dataclasses.field(default_factory=local_spark_defaults)

    def validate_io(self, *, need_io: bool = True) -> None:
        """Fail with a message naming the option when an input/output setting cannot work."""
        if isinstance(self.inputs, str):
            self.inputs = [self.inputs]
        if need_io and not self.inputs:
            raise ConfigError("no input: give --input PATH (a file, directory or glob; repeatable)")
        if need_io and not self.output:
            raise ConfigError("no output: give --output DIR")
        if self.input_format is not None and self.input_format not in INPUT_FORMATS:
            raise ConfigError(
                f"--input-format {self.input_format!r}: use one of {', '.join(INPUT_FORMATS)}"
            )
        check_int("max_payload_bytes", self.max_payload_bytes, 1)


def check_int(name: str, value: Any, low: int) -> None:
    """An integer option >= low, or a ConfigError naming the option as it is typed."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        flag = f"-{name}" if len(name) == 1 else "--" + name.replace("_", "-")
        raise ConfigError(f"{flag} must be an integer >= {low}, got {value!r}")


def parse_override(item: str) -> tuple[str, Any]:
    """``key=value`` -> (key, YAML-typed value): ``k=7`` gives 7, ``foreign=domain`` a string."""
    if "=" not in item:
        raise ConfigError(f"--set expects key=value, got {item!r}")
    key, raw = item.split("=", 1)
    key = key.strip()
    if not key:
        raise ConfigError(f"--set expects key=value, got {item!r}")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return key, value


def read_yaml(path: str | Path) -> dict[str, Any]:
    """The mapping in a YAML config file; a missing or malformed file is a ConfigError."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"--config {path}: no such file")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"--config {path}: not valid YAML ({exc})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"--config {path}: expected a mapping of option: value")
    return data


def merge_settings(cls: type[T], *layers: dict[str, Any]) -> T:
    """Build ``cls`` from its defaults with each mapping layered on top, in order.

    Unknown keys fail with the list of known ones; ``spark.*`` keys collect in ``spark``.
    """
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    values: dict[str, Any] = {}
    spark: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if key == "spark" and isinstance(value, dict):
                spark.update({str(k): v for k, v in value.items()})
            elif key.startswith("spark."):
                spark[key] = value
            elif key in fields:
                values[key] = value
            else:
                known = ", ".join(sorted(fields))
                raise ConfigError(f"unknown option {key!r}; known options: {known}")
    if "spark" in fields:
        base = dict(fields["spark"].default_factory())  # type: ignore[misc]
        base.update(spark)
        values["spark"] = base
    return cls(**values)


def to_yaml(config: Any) -> str:
    """The resolved configuration as YAML, written beside every output."""
    return yaml.safe_dump(dataclasses.asdict(config), sort_keys=False, allow_unicode=True)
