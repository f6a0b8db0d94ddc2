"""``quiltdetect ingest``: the job that reads a crawl once into the document table (docs/).

The readers it runs live in ``quiltdetect.ingest``, which every job uses; this package holds
only the command, so the readers never depend on the job life cycle (``lifecycle``).
"""
