"""The numpy + mmh3 kernel: tokenisation, fingerprints and per-document algorithms.

Nothing here imports Spark; the Spark layers wrap these functions in pandas UDFs.
"""

from quiltdetect.kernel.cover import greedy_cover
from quiltdetect.kernel.grams import distinct_grams, gram_fingerprints, text_grams
from quiltdetect.kernel.words import word_hashes, words

__all__ = ["distinct_grams", "gram_fingerprints", "greedy_cover", "text_grams", "word_hashes", "words"]
