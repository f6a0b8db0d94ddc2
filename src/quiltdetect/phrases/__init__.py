"""Phrase-level duplication (Fetterly, Manasse, Najork 2005; definitions §3)."""
