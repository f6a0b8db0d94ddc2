"""The options every job shares, and how a job's configuration and Spark session are made from
them: used by the console command (``cli.py``), each analysis's ``cli.py`` and ``jobs/*.py``.

Configuration layers, lowest first: the config class's defaults <- ``--config`` files (in order)
<- the command-line options <- ``--set key=value``.
"""

from __future__ import annotations

import argparse
import dataclasses
import typing
from typing import Any, TypeVar

from quiltdetect.common.config import (
    JobConfig,
    Option,
    merge_settings,
    options_of,
    parse_override,
    read_yaml,
    scalar_type,
)
from quiltdetect.common.paths import absolute, input_paths

T = TypeVar("T")


def add_io_options(parser: argparse.ArgumentParser) -> None:
    """The options every analysis shares: the inputs, the output and the input columns (the
    fields of ``JobConfig`` whose declaration offers them to every job command), and
    --config/--set/--master, which layer settings."""
    for name, opt in options_of(JobConfig).items():
        if _shared(opt):
            _add_option(parser, JobConfig, name, opt)
    parser.add_argument("--config", action="append", metavar="FILE", type=absolute,
                        help="YAML file of options (see conf/); repeatable, later files win")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one option, e.g. --set m=80 or --set spark.sql.shuffle.partitions=64")
    parser.add_argument("--master", help="Spark master for the console command (default local[*])")


def _shared(opt: Option) -> bool:
    """Whether an option of ``JobConfig`` is on every job command (``add_io_options``')."""
    return opt.cli and opt.commands is None


def config_files(args: argparse.Namespace) -> dict[str, Any]:
    """The --config files merged in order (later files win; ``spark`` maps merge key by key)."""
    merged: dict[str, Any] = {}
    for path in getattr(args, "config", None) or []:
        layer = read_yaml(path)
        spark = {**merged.get("spark", {}), **(layer.get("spark") or {})}
        merged.update(layer)
        if spark:
            merged["spark"] = spark
    return merged


def add_config_options(parser: argparse.ArgumentParser, cls: type, command: str) -> None:
    """The command-line options of the config class ``cls`` that the command ``command`` offers
    (as typed after ``quiltdetect``: ``reuse detect``), each made from its field's declaration
    (``common.config.option``): which commands offer it, its flags, help, choices and how it is
    read. The options every job shares are ``add_io_options``'. ``show_defaults`` then adds
    each default to --help."""
    declared = options_of(cls)
    own = {f.name for f in dataclasses.fields(JobConfig)}
    for name, opt in declared.items():
        if opt.offered_to(command) and not (name in own and _shared(opt)):
            _add_option(parser, cls, name, opt)


def _add_option(parser: argparse.ArgumentParser, cls: type, name: str, opt: Option) -> None:
    """The argparse option of the field ``name`` of ``cls``, from its declaration ``opt``."""
    how: dict[str, Any] = {"dest": name, "help": opt.help}
    if opt.action in ("store_true", "store_false"):
        how.update(action=opt.action, default=None)
    else:
        if opt.action:
            how["action"] = opt.action
        kind, _ = scalar_type(typing.get_type_hints(cls)[name])
        if opt.parse is None and kind in (int, float):
            how["type"] = kind
        if opt.choices and (kind is not None or opt.action == "append"):  # not a list given as one text
            how["choices"] = opt.choices
        if opt.metavar:
            how["metavar"] = opt.metavar
    parser.add_argument(*opt.spellings(name), **how)


def command_line_fields(cls: type) -> tuple[str, ...]:
    """The fields of ``cls`` that a command line may set (a command offers some of them)."""
    return tuple(options_of(cls))


def config_from_args(cls: type[T], args: argparse.Namespace, *layers: dict[str, Any]) -> T:
    """Defaults <- ``layers`` (a preset) <- --config files <- the command-line options <- --set.

    Every field of ``cls`` with a command-line option is read from ``args`` (its option's
    ``parse`` turns the typed string into the value); options the user did not give (None)
    leave the lower layers alone.
    """
    file_layer = config_files(args)
    cli_layer: dict[str, Any] = {}
    declared = options_of(cls)
    for name in command_line_fields(cls):
        value = getattr(args, name, None)
        if value is not None:
            parse = declared[name].parse if name in declared else None
            cli_layer[name] = parse(value) if parse is not None else value
    if getattr(args, "master", None):
        cli_layer["spark.master"] = args.master
    overrides = dict(parse_override(item) for item in getattr(args, "set", []) or [])
    return merge_settings(cls, *layers, file_layer, cli_layer, overrides)


def run_job(job: Any, cfg: Any, *, local: bool) -> int:
    """What every command does with its configuration: start Spark, run the job (a
    ``lifecycle.Job`` class), print its summary."""
    spark = start_job(f"quiltdetect-{job.name.replace(' ', '-')}", cfg, local=local)
    print(job.run(spark, cfg).summary(), flush=True)
    return 0


def start_job(app_name: str, cfg: Any, *, local: bool):
    """Check inputs and output (local ones before Spark starts), then build the session."""
    from quiltdetect.common import fs
    from quiltdetect.common.session import build_session
    from quiltdetect.documents.inputs import resolve_inputs

    files = resolve_inputs(None, cfg.inputs, cfg.input_format)
    fs.check_output(None, cfg.output, overwrite=cfg.overwrite, inputs=input_paths(cfg))
    if fs.is_local(cfg.output):
        from quiltdetect.common.runstate import refuse_taken

        refuse_taken(cfg.output)
    if not cfg.overwrite and fs.is_local(cfg.output) and all(fs.is_local(p) for p in cfg.inputs):
        from quiltdetect.common.finished import FinishedRun, resolve_previous
        from quiltdetect.common.runstate import refuse_other_runs
        from quiltdetect.documents.table import ingestion_key

        found = resolve_previous(None, cfg.previous, cfg.output) if getattr(cfg, "previous", "") else ""
        previous = FinishedRun.at(None, found) if found else None
        refuse_other_runs(None, cfg.output, ingestion_key(None, cfg, files, previous), None)
    return build_session(app_name, cfg.spark, local=local)
