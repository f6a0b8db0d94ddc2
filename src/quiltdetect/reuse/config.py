"""ReuseConfig: every setting of the content-reuse job (definitions §4), defaults in conf/reuse.yaml."""

from __future__ import annotations

from dataclasses import dataclass

from quiltdetect.common.config import INPUT_FORMATS, ConfigError, JobConfig, option

MUTATIONS = ("add", "delete", "modify")
__all__ = ["MUTATIONS", "ReuseConfig"]

# The steps that offer an option besides discovery's and the shared ones (every step offers those).
DETECT = ("reuse detect", "reuse mutate-eval")
MUTATE = ("reuse mutate-eval",)


@dataclass
class ReuseConfig(JobConfig):
    """Parameters of discovery, detection and the mutation experiment, plus I/O."""

    # discovery (step 3b): objects occurring MORE than the threshold are labeled
    chunk_threshold: int = option(10, low=0, help="blind discovery labels chunks occurring more often than this")
    file_threshold: int = option(10, low=0, help="blind discovery labels files occurring more often than this")
    stop_chunks: list[str] = option(path="input", default_factory=list, action="append", metavar="FILE",
                                    help="extra stop-chunk file (one chunk per line, see reuse/data/stop_chunks.txt); "
                                         "repeatable")
    builtin_stop_chunks: bool = option(True, flags=("--no-builtin-stop-chunks",), action="store_false",
                                       help="do not use the stop-chunk list shipped with quiltdetect")
    top_objects: int = option(500, low=0, help="most frequent files/chunks written with an example text")
    # detection (steps 4-6)
    labeled: str | None = option(None, path="input", commands=DETECT, metavar="PATH",
                                 help="a discovery output directory, or a corpus whose content is sought "
                                      "(informed); default: blind discovery on the input")
    labeled_format: str | None = option(None, commands=DETECT, choices=INPUT_FORMATS,
                                        help="input format of a labeled corpus")
    min_chunk_chars: int = option(100, commands=DETECT, low=0,
                                  help="labeled-corpus chunks shorter than this many characters are left out")
    partial_threshold: float | None = option(None, commands=DETECT, low=0, high=1,
                                             help="contains above this makes a partial target "
                                                  "(default: mean + std over pages)")
    badness_threshold: float | None = option(None, commands=DETECT, low=0, high=1,
                                             help="badness above this makes a bad neighborhood "
                                                  "(default: mean + std over neighborhoods)")
    broadcast_labeled_rows: int = option(2_000_000, cli=False, low=0, help="broadcast-join the labeled set up to this "
                                                                           "many rows; 0: never")
    # cleaning (step 0): recursion errors
    max_component_repeats: int = option(3, low=1, help="a URL whose path repeats a component more often is a "
                                                       "recursion error")
    max_prefix_depth: int = option(96, low=1, help="a URL whose neighborhood is deeper (host = 1) is a recursion error "
                                                   "(appendix A)")
    # mutate-eval (§5.3-5.4)
    site: str | None = option(None, commands=MUTATE, help="the neighborhood to mutate, e.g. copies.example.org/")
    mutations: list[str] = option(default_factory=lambda: list(MUTATIONS), commands=MUTATE, choices=MUTATIONS,
                                  help="comma-separated: add,delete,modify")
    max_mutations_cpp: float = option(6.0, commands=MUTATE, low=0, low_open=True,
                                      help="x axis up to this many times the average chunks per page")
    mutation_steps: int = option(24, cli=False, low=1, help="points on the x axis")
    runs: int = option(10, commands=MUTATE, low=1, help="runs averaged per point")
    seed: int = option(1, commands=MUTATE, low=0, help="random seed of the mutations")
    max_site_pages: int = option(100_000, cli=False, low=1, help="the mutated site is simulated on the driver: "
                                                                 "at most this many pages")
    top: int = option(20, low=0, help="rows shown in the summary")

    def validate(self, *, need_io: bool = True, need_site: bool = False) -> ReuseConfig:
        """Fail with a message naming the option when a value cannot work."""
        if isinstance(self.mutations, str):  # the command line's add,delete (checked as a list below)
            self.mutations = [m.strip() for m in self.mutations.split(",") if m.strip()]
        self.validate_io(need_io=need_io)
        self.partial_threshold, self.badness_threshold = (None if t is None else float(t)
                                                          for t in (self.partial_threshold, self.badness_threshold))
        if isinstance(self.stop_chunks, str):
            self.stop_chunks = [self.stop_chunks]
        if not self.mutations:
            raise ConfigError(f"--mutations (none): use some of {', '.join(MUTATIONS)}")
        self.max_mutations_cpp = float(self.max_mutations_cpp)
        if need_site and not self.site:
            raise ConfigError("no site: give --site PREFIX, a neighborhood such as copies.example.org/")
        if self.site and not self.site.endswith("/"):
            self.site += "/"
        return self
