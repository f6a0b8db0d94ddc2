"""Typed configuration: dataclass defaults <- YAML file <- ``--set key=value`` overrides.

Each analysis defines one dataclass; this module loads, overrides, validates and dumps it.
Keys that start with ``spark.`` are Spark settings and go to the ``spark`` mapping.
"""

from __future__ import annotations

import dataclasses
import textwrap
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

from quiltdetect.common.errors import ConfigError
from quiltdetect.common.paths import PATH_KEY, resolve_paths

T = TypeVar("T")


# The JVM options of the console command's local JVM (spark.driver.defaultJavaOptions), per job:
# C1 only for jobs whose JVM work is short (their tables hold a few large binary values per row),
# both compilers for jobs that move millions of list elements through the JVM (the ratios per job:
# docs/performance.md, "JIT"). In defaultJavaOptions, so a user's spark.driver.extraJavaOptions
# add to it, and --set spark.driver.defaultJavaOptions=... picks either. C1 alone reserves a code
# cache that a long run fills (the JIT then stops): the size JDK reserves with both.
C1_ONLY = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
BOTH_COMPILERS = ""  # the JVM's own default: tiered C1 and C2, a 240 MB code cache
# The Python worker daemon of the console's local sessions: PySpark's, importing PySpark compiled
# and reading the archives on the workers' sys.path once, not at every task (common/pydaemon.py).
# Not passed on under spark-submit (session.build_session).
PYTHON_DAEMON = "quiltdetect.common.pydaemon"


def local_spark_defaults(java_options: str = C1_ONLY) -> dict[str, Any]:
    """Spark settings for the console command on a laptop-sized machine (local mode)."""
    return {
        "spark.master": "local[*]",
        "spark.driver.memory": "4g",
        "spark.driver.defaultJavaOptions": java_options,
        "spark.python.daemon.module": PYTHON_DAEMON,
        "spark.sql.shuffle.partitions": 32,
        "spark.sql.execution.arrow.maxRecordsPerBatch": 2000,
        "spark.log.level": "WARN",
    }


INPUT_FORMATS = ("warc", "wet", "parquet", "jsonl")
OPTION_KEY = "quiltdetect.option"  # a config field's metadata key: its Option


@dataclasses.dataclass(frozen=True)
class Option:
    """How a config field is given, described and checked: declared once, on the field
    (``option``), and read by the command-line parser (``options.add_config_options``, which
    gives each command the options whose declaration offers it), ``--help``'s defaults
    (``show_defaults``), the conf/*.yaml templates (``config_template``), the check of every
    value's range and choices (``check_options``) and the settings' loader, which also takes the
    field's older names (``aliases``)."""

    help: str  # what it does, for --help and the YAML template
    flags: tuple[str, ...] = ()  # its command-line spellings; () = --field-name (-k for one letter)
    metavar: str | None = None
    choices: tuple[Any, ...] | None = None  # the values allowed (each value, for a list field)
    action: str | None = None  # "store_true" / "store_false": a flag that sets a bool; "append": repeatable
    parse: Callable[[str], Any] | None = None  # how the command line's string becomes the value
    aliases: tuple[str, ...] = ()  # older names, still accepted in --config files, --set and the API
    cli: bool = True  # False: given in --config files, --set and the API only (unless ``commands`` names some)
    # The commands whose command line offers it, as typed after ``quiltdetect`` ("reuse detect");
    # None: every command its configuration serves (each job command, for JobConfig's fields).
    commands: tuple[str, ...] | None = None
    low: float | None = None  # the smallest value allowed (of each value, for a list field)
    high: float | None = None  # the largest
    low_open: bool = False  # low itself is refused: values > low
    unit: str = ""  # what the bounds count, named when a value is above them ("supershingles")

    def spellings(self, name: str) -> tuple[str, ...]:
        """The command-line flags of the field ``name``."""
        return self.flags or (_flag(name),)

    def offered_to(self, command: str) -> bool:
        """Whether ``command`` (as typed after ``quiltdetect``: ``mwo join``), built from a
        configuration holding this field, offers it on its command line."""
        return command in self.commands if self.commands is not None else self.cli


def option(default: Any = dataclasses.MISSING, *, help: str, default_factory: Any = dataclasses.MISSING,  # noqa: A002
           path: str | None = None, **how: Any) -> Any:
    """A config field with its option declared once: ``help``, and optionally ``flags``,
    ``metavar``, ``choices``, ``action``, ``parse``, ``aliases``, ``cli``, ``commands``, ``low``,
    ``high``, ``low_open``, ``unit`` (``Option``); ``path``: it names a path of that kind
    (``common.paths.path_field``)."""
    metadata: dict[str, Any] = {OPTION_KEY: Option(help, **how)}
    if path is not None:
        metadata[PATH_KEY] = path
    return dataclasses.field(default=default, default_factory=default_factory, metadata=metadata)


