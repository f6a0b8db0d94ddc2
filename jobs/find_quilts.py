"""spark-submit entry point of the quilt job: the same options as ``quiltdetect quilts``.

    spark-submit --master spark://host:7077 jobs/find_quilts.py --input s3a://bucket/crawl/ --output s3a://bucket/out/
"""

import sys

from quiltdetect.cli import run_job_file

if __name__ == "__main__":
    sys.exit(run_job_file(__file__))
