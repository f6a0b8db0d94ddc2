"""quiltdetect: exhaustive detection of quilted web pages and content reuse on Spark."""

__version__ = "0.1.0"
