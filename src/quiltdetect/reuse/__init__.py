"""Content reuse (Ardi & Heidemann 2014, definitions §4): chunk hashing, discovery, detection, bad neighborhoods."""
