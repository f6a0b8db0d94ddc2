"""quiltdetect.ingest.urls: host, registered domain (offline PSL) and Henzinger site."""

from __future__ import annotations

import pytest

from quiltdetect.ingest.urls import domain_of, host_of, site_of


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
