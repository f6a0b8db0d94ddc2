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
