"""ReuseConfig: every setting of the content-reuse job (definitions §4), defaults in conf/reuse.yaml."""

from __future__ import annotations

from dataclasses import dataclass, field

from quiltdetect.common.config import INPUT_FORMATS, ConfigError, JobConfig, check_int, path_field

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
    chunk_threshold: int = 10
    file_threshold: int = 10
    stop_chunks: list[str] = path_field("input", default_factory=list)  # extra stop-chunk files
    builtin_stop_chunks: bool = True  # use the list shipped in quiltdetect/reuse/data/
    top_objects: int = 500  # most frequent files/chunks written with an example text
    # detection (steps 4-6)
    labeled: str | None = path_field("input", None)  # discovery output dir, or a corpus to label (informed); None: blind
    labeled_format: str | None = None  # input format of a labeled corpus (inferred when None)
    min_chunk_chars: int = 100  # labeled-corpus chunks shorter than this are left out
    partial_threshold: float | None = None  # contains > this is a partial target; None: mean + std
    badness_threshold: float | None = None  # badness > this is bad; None: mean + std of neighborhoods
    broadcast_labeled_rows: int = 2_000_000  # broadcast-join the labeled set up to this size; 0: never
    # cleaning (step 0): recursion errors
    max_component_repeats: int = 3  # a path component occurring more often is a recursion error
    max_prefix_depth: int = 96  # deeper neighborhoods (host = 1) are recursion errors (appendix A)
    # mutate-eval (§5.3-5.4)
    site: str | None = None  # the neighborhood to mutate, e.g. "copies.example.org/"
    mutations: list[str] = field(default_factory=lambda: list(MUTATIONS))
    max_mutations_cpp: float = 6.0  # x axis: mutations per page up to this many average pages' chunks
    mutation_steps: int = 24  # points on the x axis
    runs: int = 10  # independent runs averaged per point
    seed: int = 1
    max_site_pages: int = 100_000  # the mutated site is simulated on the driver
    top: int = 20  # rows shown in the end-of-run summary

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
