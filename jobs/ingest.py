"""spark-submit entry point: a crawl -> the document table (docs/) every job can read.

    spark-submit jobs/ingest.py --input s3a://bucket/crawl/ --output s3a://bucket/run/ingest
"""

import sys

from quiltdetect.cli import main

if __name__ == "__main__":
    sys.exit(main(["ingest", *sys.argv[1:]], local=False))
