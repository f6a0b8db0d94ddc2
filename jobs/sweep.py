"""spark-submit entry point of the parameter sweep: the same options as ``quiltdetect sweep``.

    spark-submit --master spark://host:7077 jobs/sweep.py --input s3a://bucket/crawl/ --output s3a://bucket/sweep/
"""

import sys

from quiltdetect.cli import run_job_file

if __name__ == "__main__":
    sys.exit(run_job_file(__file__))
