"""The Python API on a DataFrame with its own column names equals the console command on the
same table (one code path: both run ``Job.run``, through ``api.run_on`` for every function);
quilts are checked on the bundled sample in test_quilts_job.py (near-duplicates by README's
example in test_readme.py), reuse detection in test_reuse_cli.py beside its console round trip, and the MWO
join here on the table of test_reliability_jobs."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import functions as F
from test_reliability_jobs import inputs  # noqa: F401  (the fixture: a 160-page corpus)

from quiltdetect import mwo_pairs
from quiltdetect.cli import main

pytestmark = pytest.mark.spark
RENAMED = {"id_col": "record", "url_col": "address", "text_col": "body"}

CASES = {  # API call -> (the command, the table it returns)
    "mwo_pairs": (lambda d, **kw: mwo_pairs(d, t=0.4, **kw), ["mwo", "join", "-t", "0.4"], "pairs"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_api_equals_the_command_on_renamed_columns(spark, tmp_path, inputs, name):  # noqa: F811
    call, command, table = CASES[name]
    cli_out = tmp_path / "cli"
    assert main([*command, *(a for p in inputs for a in ("--input", p)), "--output", str(cli_out)]) == 0
    docs = spark.read.parquet(str(cli_out / "docs"))
    pages = docs.select(F.col("doc_id").alias("record"), F.col("url").alias("address"), F.col("text").alias("body"))
    got = call(pages, output=str(tmp_path / "api"), **RENAMED)
    want = spark.read.parquet(str(cli_out / table))
    assert got.columns == want.columns and want.count() > 0
    assert rows(got) == rows(want)


def rows(frame) -> list[str]:
    return sorted(json.dumps(r.asDict(recursive=True), sort_keys=True, default=str) for r in frame.collect())
