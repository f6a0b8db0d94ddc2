"""quiltdetect.documents.urls: host, registered domain (offline PSL) and Henzinger site."""

from __future__ import annotations

import pytest

from quiltdetect.documents.urls import domain_of, host_of, site_of


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://www.Microsoft.com/en-us/", "www.microsoft.com"),
        ("https://user:pw@Example.COM:8443/a?b#c", "example.com"),
        ("http://example.com./x", "example.com"),
        ("<http://example.org/x>", "example.org"),  # WARC/0.18 style target URI
        ("http://[2001:db8::1]:80/", "2001:db8::1"),
        ("http://192.0.2.7:8080/", "192.0.2.7"),
        ("//cdn.example.net/lib.js", "cdn.example.net"),
        ("www.example.com/path", "www.example.com"),
        ("mailto:someone@example.com", ""),
        ("http://[broken/", ""),
        ("not a url", ""),
        ("", ""),
        (None, ""),
    ],
)
def test_host_of(url, host):
    assert host_of(url) == host


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("www.microsoft.com", "microsoft.com"),
        ("microsoft.com", "microsoft.com"),
        ("www.cl.cam.ac.uk", "cam.ac.uk"),
        ("news.bbc.co.uk", "bbc.co.uk"),
        ("co.uk", "co.uk"),  # a public suffix is its own "domain"
        ("uk", "uk"),
        ("localhost", "localhost"),  # no registrable part
        ("192.0.2.7", "192.0.2.7"),  # IP hosts are not split at dots
        ("2001:db8::1", "2001:db8::1"),
        ("a.b.example.github.io", "example.github.io"),  # PSL private section
        ("WWW.Example.COM.", "example.com"),
        ("", ""),
    ],
)
def test_domain_of(host, domain):
    assert domain_of(host) == domain


def test_domain_of_composes_with_host_of():
    assert domain_of(host_of("http://www.cs.ox.ac.uk:80/people/")) == "ox.ac.uk"


@pytest.mark.parametrize(
    ("host", "site"),
    [
        ("www.cs.berkeley.edu", "cs.berkeley.edu"),
        ("www.berkeley.edu", "berkeley.edu"),
        ("berkeley.edu", "berkeley.edu"),
        ("localhost", "localhost"),
        ("192.0.2.7", "192.0.2.7"),
        ("", ""),
    ],
)
def test_site_of(host, site):
    assert site_of(host) == site


@pytest.mark.spark
def test_source_names_in_spark_sql_equal_source_name(spark):
    """The SQL form of ``source_name`` (ingest reads tables without a Python worker for it) gives
    the same path for every file URI, including odd ones."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from pyspark.sql import functions as F

    from quiltdetect.documents.read import source_name, source_names

    fixed = ["file:/a/b.parquet", "file:///a/b c.parquet", "file://host/a/b", "file:rel/x", "file:/a?b#c",
             "file:/tab\there", "file:/new\nline", "hdfs://nn/a/b", "s3a://bucket/k", "/plain/path", "", "file:"]
    alphabet = st.sampled_from(list("file:/?#\t\n\r %ab.é") + ["file:", "//", "file://"])
    samples: list[str] = []

    @settings(max_examples=300, database=None)
    @given(st.lists(alphabet, max_size=12).map("".join))
    def collect(s):
        samples.append(s)

    collect()
    values = fixed + samples
    frame = spark.createDataFrame([(i, v) for i, v in enumerate(values)], "i int, p string")
    got = {r["i"]: r["s"] for r in frame.select("i", source_names(F.col("p")).alias("s")).collect()}
    assert [got[i] for i in range(len(values))] == [source_name(v) for v in values]
