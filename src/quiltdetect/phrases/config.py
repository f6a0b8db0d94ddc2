"""PhrasesConfig: every setting of the phrase-level duplication job (definitions §3)."""

from __future__ import annotations

from dataclasses import dataclass

from quiltdetect.common.config import ConfigError, JobConfig, option
from quiltdetect.common.foreign import FOREIGN_CHOICES, ForeignRule

COVER_SAMPLES = ("uniform", "per_count", "all")
MONSTER_ORDERS = ("score", "pages")


@dataclass
class PhrasesConfig(JobConfig):
    """Parameters of a phrase run: the paper's k, m and popularity threshold, the covering-set
    sample, the foreign preference and the host ("monster") statistics."""

    k: int = option(5, low=1, help="phrase length in words")
    shingles: int = option(84, low=1, metavar="M", help="sampled shingles (min-hash selectors) per page")
    popular: int = option(5, low=2, metavar="N", help="a shingle is popular in at least N documents")
    collapse_near_duplicates: bool = option(True, flags=("--no-collapse",), action="store_false",
                                            help="do not collapse near-duplicates first (default: collapse)")
    near_duplicate_b: int = option(2, low=1, high=6, unit="supershingles", metavar="B",
                                   help="near-duplicates agree in at least B of 6 supershingles")
    foreign: str = option("ip", choices=FOREIGN_CHOICES, flags=("--foreign", "--server"), aliases=("server",),
                          help="foreign preference of covering sets: donors on another host/domain/ip first "
                               "(the quilt job's foreign rule; --server is its older name)")
    cover_sample: str = option("uniform", choices=COVER_SAMPLES,
                               help="uniform: N documents at random; per_count: N per popular count (Figs. 3-4); all")
    cover_sample_size: int = option(1000, low=1, metavar="N", help="documents in the covering-set sample (uniform) "
                                                                   "or per popular count (per_count)")
    cover_seed: int = option(1, low=0, help="seed of the covering-set sample (mmh3 of doc_id)")
    cover_min_popular: int = option(30, low=0, metavar="N", help="sample documents with at least N popular shingles")
    cover_servers: list[str] = option(default_factory=list, flags=("--cover-server",), action="append",
                                      metavar="SERVER",
                                      help="sample only documents on this server (repeatable; Fig. 7); [] = all")
    min_host_pages: int = option(10, low=1, metavar="N", help="host statistics for hosts with >= N pages")
    monster_min_mean: float = option(30.0, low=0, help="monster candidates: mean popular shingles >= this")
    monster_max_std: float = option(15.0, low=0, help="monster candidates: standard deviation < this")
    monster_order: str = option("score", choices=MONSTER_ORDERS,
                                help="rank candidates by score = pages * (mean - std) / m, or by pages as the paper")
    top: int = option(10, low=0, help="rows of each output shown in the summary")

    def validate(self, *, need_io: bool = True) -> PhrasesConfig:
        """Fail with a message naming the option when a value cannot work."""
        self.validate_io(need_io=need_io)
        if isinstance(self.cover_servers, str):
            self.cover_servers = [self.cover_servers]
        if not isinstance(self.cover_servers, list) or not all(isinstance(s, str) for s in self.cover_servers):
            raise ConfigError(f"--cover-server must name servers (strings), got {self.cover_servers!r}")
        if self.cover_servers and not self.foreign_rule.on:
            raise ConfigError("--cover-server needs a --foreign rule (host, domain or ip) to match against")
        self.monster_min_mean, self.monster_max_std = float(self.monster_min_mean), float(self.monster_max_std)
        return self

    @property
    def foreign_rule(self) -> ForeignRule:
        """The foreign rule, parsed: what the job passes on (``common.foreign``)."""
        return ForeignRule(self.foreign)
