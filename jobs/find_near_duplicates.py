"""spark-submit entry point of the near-duplicate job: the same options as ``quiltdetect neardup``.

    spark-submit --master spark://host:7077 jobs/find_near_duplicates.py --input s3a://bucket/crawl/ --output s3a://bucket/nd/
"""

import sys

from quiltdetect.cli import main

if __name__ == "__main__":
    sys.exit(main(["neardup", *sys.argv[1:]], local=False))
