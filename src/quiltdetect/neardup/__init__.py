"""Near-duplicate detection (definitions §2): Broder's shingling (B), Charikar's simhash (C),
Henzinger's combined algorithm, and the clusters of the near-duplicate relation."""
