"""The options every job shares, and how a job's configuration and Spark session are made from
them: used by the console command (``cli.py``), each analysis's ``cli.py`` and ``jobs/*.py``.

Configuration layers, lowest first: the config class's defaults <- ``--config`` files (in order)
<- the command-line options <- ``--set key=value``.
"""

from __future__ import annotations

import argparse
from typing import Any, TypeVar

from quiltdetect.common.config import INPUT_FORMATS, merge_settings, parse_override, read_yaml
from quiltdetect.common.paths import absolute, input_paths

T = TypeVar("T")


def add_io_options(parser: argparse.ArgumentParser) -> None:
    """--input/--input-format/--output/--config/--set/--overwrite, shared by every analysis."""
    parser.add_argument("--input", action="append", dest="inputs", metavar="PATH",
                        help="a file, directory or glob; local or a Hadoop URI (s3a://, hdfs://, file://); repeatable")
    parser.add_argument("--input-format", choices=INPUT_FORMATS,
                        help="how to read the inputs (default: inferred per file from its name)")
    parser.add_argument("--output", metavar="DIR", help="directory for the results (local or Hadoop URI)")
    parser.add_argument("--config", action="append", metavar="FILE", type=absolute,
                        help="YAML file of options (see conf/); repeatable, later files win")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one option, e.g. --set m=80 or --set spark.sql.shuffle.partitions=64")
    parser.add_argument("--overwrite", action="store_true", default=None, help="replace an existing output")
    parser.add_argument("--master", help="Spark master for the console command (default local[*])")
    for name, what in (("id", "the document id"), ("url", "the URL"), ("text", "the text"),
                       ("ip", "the server's IP address")):
        parser.add_argument(f"--{name}-col", metavar="COLUMN", help=f"the column of a Parquet/JSONL input holding {what}")


IO_OPTIONS = ("inputs", "input_format", "output", "overwrite", "id_col", "url_col", "text_col", "ip_col")


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


def config_from_args(cls: type[T], args: argparse.Namespace, options: tuple[str, ...]) -> T:
    """Defaults <- --config file <- the given command-line options <- --set overrides.

    ``options`` names the attributes of ``args`` that map onto fields of ``cls``; options
    the user did not give (None) leave the lower layers alone.
    """
    file_layer = config_files(args)
    cli_layer: dict[str, Any] = {}
    for name in IO_OPTIONS + options:
        value = getattr(args, name, None)
        if value is not None:
            cli_layer[name] = value
    if getattr(args, "master", None):
        cli_layer["spark.master"] = args.master
    overrides = dict(parse_override(item) for item in getattr(args, "set", []) or [])
    return merge_settings(cls, file_layer, cli_layer, overrides)


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
    from quiltdetect.ingest.read import resolve_inputs

    files = resolve_inputs(None, cfg.inputs, cfg.input_format)
    fs.check_output(None, cfg.output, overwrite=cfg.overwrite, inputs=input_paths(cfg))
    if fs.is_local(cfg.output):
        from quiltdetect.common.runstate import refuse_taken

        refuse_taken(cfg.output)
    if not cfg.overwrite and fs.is_local(cfg.output) and all(fs.is_local(p) for p in cfg.inputs):
        from quiltdetect.common.runstate import refuse_other_runs
        from quiltdetect.ingest.table import ingestion_key

        refuse_other_runs(None, cfg.output, ingestion_key(None, cfg, files), None)
    return build_session(app_name, cfg.spark, local=local)
