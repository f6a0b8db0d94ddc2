"""Content reuse (Ardi & Heidemann 2014, SPEC §4): chunk hashing, discovery, detection, bad neighborhoods."""
