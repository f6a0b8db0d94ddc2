"""spark-submit entry point of the near-duplicate job: the same options as ``quiltdetect neardup``.

    spark-submit --master spark://host:7077 jobs/find_near_duplicates.py --input s3a://bucket/crawl/ --output s3a://bucket/nd/
"""

import sys

from quiltdetect.cli import run_job_file

if __name__ == "__main__":
    sys.exit(run_job_file(__file__))
