"""QuiltConfig: every setting of the quilt job, with definitions §1's defaults."""

from __future__ import annotations

from dataclasses import dataclass

from quiltdetect.common.config import INPUT_FORMATS, ConfigError, JobConfig, check_int, path_field

FOREIGN_CHOICES = ("none", "host", "domain", "ip")
__all__ = ["FOREIGN_CHOICES", "INPUT_FORMATS", "QuiltConfig"]


@dataclass
class QuiltConfig(JobConfig):
    """Parameters of a quilt run: the paper's (k, m, c, θ) and the foreign rule, plus I/O."""

    k: int = 5  # gram length in words
    m: int = 50  # a patch gram occurs in at most m documents
    c: int = 4  # a quilt has at least c sources
    theta: float = 0.5  # a quilt's patch fraction is at least theta
    foreign: str = "none"  # sources must live on another server: none | host | domain | ip
    count_occurrences: bool = False  # patchfrac over gram occurrences (figure 5) instead of sets
    phi: float = 0.0  # each kept source covered at least phi * |pgrams(d)| grams when picked
    exclude_attributed: bool = False  # drop quilts that link to at least one of their sources
    top: int = 10  # quilts shown in the end-of-run summary
    collapse_near_duplicates: bool = False  # keep one page per near-duplicate cluster first (Fetterly 2005)
    write_annotated: bool = False  # also write annotated/: the documents with patchfrac, n_sources, is_quilt
    write_filtered: bool = False  # also write filtered/: the documents without the quilts
    previous: str = path_field("run", "")  # a finished quilt run's --output: add --input to it (an update, docs/quilts.md)

    def validate(self, *, need_io: bool = True) -> QuiltConfig:
        """Fail with a message naming the option when a value cannot work."""
        self.validate_io(need_io=need_io)
        for name, low in (("k", 1), ("m", 2), ("c", 1), ("top", 0)):
            check_int(name, getattr(self, name), low)
        if isinstance(self.theta, bool) or not isinstance(self.theta, (int, float)) or not 0.0 <= self.theta <= 1.0:
            raise ConfigError(f"--theta must be a number in [0, 1], got {self.theta!r}")
        self.theta = float(self.theta)
        if isinstance(self.phi, bool) or not isinstance(self.phi, (int, float)) or not 0.0 <= self.phi <= 1.0:
            raise ConfigError(f"--phi must be a number in [0, 1], got {self.phi!r}")
        self.phi = float(self.phi)
        if self.phi > 0 and self.count_occurrences:
            raise ConfigError("--phi is a fraction of the patch-gram set; it cannot be combined with --count-occurrences")
        if self.previous and self.collapse_near_duplicates:
            raise ConfigError("--collapse-near-duplicates cannot update a previous run: new pages change the "
                              "near-duplicate clusters of old ones; run without --previous")
        if self.previous and self.output and self.previous.rstrip("/") == self.output.rstrip("/"):
            raise ConfigError(f"--output {self.output} is the --previous run: an update writes a new output "
                              "and leaves the previous one as it is; choose another --output")
        if self.foreign not in FOREIGN_CHOICES:
            raise ConfigError(f"--foreign {self.foreign!r}: use one of {', '.join(FOREIGN_CHOICES)}")
        return self
