"""spark-submit entry point of the content-reuse job: the same options as ``quiltdetect reuse``.

    spark-submit jobs/content_reuse.py detect --input s3a://bucket/crawl/ --labeled s3a://bucket/wiki/ --output s3a://bucket/out/
"""

import sys

from quiltdetect.cli import run_job_file

if __name__ == "__main__":
    sys.exit(run_job_file(__file__))