def options_of(cls: type) -> dict[str, Option]:
    """Each field of the config class ``cls`` declared with ``option``, in declaration order."""
    return {f.name: f.metadata[OPTION_KEY] for f in dataclasses.fields(cls) if OPTION_KEY in f.metadata}


def aliases_of(cls: type) -> dict[str, str]:
    """Each older name of a field of ``cls`` -> the field's name."""
    return {alias: name for name, opt in options_of(cls).items() for alias in opt.aliases}


def flag_of(cls: type, name: str) -> str:
    """The command-line flag that names the field ``name`` of the config class ``cls`` in
    messages: its option's first spelling (``--theta`` for the sweep's ``thetas``, ``-k`` for
    ``k``), else ``--name-with-dashes``."""
    opt = options_of(cls).get(name)
    return opt.spellings(name)[0] if opt is not None else _flag(name)


@dataclasses.dataclass
class JobConfig:
    """Settings every job shares: inputs, output, ingestion limits and Spark settings."""

    inputs: list[str] = option(path="input", default_factory=list, flags=("--input",), action="append",
                               metavar="PATH", help="a file, directory or glob; local or a Hadoop URI "
                                                    "(s3a://, hdfs://, file://); repeatable")
    input_format: str | None = option(None, choices=INPUT_FORMATS,
                                      help="how to read the inputs (default: inferred per file from its name)")
    output: str | None = option(None, path="output", metavar="DIR",
                                help="directory for the results (local or Hadoop URI)")
    max_payload_bytes: int = option(50_000_000, cli=False, low=1,
                                    help="WARC payloads larger than this are skipped and counted")
    overwrite: bool = option(False, action="store_true", help="replace an existing output")
    hadoop_reader: bool = option(False, cli=False, help="read local WARC/WET through Spark's binaryFile source "
                                                        "(as remote files are)")
    write_rejects: bool = option(False, action="store_true", cli=False, commands=("ingest",),
                                 help="also write skipped records with their reason to <output>/rejects/")
    id_col: str = option("id", metavar="COLUMN", help="the column of a Parquet/JSONL input holding the document id")
    url_col: str = option("url", metavar="COLUMN", help="the column of a Parquet/JSONL input holding the URL")
    text_col: str = option("text", metavar="COLUMN", help="the column of a Parquet/JSONL input holding the text")
    ip_col: str = option("ip", metavar="COLUMN",
                         help="the column of a Parquet/JSONL input holding the server's IP address")
    date_col: str = option("date", metavar="COLUMN",
                           help="the column of a Parquet/JSONL input holding the crawl date (ISO 8601; as WARC-Date)")
    spark: dict[str, Any] = dataclasses.field(default_factory=local_spark_defaults)

    def columns(self) -> dict[str, str]:
        """Which input column holds each of id, url, text, ip, date."""
        return {"id": self.id_col, "url": self.url_col, "text": self.text_col, "ip": self.ip_col,
                "date": self.date_col}

    def validate_io(self, *, need_io: bool = True) -> None:
        """Fail with a message naming the option when an input/output setting cannot work.

        First every field of the job's dataclass is checked against its declared type
        (:func:`check_types`), so a value of the wrong kind from ``--set`` or a ``--config``
        file is one line saying what to give, before anything uses it; then against its
        declared range and choices (:func:`check_options`).
        """
        if isinstance(self.inputs, str):
            self.inputs = [self.inputs]
        if not isinstance(self.inputs, list) or not all(isinstance(p, str) for p in self.inputs):
            raise ConfigError(f"--input must be a path or a list of paths, got {self.inputs!r}")
        if self.output is not None and not isinstance(self.output, str):
            raise ConfigError(f"--output must be a path (a string), got {self.output!r}")
        check_types(self)
        resolve_paths(self)  # every path field absolute from here on (common/paths.py)
        if need_io and not self.inputs:
            raise ConfigError("no input: give --input PATH (a file, directory or glob; repeatable)")
        if need_io and not self.output:
            raise ConfigError("no output: give --output DIR")
        check_options(self)
        named = [c for c in self.columns().values() if c]
        if len(named) != 5 or len(set(named)) != 5:
            raise ConfigError(f"--id-col, --url-col, --text-col, --ip-col and --date-col must name five different "
                              f"columns, got {self.columns()}")


def _flag(name: str) -> str:
    return f"-{name}" if len(name) == 1 else "--" + name.replace("_", "-")


