"""spark-submit entry point of the MWO self-join: the same options as ``quiltdetect mwo join``.

    spark-submit --master spark://host:7077 jobs/mwo_join.py --input s3a://bucket/crawl/ -t 0.5 --output s3a://bucket/mwo/
"""

import sys

from quiltdetect.cli import run_job_file

if __name__ == "__main__":
    sys.exit(run_job_file(__file__))
