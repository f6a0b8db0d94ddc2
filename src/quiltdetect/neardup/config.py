"""NearDupConfig: every setting of the near-duplicate job (definitions §2), and named presets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from quiltdetect.common.config import ConfigError, JobConfig, option

ALGORITHMS = ("lsh", "b", "c", "combined", "combined-sites")

# Henzinger 2006's values: k = 8, B-similar at >= 2 of 6 supershingles, C at >= 372 of 384
# bits, combined at B >= 2 and C >= 355. henzinger-calibrated: her combined algorithm with the
# thresholds `neardup calibrate` chose on the shared Webis pairs (the default before lsh).
# The lsh defaults below are what `neardup calibrate` chose on the same pairs (docs/neardup.md).
PRESETS: dict[str, dict[str, Any]] = {
    "henzinger2006": {"algorithm": "combined", "k": 8, "wrap": False, "b_threshold": 2, "c_threshold": 372,
                      "combined_c_threshold": 355},
    "henzinger-calibrated": {"algorithm": "combined", "k": 5, "wrap": False, "b_threshold": 1, "c_threshold": 355,
                             "combined_c_threshold": 328},
}


@dataclass
class NearDupConfig(JobConfig):
    """Parameters of a near-duplicate run: the algorithm, its thresholds, and the bucket cap.

    The default algorithm is lsh: MinHash LSH candidates verified by exact resemblance and
    containment, thresholds chosen by `quiltdetect neardup calibrate` on the shared Webis
    labelled pairs (docs/neardup.md has the figures). Henzinger's algorithms: --algorithm
    b|c|combined|combined-sites; her 2006 values: --preset henzinger2006.
    """

    algorithm: str = option("lsh", choices=ALGORITHMS, help="lsh | b | c | combined | combined-sites")
    k: int = option(4, low=1, help="shingle length in terms (8 Henzinger, 5 Fetterly)")
    wrap: bool = option(False, action="store_true", help="wrap shingle windows around the page end (Fetterly)")
    resemblance_threshold: float = option(0.63, low=0, low_open=True, high=1,
                                          help="lsh: near-duplicate at resemblance (Jaccard) >= this")
    containment_threshold: float = option(0.96, low=0, low_open=True, high=1,
                                          help="lsh: or at containment (share of the smaller page in the larger) >= this")
    lsh_bands: int = option(40, low=1, help="lsh: candidates share one of this many bands")
    lsh_rows: int = option(3, low=1, help="lsh: min-hashes per band (the S-curve: docs/neardup.md)")
    b_threshold: int = option(1, low=1, high=6, unit="supershingles",
                              help="B-similar at >= this many equal supershingles of 6")
    c_threshold: int = option(355, low=1, high=384, unit="simhash bits",
                              help="C-similar at >= this many agreeing bits of 384")
    combined_c_threshold: int = option(328, low=0, high=384, unit="simhash bits",
                                       help="combined: B-similar and C-similarity >= this")
    bucket_cap: int = option(200, low=2, help="buckets with more pages give star edges, not all pairs")
    cc_checkpoint_every: int = option(1, cli=False, low=1, help="connected components: cut the lineage every n rounds")
    cc_max_rounds: int = option(100, cli=False, low=1, help="connected components: fail (not loop) past this many rounds")
    top: int = option(10, low=0, help="largest clusters shown in the summary")
    previous: str = option("", path="run", metavar="RUN",
                           help="a finished neardup run's output: add the --input pages to it and write the union's "
                                "near-duplicates to --output, the new pages decided against every page kept so far "
                                "(an update; RUN is only read)")

    def validate(self, *, need_io: bool = True) -> NearDupConfig:
        """Fail with a message naming the option when a value cannot work."""
        self.validate_io(need_io=need_io)
        if self.previous and self.output and self.previous.rstrip("/") == self.output.rstrip("/"):
            raise ConfigError(f"--output {self.output} is the --previous run: an update writes a new output "
                              "and leaves the previous one as it is; choose another --output")
        if self.lsh_bands * self.lsh_rows > 1024:
            raise ConfigError(f"--lsh-bands x --lsh-rows = {self.lsh_bands * self.lsh_rows} min-hashes per page: "
                              "use at most 1024")
        if self.c_threshold < 300 and self.algorithm in ("c", "combined-sites"):
            raise ConfigError(f"--c-threshold {self.c_threshold} needs {384 - self.c_threshold + 1} simhash pieces of "
                              "a few bits each: candidate buckets would be huge; use >= 300")
        return self
