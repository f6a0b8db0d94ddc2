"""Documents: what every analysis reads, below the job contract (definitions §0).

``inputs`` decides which files are read and why (formats, skipped files); ``read`` reads WARC/WET
archives and tables into rows; ``records`` parses WARC records, ``html`` pages, ``urls`` hosts
and domains; ``keys`` gives each document its doc_key; ``table`` makes and writes the document
table (docs/). The ``ingest`` command (``quiltdetect.ingest``) is one job over this layer, beside
the analyses.
"""
