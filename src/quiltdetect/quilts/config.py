"""QuiltConfig: every setting of the quilt job, with definitions §1's defaults."""

from __future__ import annotations

from dataclasses import dataclass

from quiltdetect.common.config import INPUT_FORMATS, ConfigError, JobConfig, option
from quiltdetect.common.foreign import FOREIGN_CHOICES, ForeignRule

__all__ = ["FOREIGN_CHOICES", "INPUT_FORMATS", "QuiltConfig"]


@dataclass
class QuiltConfig(JobConfig):
    """Parameters of a quilt run: the paper's (k, m, c, θ) and the foreign rule, plus I/O."""

    k: int = option(5, low=1, help="gram length in words")
    m: int = option(50, low=2, help="a patch gram occurs in more than 1 and at most m documents")
    c: int = option(4, low=1, help="a quilt has at least c source documents")
    theta: float = option(0.5, low=0, high=1, help="a quilt's patch fraction is at least theta")
    foreign: str = option("none", choices=FOREIGN_CHOICES,
                          help="sources must live on another host / registered domain / IP (none: anywhere)")
    count_occurrences: bool = option(False, action="store_true",
                                     help="patch fraction over gram occurrences, as the paper's figure 5 (default: sets)")
    phi: float = option(0.0, low=0, high=1, help="keep only sources that covered >= phi * |pgrams(d)| grams when picked, "
                                  "then re-judge c")
    exclude_attributed: bool = option(False, action="store_true",
                                      help="drop quilts that link to one of their sources (aggregators crediting them)")
    top: int = option(10, low=0, help="quilts shown in the summary")
    collapse_near_duplicates: bool = option(False, action="store_true",
                                            help="keep one page per near-duplicate cluster first, as Fetterly 2005")
    write_annotated: bool = option(False, action="store_true",
                                   help="also write annotated/: every document with patchfrac, n_sources and is_quilt")
    write_filtered: bool = option(False, action="store_true",
                                  help="also write filtered/: the document table without the quilts")
    previous: str = option("", path="run", metavar="RUN",
                           help="a finished quilt run's output: add the --input documents to it and write the "
                                "union's quilts to --output (an update; RUN is only read)")

    def validate(self, *, need_io: bool = True) -> QuiltConfig:
        """Fail with a message naming the option when a value cannot work."""
        self.validate_io(need_io=need_io)
        self.theta, self.phi = float(self.theta), float(self.phi)
        if self.phi > 0 and self.count_occurrences:
            raise ConfigError("--phi is a fraction of the patch-gram set; it cannot be combined with --count-occurrences")
        if self.previous and self.collapse_near_duplicates:
            raise ConfigError("--collapse-near-duplicates cannot update a previous run: new pages change the "
                              "near-duplicate clusters of old ones; run without --previous")
        if self.previous and self.output and self.previous.rstrip("/") == self.output.rstrip("/"):
            raise ConfigError(f"--output {self.output} is the --previous run: an update writes a new output "
                              "and leaves the previous one as it is; choose another --output")
        return self

    @property
    def foreign_rule(self) -> ForeignRule:
        """The foreign rule, parsed: what the job passes on (``common.foreign``)."""
        return ForeignRule(self.foreign)
