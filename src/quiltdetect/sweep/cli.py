"""``quiltdetect sweep``: lists or ranges of k, m, c, θ (and φ) -> Table 1, Fig. 3, report."""

from __future__ import annotations

import argparse

from quiltdetect.common.config import ConfigError, show_defaults
from quiltdetect.options import add_io_options, config_from_args, run_job
from quiltdetect.quilts.config import FOREIGN_CHOICES
from quiltdetect.sweep.config import GRIDS, SweepConfig, parse_values

OPTIONS = ("ks", "ms", "cs", "thetas", "phis", "pivot", "grid", "foreign", "count_occurrences", "exclude_attributed")


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``sweep`` with its options."""
    p = subparsers.add_parser("sweep", help="sweep (k, m, c, θ) in one pass per (k, m): Table 1, Fig. 3, report")
    add_io_options(p)
    p.add_argument("-k", dest="ks_text", metavar="LIST", help="gram lengths, e.g. 2:10 or 3,5,8")
    p.add_argument("-m", dest="ms_text", metavar="LIST", help="max documents per patch gram")
    p.add_argument("-c", dest="cs_text", metavar="LIST", help="min sources")
    p.add_argument("--theta", dest="thetas_text", metavar="LIST", help="min patch fractions")
    p.add_argument("--phi", dest="phis_text", metavar="LIST", help="min contribution of each source")
    p.add_argument("--pivot", dest="pivot_text", metavar="K,M,C,THETA", help="the pivot of Fig. 3")
    p.add_argument("--grid", choices=GRIDS, help="star: one of k, m varied around the pivot; full: every (k, m)")
    p.add_argument("--foreign", choices=FOREIGN_CHOICES, help="sources on another host / domain / IP")
    p.add_argument("--count-occurrences", action="store_true", default=None, help="patch fraction over occurrences")
    p.add_argument("--exclude-attributed", action="store_true", default=None,
                   help="do not count quilts that link to one of their sources")
    show_defaults(p, SweepConfig, {f"{name}_text": name for name in ("ks", "ms", "cs", "thetas", "phis", "pivot")})
    return p


def sweep_config(args: argparse.Namespace) -> SweepConfig:
    """The sweep's configuration from its command line."""
    for name, kind, flag in (("ks", int, "-k"), ("ms", int, "-m"), ("cs", int, "-c"),
                             ("thetas", float, "--theta"), ("phis", float, "--phi")):
        text = getattr(args, f"{name}_text", None)
        setattr(args, name, parse_values(flag, text, kind) if text is not None else None)
    pivot = getattr(args, "pivot_text", None)
    if pivot is not None:
        values = [v.strip() for v in pivot.split(",")]
        try:
            args.pivot = [int(values[0]), int(values[1]), int(values[2]), float(values[3])]
        except (ValueError, IndexError) as exc:
            raise ConfigError(f"--pivot {pivot!r}: give k,m,c,theta such as 5,50,4,0.5") from exc
        if len(values) != 4:
            raise ConfigError(f"--pivot {pivot!r}: give k,m,c,theta such as 5,50,4,0.5")
    else:
        args.pivot = None
    return config_from_args(SweepConfig, args, OPTIONS).validate()


def run(args: argparse.Namespace, *, local: bool) -> int:
    """Build the session, run the sweep, print Table 1."""
    from quiltdetect.sweep.job import SweepJob

    return run_job(SweepJob, sweep_config(args), local=local)
