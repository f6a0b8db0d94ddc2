"""ReuseConfig: every setting of the content-reuse job (definitions §4), defaults in conf/reuse.yaml."""

from __future__ import annotations

from dataclasses import dataclass

from quiltdetect.common.config import INPUT_FORMATS, ConfigError, JobConfig, check_int, option

MUTATIONS = ("add", "delete", "modify")
__all__ = ["MUTATIONS", "ReuseConfig"]


def _check_fraction(name: str, value: object, *, allow_none: bool) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        flag = "--" + name.replace("_", "-")
        raise ConfigError(f"{flag} must be a number in [0, 1]{' or null' if allow_none else ''}, got {value!r}")
    return float(value)


@dataclass
class ReuseConfig(JobConfig):
    """Parameters of discovery, detection and the mutation experiment, plus I/O."""

    # discovery (step 3b): objects occurring MORE than the threshold are labeled
    chunk_threshold: int = option(10, help="blind discovery labels chunks occurring more often than this")
    file_threshold: int = option(10, help="blind discovery labels files occurring more often than this")
    stop_chunks: list[str] = option(path="input", default_factory=list, action="append", metavar="FILE",
                                    help="extra stop-chunk file (one chunk per line, see reuse/data/stop_chunks.txt); "
                                         "repeatable")
    builtin_stop_chunks: bool = option(True, flags=("--no-builtin-stop-chunks",), action="store_false",
                                       help="do not use the stop-chunk list shipped with quiltdetect")
    top_objects: int = option(500, help="most frequent files/chunks written with an example text")
    # detection (steps 4-6)
    labeled: str | None = option(None, path="input", metavar="PATH",
                                 help="a discovery output directory, or a corpus whose content is sought "
                                      "(informed); default: blind discovery on the input")
    labeled_format: str | None = option(None, choices=INPUT_FORMATS, help="input format of a labeled corpus")
    min_chunk_chars: int = option(100, help="labeled-corpus chunks shorter than this many characters are left out")
    partial_threshold: float | None = option(None, help="contains above this makes a partial target "
                                                        "(default: mean + std over pages)")
    badness_threshold: float | None = option(None, help="badness above this makes a bad neighborhood "
                                                        "(default: mean + std over neighborhoods)")
    broadcast_labeled_rows: int = option(2_000_000, cli=False, help="broadcast-join the labeled set up to this "
                                                                    "many rows; 0: never")
    # cleaning (step 0): recursion errors
    max_component_repeats: int = option(3, help="a URL whose path repeats a component more often is a "
                                                "recursion error")
    max_prefix_depth: int = option(96, help="a URL whose neighborhood is deeper (host = 1) is a recursion error "
                                            "(appendix A)")
    # mutate-eval (§5.3-5.4)
    site: str | None = option(None, help="the neighborhood to mutate, e.g. copies.example.org/")
    mutations: list[str] = option(default_factory=lambda: list(MUTATIONS), help="comma-separated: add,delete,modify")
    max_mutations_cpp: float = option(6.0, help="x axis up to this many times the average chunks per page")
    mutation_steps: int = option(24, cli=False, help="points on the x axis")
    runs: int = option(10, help="runs averaged per point")
    seed: int = option(1, help="random seed of the mutations")
    max_site_pages: int = option(100_000, cli=False, help="the mutated site is simulated on the driver: at most "
                                                          "this many pages")
    top: int = option(20, help="rows shown in the summary")

    def validate(self, *, need_io: bool = True, need_site: bool = False) -> ReuseConfig:
        """Fail with a message naming the option when a value cannot work."""
        self.validate_io(need_io=need_io)
        for name, low in (
            ("chunk_threshold", 0), ("file_threshold", 0), ("top_objects", 0), ("min_chunk_chars", 0),
            ("broadcast_labeled_rows", 0), ("max_component_repeats", 1), ("max_prefix_depth", 1),
            ("mutation_steps", 1), ("runs", 1), ("seed", 0), ("max_site_pages", 1), ("top", 0),
        ):
            check_int(name, getattr(self, name), low)
        self.partial_threshold = _check_fraction("partial_threshold", self.partial_threshold, allow_none=True)
        self.badness_threshold = _check_fraction("badness_threshold", self.badness_threshold, allow_none=True)
        if isinstance(self.stop_chunks, str):
            self.stop_chunks = [self.stop_chunks]
        if self.labeled_format is not None and self.labeled_format not in INPUT_FORMATS:
            raise ConfigError(f"--labeled-format {self.labeled_format!r}: use one of {', '.join(INPUT_FORMATS)}")
        if isinstance(self.mutations, str):
            self.mutations = [m.strip() for m in self.mutations.split(",") if m.strip()]
        bad = [m for m in self.mutations if m not in MUTATIONS]
        if bad or not self.mutations:
            raise ConfigError(f"--mutations {','.join(bad) or '(none)'}: use some of {', '.join(MUTATIONS)}")
        if (isinstance(self.max_mutations_cpp, bool) or not isinstance(self.max_mutations_cpp, (int, float))
                or self.max_mutations_cpp <= 0):
            raise ConfigError(f"--max-mutations-cpp must be a number > 0, got {self.max_mutations_cpp!r}")
        self.max_mutations_cpp = float(self.max_mutations_cpp)
        if need_site and not self.site:
            raise ConfigError("no site: give --site PREFIX, a neighborhood such as copies.example.org/")
        if self.site and not self.site.endswith("/"):
            self.site += "/"
        return self
