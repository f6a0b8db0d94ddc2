"""spark-submit entry point of the phrase job: the same options as ``quiltdetect phrases``.

    spark-submit --master spark://host:7077 jobs/find_popular_phrases.py --input s3a://bucket/crawl/ --output s3a://bucket/phrases/
"""

import sys

from quiltdetect.cli import run_job_file

if __name__ == "__main__":
    sys.exit(run_job_file(__file__))
