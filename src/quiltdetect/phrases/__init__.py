"""Phrase-level duplication (Fetterly, Manasse, Najork 2005; SPEC §3)."""
