"""spark-submit entry point of the content-reuse job: the same options as ``quiltdetect reuse``.

    spark-submit jobs/content_reuse.py detect --input s3a://bucket/crawl/ --labeled s3a://bucket/wiki/ --output s3a://bucket/out/
"""

import sys

from quiltdetect.cli import main

if __name__ == "__main__":
    sys.exit(main(["reuse", *sys.argv[1:]], local=False))
