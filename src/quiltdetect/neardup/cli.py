"""``quiltdetect neardup``: find near-duplicate pairs and clusters, or calibrate thresholds."""

from __future__ import annotations

import argparse
import os
from typing import Any

import yaml

from quiltdetect.common.config import ConfigError, show_defaults
from quiltdetect.common.paths import absolute, output_file
from quiltdetect.neardup.config import PRESETS, NearDupConfig
from quiltdetect.options import add_config_options, add_io_options, config_from_args, run_job


def add_parser(subparsers: Any) -> None:
    """Register ``neardup`` (and ``neardup calibrate``) on the top-level subparsers."""
    p = subparsers.add_parser("neardup", help="near-duplicate pairs and clusters (MinHash LSH; Broder, Charikar, Henzinger 2006)",
                              description="Find near-duplicate pages (definitions §2). `quiltdetect neardup calibrate "
                                          "--pairs FILE` chooses thresholds on labelled pairs instead.")
    p.add_argument("action", nargs="?", type=_action, default="run", metavar="{run,calibrate}",
                   help="run the job (default) or calibrate thresholds on labelled pairs")
    add_io_options(p)
    p.add_argument("--preset", choices=sorted(PRESETS),
                   help="start from named settings (henzinger2006: the paper's combined algorithm; "
                        "henzinger-calibrated: it with thresholds calibrated on the Webis pairs)")
    add_config_options(p, NearDupConfig, "neardup")
    p.add_argument("--pairs", metavar="FILE", type=absolute, help="calibrate: labelled pairs, JSON Lines (.gz ok)")
    p.add_argument("--train-corpus", metavar="NAME", help="calibrate: choose thresholds on this corpus only")
    p.add_argument("--test-corpus", metavar="NAME", help="calibrate: report the chosen thresholds on this corpus")
    p.add_argument("--write-config", metavar="FILE", help="calibrate: write the chosen thresholds as YAML")
    show_defaults(p, NearDupConfig)


def _action(value: str) -> str:
    """The optional ``run``/``calibrate`` word. Any other word here is most often the value of an
    option neardup does not take (``--bogus v``), which argparse hands to this positional."""
    if value not in ("run", "calibrate"):
        raise argparse.ArgumentTypeError(f"{value!r} is neither run nor calibrate; if it is the value of an "
                                         "option, neardup does not take that option (quiltdetect neardup --help)")
    return value


def neardup_config(args: argparse.Namespace, *, need_io: bool = True) -> NearDupConfig:
    """Defaults <- preset <- --config <- options <- --set."""
    preset = PRESETS[args.preset] if getattr(args, "preset", None) else {}
    return config_from_args(NearDupConfig, args, preset).validate(need_io=need_io)


def run_calibration(args: argparse.Namespace) -> int:
    """Sweep thresholds on labelled pairs; print the table; optionally write the chosen config."""
    from quiltdetect.neardup import calibrate as cal

    if not args.pairs:
        raise ConfigError("calibrate needs --pairs FILE (JSON Lines with left_text, right_text, label)")
    write_config = output_file(args.write_config, "--write-config") if args.write_config else None
    cfg = neardup_config(args, need_io=False)
    if not os.path.isfile(args.pairs):
        what = "a directory" if os.path.isdir(args.pairs) else "no such file"
        raise ConfigError(f"--pairs {args.pairs}: {what}; give a JSON Lines file of labelled pairs "
                          "(left_text, right_text, label)")
    try:
        pairs = cal.read_pairs(args.pairs)
    except (OSError, UnicodeDecodeError, EOFError) as exc:  # unreadable, not gzip, not UTF-8
        raise ConfigError(f"--pairs {args.pairs}: cannot read it ({_reason(exc)})") from exc
    train = [p for p in pairs if not args.train_corpus or p.corpus == args.train_corpus]
    test = [p for p in pairs if args.test_corpus and p.corpus == args.test_corpus]
    if not train:
        raise ConfigError(f"--train-corpus {args.train_corpus!r}: no pairs of that corpus in {args.pairs}")
    result = cal.calibrate(train, test, cfg.k, cfg.wrap, cfg.lsh_bands, cfg.lsh_rows)
    print(f"calibration on {len(train)} pairs ({args.train_corpus or 'all corpora'}), k={cfg.k}, wrap={cfg.wrap}, "
          f"lsh {cfg.lsh_bands} bands x {cfg.lsh_rows} rows:")
    for score in result.chosen.values():
        print("  " + score.row())
    if test:
        print(f"the same thresholds on {len(test)} held-out pairs ({args.test_corpus}):")
        for score in result.test.values():
            print("  " + score.row())
    if write_config:
        try:
            with open(write_config, "w", encoding="utf-8") as fh:
                yaml.safe_dump(result.config(), fh, sort_keys=False)
        except OSError as exc:
            raise ConfigError(f"--write-config {args.write_config}: cannot write it ({_reason(exc)})") from exc
        print(f"chosen thresholds written to {args.write_config}")
    return 0


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def run(args: argparse.Namespace, *, local: bool) -> int:
    """Run ``neardup`` (the Spark job) or ``neardup calibrate`` (no Spark)."""
    if args.action == "calibrate":
        return run_calibration(args)
    from quiltdetect.neardup.job import NearDupJob

    return run_job(NearDupJob, neardup_config(args), local=local)