def scalar_type(kind: Any) -> tuple[type | None, bool]:
    """(bool | int | float | str, optional) for a scalar field type; (None, _) for others."""
    optional = False
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        optional = len(args) < len(typing.get_args(kind))
        if len(args) != 1:
            return None, optional
        kind = args[0]
    return (kind if kind in (bool, int, float, str) else None), optional


def _item_kind(kind: Any) -> type | None:
    """The element type of a ``list[bool | int | float | str]`` field, else None."""
    if typing.get_origin(kind) is list:
        (item,) = typing.get_args(kind) or (None,)
        return item if item in (bool, int, float, str) else None
    return None


_WHAT = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def _is(kind: type, value: Any) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, str)


def check_types(config: Any) -> None:
    """Every field of a config dataclass holds a value of its declared type, or a ConfigError.

    Generic over the dataclass (each analysis' fields included): ``bool`` fields take only
    true/false (``--set overwrite=maybe`` is an error, not "truthy"), ``int`` fields integers,
    ``float`` fields numbers, ``str`` fields strings, ``X | None`` also null; list fields of
    those take a list of them (a list of strings also one string, which the jobs split).
    Ranges and choices are the options' declarations (``check_options``).
    """
    hints = typing.get_type_hints(type(config))
    for field in dataclasses.fields(config):
        kind, value = hints.get(field.name), getattr(config, field.name)
        scalar, optional = scalar_type(kind)
        if scalar is not None:
            if value is None and optional:
                continue
            if not _is(scalar, value):
                null = " (or null)" if optional else ""
                raise ConfigError(f"{_flag(field.name)} must be {_WHAT[scalar]}{null}, got {value!r}")
            continue
        item = _item_kind(kind)
        if item is None:
            continue
        if item is str and isinstance(value, str):
            continue
        if not isinstance(value, list) or not all(_is(item, v) for v in value):
            plural = {bool: "true/false values", int: "integers", float: "numbers", str: "strings"}[item]
            raise ConfigError(f"{_flag(field.name)} must be a list of {plural}, got {value!r}")


def check_options(config: Any) -> None:
    """Every value of a config dataclass within its option's declared range (``Option.low``,
    ``high``) and among its ``choices``, or a ConfigError naming the option as it is typed.
    Generic over the dataclass: each job's ``validate_io`` calls it after ``check_types``, so
    the values are of their declared types here; each value of a list field is checked, and
    null (where ``check_types`` let it be) is left alone."""
    cls = type(config)
    for name, opt in options_of(cls).items():
        value = getattr(config, name)
        if not isinstance(value, list):
            if value is not None:
                check_value(cls, name, value)
            continue
        bad = [v for v in value if opt.choices is not None and v not in opt.choices]
        if bad:
            raise ConfigError(f"{flag_of(cls, name)} {','.join(map(str, bad))}: use some of "
                              f"{', '.join(map(str, opt.choices or ()))}")
        for v in value:
            check_value(cls, name, v, each=True)


def check_value(cls: type, name: str, value: Any, *, each: bool = False, what: str | None = None) -> None:
    """One value of the field ``name`` of ``cls`` among its declared choices and within its
    declared bounds, or a ConfigError saying what to give. ``each``: a value of a list field
    (``--theta values must be ...``); ``what``: the name to give instead of the option's flag
    (``--pivot k``)."""
    opt = options_of(cls)[name]
    flag = what or flag_of(cls, name)
    if opt.choices is not None and not each and value not in opt.choices:
        raise ConfigError(f"{flag} {value!r}: use one of {', '.join(map(str, opt.choices))}")
    low_ok = opt.low is None or (value > opt.low if opt.low_open else value >= opt.low)
    high_ok = opt.high is None or value <= opt.high  # NaN is neither: it is within no bounds
    if low_ok and high_ok:
        return
    hint = typing.get_type_hints(cls)[name]
    whole = (scalar_type(hint)[0] or _item_kind(hint)) is int
    must = f"{flag} values must be" if each else f"{flag} must be"
    if whole and low_ok:
        raise ConfigError(f"{must} at most {opt.high}{f' ({opt.unit})' if opt.unit else ''}, got {value!r}")
    noun = ("integers" if whole else "numbers") if each else ("an integer" if whole else "a number")
    if whole or opt.high is None:
        bounds = f"{'>' if opt.low_open else '>='} {opt.low}"
    elif opt.low is None:
        bounds = f"<= {opt.high}"
    else:
        bounds = f"in {'(' if opt.low_open else '['}{opt.low}, {opt.high}]"
    null = " or null" if scalar_type(hint)[1] and not each else ""
    raise ConfigError(f"{must} {noun} {bounds}{null}, got {value!r}")


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
        raise ConfigError(f"--config {path}: not valid YAML{_yaml_where(exc)}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"--config {path}: not UTF-8 text (byte {exc.start})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"--config {path}: expected a mapping of option: value")
    return data


