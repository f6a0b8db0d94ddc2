"""spark-submit entry point: a crawl -> the document table (docs/) every job can read.

    spark-submit jobs/ingest.py --input s3a://bucket/crawl/ --output s3a://bucket/run/ingest
"""

import sys

from quiltdetect.cli import run_job_file

if __name__ == "__main__":
    sys.exit(run_job_file(__file__))
