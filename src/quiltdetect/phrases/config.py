"""PhrasesConfig: every setting of the phrase-level duplication job (definitions §3)."""

from __future__ import annotations

from dataclasses import dataclass, field

from quiltdetect.common.config import ConfigError, JobConfig, check_int

SERVERS = ("none", "host", "domain", "ip")
COVER_SAMPLES = ("uniform", "per_count", "all")
MONSTER_ORDERS = ("score", "pages")


@dataclass
class PhrasesConfig(JobConfig):
    """Parameters of a phrase run: the paper's k, m and popularity threshold, the covering-set
    sample, the foreign preference and the host ("monster") statistics."""

    k: int = 5  # phrase length in words
    shingles: int = 84  # m: sampled shingles (min-hash selectors) per document
    popular: int = 5  # a shingle is popular when selected in at least this many documents
    collapse_near_duplicates: bool = True  # keep one document per near-duplicate cluster first
    near_duplicate_b: int = 2  # near-duplicates: at least this many of the 6 supershingles agree
    server: str = "ip"  # foreign preference of covering sets: none | host | domain | ip
    cover_sample: str = "uniform"  # uniform | per_count (Figs. 3-4) | all
    cover_sample_size: int = 1000  # documents sampled (uniform) or per popular count (per_count)
    cover_seed: int = 1  # seed of the sample (mmh3 of doc_id)
    cover_min_popular: int = 30  # sample documents with at least this many popular shingles
    cover_servers: list[str] = field(default_factory=list)  # sample only these servers (Fig. 7); [] = all
    min_host_pages: int = 10  # host statistics for hosts with at least this many pages
    monster_min_mean: float = 30.0  # monster candidates: mean popular shingles per page at least this
    monster_max_std: float = 15.0  # ... and standard deviation below this
    monster_order: str = "score"  # rank candidates by pages * (mean - std) / m, or by pages (the paper)
    top: int = 10  # rows of each output shown in the end-of-run summary

    def validate(self, *, need_io: bool = True) -> PhrasesConfig:
        """Fail with a message naming the option when a value cannot work."""
        self.validate_io(need_io=need_io)
        for name, low in (("k", 1), ("shingles", 1), ("popular", 2), ("near_duplicate_b", 1),
                          ("cover_sample_size", 1), ("cover_seed", 0), ("cover_min_popular", 0),
                          ("min_host_pages", 1), ("top", 0)):
            check_int(name, getattr(self, name), low)
        if self.near_duplicate_b > 6:
            raise ConfigError(f"--near-duplicate-b must be at most 6 (supershingles), got {self.near_duplicate_b}")
        if not isinstance(self.collapse_near_duplicates, bool):
            raise ConfigError(f"--collapse-near-duplicates must be true or false, got {self.collapse_near_duplicates!r}")
        if self.server not in SERVERS:
            raise ConfigError(f"--server {self.server!r}: use one of {', '.join(SERVERS)}")
        if self.cover_sample not in COVER_SAMPLES:
            raise ConfigError(f"--cover-sample {self.cover_sample!r}: use one of {', '.join(COVER_SAMPLES)}")
        if self.monster_order not in MONSTER_ORDERS:
            raise ConfigError(f"--monster-order {self.monster_order!r}: use one of {', '.join(MONSTER_ORDERS)}")
        if isinstance(self.cover_servers, str):
            self.cover_servers = [self.cover_servers]
        if not isinstance(self.cover_servers, list) or not all(isinstance(s, str) for s in self.cover_servers):
            raise ConfigError(f"--cover-server must name servers (strings), got {self.cover_servers!r}")
        if self.cover_servers and self.server == "none":
            raise ConfigError("--cover-server needs a --server notion (host, domain or ip) to match against")
        for name in ("monster_min_mean", "monster_max_std"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigError(f"--{name.replace('_', '-')} must be a number >= 0, got {value!r}")
            setattr(self, name, float(value))
        return self