def _yaml_where(exc: yaml.YAMLError) -> str:
    """`` at line L, column C: problem`` on one line (PyYAML's message spans several)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc)
    problem = " ".join(str(problem).split())
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{where}: {problem}"


def merge_settings(cls: type[T], *layers: dict[str, Any]) -> T:
    """Build ``cls`` from its defaults with each mapping layered on top, in order.

    Unknown keys fail with the list of known ones; ``spark.*`` keys collect in ``spark``; a
    field's older name (``Option.aliases``) is the field.
    """
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    aliases = aliases_of(cls)
    values: dict[str, Any] = {}
    spark: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            key = aliases.get(key, key)
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


def shown_default(value: Any) -> str:
    """A default as ``--help`` shows it (lists comma-separated, as the options take them)."""
    if isinstance(value, (list, tuple)):
        return ",".join(shown_default(v) for v in value)
    return str(value)


def show_defaults(parser: Any, cls: type, fields: dict[str, str] | None = None) -> None:
    """Append ``(default: X)`` to the help of every option of the argparse ``parser`` that sets a
    field of the config class ``cls``, with X read from ``cls``'s own defaults: the config class is
    the one place a default is written, so ``--help`` cannot drift from behaviour.

    ``fields`` maps option destinations named otherwise (``ks_text`` -> ``ks``). Options whose
    default is None (computed at run time) and flags whose default is what leaving them out
    means (``store_true`` off, ``store_false`` on), and empty lists, are left as they are.
    """
    instance = cls()
    defaults = {f.name: getattr(instance, f.name) for f in dataclasses.fields(cls)}
    for action in parser._actions:
        name = (fields or {}).get(action.dest, action.dest)
        if name not in defaults or action.help in (None, "==SUPPRESS=="):
            continue
        value = defaults[name]
        if value in (None, "", [], ()) or (isinstance(value, bool) and action.const is (not value)):
            continue
        action.help = f"{action.help} (default: {shown_default(value).replace('%', '%%')})"
        action.config_field = name  # read by the test that checks shown defaults against behaviour


# What the spark section of a conf/*.yaml template says beside a setting, by setting and value.
_SPARK_NOTES = {
    ("spark.driver.defaultJavaOptions", C1_ONLY): "C1 only, its code cache at the JDK default: docs/performance.md, \"JIT\"",
    ("spark.driver.defaultJavaOptions", BOTH_COMPILERS): "both JIT compilers (the quilt job runs C1 only): "
                                                          "docs/performance.md, \"JIT\"",
    ("spark.python.daemon.module", PYTHON_DAEMON): "PySpark's worker daemon without its per-task costs: "
                                                   "docs/performance.md, \"What every Python task paid\"",
}


def _yaml_value(value: Any) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=1_000).strip()
    return text.removesuffix("\n...").removesuffix("...").strip()


def config_template(cls: type, command: str, source: str) -> str:
    """conf/<command>.yaml: every setting of the config class ``cls`` with its default and what
    it does, from the class's own declarations, then the local Spark settings. ``source``: the
    class's file, named in the header. Generated (``python -m quiltdetect.conftemplates``), and
    a test checks the committed files equal what this gives."""
    about = " ".join((cls.__doc__ or "").split())
    header = (f"Defaults of `quiltdetect {command}`. {about} Generated from {cls.__name__} ({source}) by "
              "`python -m quiltdetect.conftemplates`: edit the class, not this file. Use as a template: "
              "`--config my.yaml`; command-line options and `--set key=value` override what a file says.")
    lines = [f"# {line}" for line in textwrap.wrap(header, 94)] + [""]
    declared = options_of(cls)
    defaults = cls()
    for f in dataclasses.fields(cls):
        if f.name == "spark":
            continue
        entry = f"{f.name}: {_yaml_value(getattr(defaults, f.name))}"
        opt = declared.get(f.name)
        if opt is not None:
            flag = f"{opt.spellings(f.name)[0]}: " if opt.cli else ""
            entry = f"{entry:<27} # {flag}{opt.help}"
        lines.append(entry)
    lines += ["", "# Spark settings for the console command (local mode). Under spark-submit, its own",
              "# --master/--conf win; see conf/cluster.yaml and conf/spark-defaults.conf for a cluster.", "spark:"]
    for key, value in defaults.spark.items():
        note = _SPARK_NOTES.get((key, value))
        lines.append(f"  {key}: {_yaml_value(value)}" + (f"  # {note}" if note else ""))
    return "\n".join(lines) + "\n"
