"""Paths a user gives, made absolute once, where options are read.

A relative path means "relative to the directory I typed the command in", and only the option
layer knows that directory for sure: Spark resolves a relative table location against its
warehouse directory, Hadoop against the user's home on HDFS, a worker against its own working
directory. So every path of a configuration (``--input``, ``--output``, ``--previous``,
``--labeled``, ``--stop-chunks``: the config fields declared with :func:`path_field`) and every
path-valued option of a command (``--config``, ``review --run``, ``--export``, ...) is made
absolute here, and nothing below this layer sees a relative one. URIs (``s3a://``, ``hdfs://``,
``file://``) are kept as given. No Spark here: this runs before a JVM starts.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
from typing import Any

from quiltdetect.common.errors import ConfigError

# A URI names its scheme (two characters or more: ``C:/x`` is a Windows drive) and a slash
# after the colon (``s3a://b/k``, ``file:/a``, ``hdfs:///a``). A local file may have colons in
# its name (``t:12:00.jsonl``): without the slash it is a path.
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:/")

PATH_KEY = "path"  # the metadata key of a path field; its value: "input", "output" or "run"


def is_uri(path: str) -> bool:
    """True for ``scheme:/...`` (s3a://, hdfs://, file:/, gs://); False for a file-system path."""
    return bool(_URI.match(path))


def absolute(path: str) -> str:
    """A local path made absolute against the working directory (``~`` expanded); a URI, or an
    empty string, as given. Idempotent. Glob characters stay as they are."""
    if not isinstance(path, str) or not path or is_uri(path):
        return path
    return os.path.abspath(os.path.expanduser(path))


def absolute_if_file(value: str) -> str:
    """``absolute`` for a value that names an existing local file, else the value as given (an
    option that takes a file, a URL or an id: ``mwo query --page``)."""
    return absolute(value) if os.path.isfile(os.path.expanduser(value)) else value


def path_field(kind: str, default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING) -> Any:
    """A config field holding a path (or a list of them) that :func:`resolve_paths` makes absolute.
    ``kind`` says what it names: ``"input"`` (read), ``"output"`` (a directory the run writes),
    ``"run"`` (a finished run read as an input, or a glob of runs of which the job takes one
    other than its output: ``finished.resolve_previous``)."""
    return dataclasses.field(default=default, default_factory=default_factory, metadata={PATH_KEY: kind})


def resolve_paths(config: Any) -> None:
    """Make every path field of a config dataclass absolute, in place (lists item by item), and
    check that a local output directory can be made: no existing part of it is a file."""
    for field in dataclasses.fields(config):
        kind = field.metadata.get(PATH_KEY)
        value = getattr(config, field.name)
        if kind is None or value is None:
            continue
        if isinstance(value, list):
            setattr(config, field.name, [absolute(v) for v in value])
        elif isinstance(value, str):
            setattr(config, field.name, absolute(value))
            if kind == "output" and value:
                check_output_dir(getattr(config, field.name), f"--{field.name.replace('_', '-')} {value}")


def input_paths(config: Any) -> list[str]:
    """Every path a configuration reads (its ``path_field("input")`` fields: the inputs, a
    labeled corpus, stop-chunk files; and an update's previous run unless it is a glob of runs,
    which never picks the output), as given to it."""
    found: list[str] = []
    for field in dataclasses.fields(config):
        kind = field.metadata.get(PATH_KEY)
        if kind in ("input", "run"):
            value = getattr(config, field.name)
            found += [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str) and v
                      and not (kind == "run" and glob.has_magic(v))]
    return found


def check_output_dir(path: str, option: str) -> None:
    """A local directory a run will make (with its parents): refused when an existing part of it
    is not a directory. ``option`` names it as the user typed it."""
    if is_uri(path) and not path.startswith("file:"):
        return
    local = path.split(":", 1)[1] if path.startswith("file:") else path
    probe = os.path.abspath(local)
    while not os.path.lexists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            return
        probe = parent
    if probe == os.path.abspath(local) and not os.path.isdir(probe):
        raise ConfigError(f"{option} is a file; give a directory")
    if not os.path.isdir(probe):
        raise ConfigError(f"{option}: {probe} is a file, not a directory; give a directory")


def output_file(path: str, option: str) -> str:
    """A local file a command will write (an export, a written config): absolute, its directory
    existing, or a ConfigError naming the option."""
    resolved = absolute(path)
    if is_uri(resolved):
        return resolved
    parent = os.path.dirname(resolved)
    if not os.path.isdir(parent):
        raise ConfigError(f"{option} {path}: no such directory {parent}; make it first")
    if os.path.isdir(resolved):
        raise ConfigError(f"{option} {path} is a directory; give a file name")
    return resolved
