"""SweepConfig: the (k, m, c, θ, φ) grid of a parameter sweep (Najork 2012, Table 1)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from quiltdetect.common.config import ConfigError, JobConfig, check_value, option
from quiltdetect.common.foreign import FOREIGN_CHOICES, ForeignRule

GRIDS = ("star", "full")


def _table1_ks() -> list[int]:
    return list(range(2, 11))


def _table1_ms() -> list[int]:
    return list(range(10, 90, 10))


def _table1_cs() -> list[int]:
    return list(range(2, 11))


def _table1_thetas() -> list[float]:
    return [0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


def _no_phi() -> list[float]:
    return [0.0]


def parse_values(option: str, text: str, kind: type) -> list:
    """``"2,3,5"`` or a range ``"2:10"`` / ``"0.4:1:0.1"`` (start:stop:step, stop included)."""
    items: list = []
    try:
        for part in str(text).split(","):
            part = part.strip()
            if not part:
                continue
            if ":" in part:
                bits = part.split(":")
                if len(bits) not in (2, 3):
                    raise ValueError(part)
                start, stop = kind(bits[0]), kind(bits[1])
                step = kind(bits[2]) if len(bits) == 3 else kind(1)
                if step <= 0:
                    raise ValueError(part)
                n = int(round((stop - start) / step + 1e-9)) + 1
                items += [kind(round(start + i * step, 10)) for i in range(max(n, 0))]
            else:
                items.append(kind(part))
    except ValueError as exc:
        raise ConfigError(f"{option} {text!r}: give values like 2,3,5 or a range start:stop[:step]") from exc
    if not items:
        raise ConfigError(f"{option} {text!r}: no values")
    return items


def _values(flag: str, kind: type) -> Callable[[str], list]:
    """How a list option's command-line text is read (``parse_values``)."""
    return lambda text: parse_values(flag, text, kind)


def parse_pivot(text: str) -> list[float]:
    """``--pivot 5,50,4,0.5`` -> [5, 50, 4, 0.5]."""
    values = [v.strip() for v in str(text).split(",")]
    try:
        pivot = [int(values[0]), int(values[1]), int(values[2]), float(values[3])]
    except (ValueError, IndexError) as exc:
        raise ConfigError(f"--pivot {text!r}: give k,m,c,theta such as 5,50,4,0.5") from exc
    if len(values) != 4:
        raise ConfigError(f"--pivot {text!r}: give k,m,c,theta such as 5,50,4,0.5")
    return pivot


@dataclass
class SweepConfig(JobConfig):
    """A sweep: lists of k, m, c, θ (and φ) around a pivot; one Spark pass per (k, m). The
    defaults are the grid of Najork 2012's Table 1 around the pivot (5, 50, 4, 0.5). On the
    command line give lists or ranges: -k 2:10, -m 10:80:10, --theta 0.4:1:0.1, --phi 0,0.05."""

    ks: list[int] = option(default_factory=_table1_ks, flags=("-k",), metavar="LIST", parse=_values("-k", int),
                           low=1, help="gram lengths, e.g. 2:10 or 3,5,8")
    ms: list[int] = option(default_factory=_table1_ms, flags=("-m",), metavar="LIST", parse=_values("-m", int),
                           low=2, help="max documents per patch gram")
    cs: list[int] = option(default_factory=_table1_cs, flags=("-c",), metavar="LIST", parse=_values("-c", int),
                           low=1, help="min sources")
    thetas: list[float] = option(default_factory=_table1_thetas, flags=("--theta",), metavar="LIST",
                                 parse=_values("--theta", float), low=0, high=1, help="min patch fractions")
    phis: list[float] = option(default_factory=_no_phi, flags=("--phi",), metavar="LIST",
                               parse=_values("--phi", float), low=0, high=1, help="min contribution of each source")
    pivot: list[float] = option(default_factory=lambda: [5, 50, 4, 0.5], metavar="K,M,C,THETA", parse=parse_pivot,
                                help="the pivot (k, m, c, θ) of Fig. 3")
    grid: str = option("star", choices=GRIDS,
                       help="star: one of k, m varied around the pivot (Table 1); full: every (k, m)")
    foreign: str = option("none", choices=FOREIGN_CHOICES, help="sources on another host / domain / IP")
    count_occurrences: bool = option(False, action="store_true", help="patch fraction over occurrences")
    exclude_attributed: bool = option(False, action="store_true",
                                      help="do not count quilts that link to one of their sources")

    def validate(self, *, need_io: bool = True) -> SweepConfig:
        """Fail with a message naming the option; sort the lists and add the pivot to them."""
        self.validate_io(need_io=need_io)
        if not isinstance(self.pivot, (list, tuple)) or len(self.pivot) != 4:
            raise ConfigError(f"--pivot must be k,m,c,theta, got {self.pivot!r}")
        pk, pm, pc, pt = self.pivot
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (pk, pm, pc)):
            # a YAML/--set pivot of [5.7, 50, 4, 0.5] must not quietly become k = 5
            raise ConfigError(f"--pivot k, m and c must be whole numbers, got {self.pivot!r}")
        self.pivot = [pk, pm, pc, float(pt)]
        for name, field in (("k", "ks"), ("m", "ms"), ("c", "cs"), ("theta", "thetas"), ("phi", "phis")):
            if not isinstance(getattr(self, field), list) or not getattr(self, field):
                raise ConfigError(f"--{name} needs at least one value")
        for name, field, value in (("k", "ks", pk), ("m", "ms", pm), ("c", "cs", pc), ("theta", "thetas", pt)):
            check_value(SweepConfig, field, value, what=f"--pivot {name}")  # the pivot joins the lists
        if any(p > 0 for p in self.phis) and self.count_occurrences:
            raise ConfigError("--phi is a fraction of the patch-gram set; it cannot be combined with --count-occurrences")
        self.ks = sorted({*self.ks, self.pivot[0]})
        self.ms = sorted({*self.ms, self.pivot[1]})
        self.cs = sorted({*self.cs, self.pivot[2]})
        self.thetas = sorted({*(float(t) for t in self.thetas), self.pivot[3]})
        self.phis = sorted({float(p) for p in self.phis})
        return self

    @property
    def foreign_rule(self) -> ForeignRule:
        """The foreign rule, parsed: what the sweep passes on (``common.foreign``)."""
        return ForeignRule(self.foreign)

    def passes(self) -> list[tuple[int, int]]:
        """The (k, m) pairs that need a Spark pass, grouped by k (grams computed once per k)."""
        pk, pm = self.pivot[0], self.pivot[1]
        if self.grid == "full":
            return [(k, m) for k in self.ks for m in self.ms]
        pairs = {(k, pm) for k in self.ks} | {(pk, m) for m in self.ms}
        return sorted(pairs)
