"""Near-duplicate query and self-join by minimum weight overlap (Das, Mathew, Vijayaraghavan; definitions §5)."""
