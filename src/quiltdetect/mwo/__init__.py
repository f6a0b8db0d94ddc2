"""Near-duplicate query and self-join by minimum weight overlap (Das, Mathew, Vijayaraghavan; SPEC §5)."""
