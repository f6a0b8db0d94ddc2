"""quiltdetect.documents.records: WARC/ARC/WET iteration with skip-and-count rows."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest

from quiltdetect.documents import records as R
from quiltdetect.documents.records import ROW_FIELDS, count_reasons, iter_warc_rows, iter_wet_rows
from testkit.shared import shared_data_or_skip


def sample(rel: str) -> Path:
    path = shared_data_or_skip() / "warc_samples" / rel
    if not path.is_file():
        pytest.skip(f"{rel} not present")
    return path


def rows_of(rel: str, *, wet: bool = False, **kw) -> list[dict]:
    path = sample(rel)
    fn = iter_wet_rows if wet else iter_warc_rows
    with path.open("rb") as fh:
        return list(fn(fh, str(path), **kw))


def docs(rows):
    return [r for r in rows if r["skip_reason"] is None]


def words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


def test_row_shape_and_offsets():
    rows = rows_of("resiliparse/warcfile.warc.gz")
    assert all(tuple(r) == ROW_FIELDS for r in rows)
    assert [r["offset"] for r in rows] == list(range(len(rows)))
    assert all(r["source"].endswith("warcfile.warc.gz") for r in rows)
    for r in rows:
        if r["skip_reason"] is None:
            assert r["skip_detail"] is None and isinstance(r["text"], str)
        else:
            assert r["skip_reason"] in R.SKIP_REASONS and r["text"] is None


def test_common_crawl_warc_counts_ips_and_skips():
    rows = rows_of("resiliparse/warcfile.warc.gz")
    assert count_reasons(rows) == {
        "document": 16,
        R.SKIP_WARCINFO: 1,
        R.SKIP_REQUEST: 17,
        R.SKIP_METADATA: 16,
    }
    d = docs(rows)
    assert all(r["ip"] for r in d)
    assert len({r["host"] for r in d}) >= 15  # two responses share a host
    assert all(r["doc_id"].startswith("<urn:uuid:") for r in d)
    assert all(r["domain"] and r["host"].endswith(r["domain"]) for r in d)
    assert all(len(words(r["text"])) > 10 for r in d)
    assert all(isinstance(a, dict) and set(a) == {"text", "href"} for r in d for a in r["anchors"])


def test_whirlwind_warc_text_matches_common_crawl_wet_text():
    warc = docs(rows_of("whirlwind/whirlwind.warc.gz"))
    wet = docs(rows_of("whirlwind/whirlwind.warc.wet.gz", wet=True))
    assert len(warc) == 1 and len(wet) == 1
    assert warc[0]["url"] == wet[0]["url"] == "https://an.wikipedia.org/wiki/Escopete"
    assert warc[0]["host"] == "an.wikipedia.org" and warc[0]["domain"] == "wikipedia.org"
    assert warc[0]["ip"] and wet[0]["ip"] is None
    assert "Escopete" in warc[0]["title"]
    ours = set(words(warc[0]["text"]))
    theirs = words(wet[0]["text"])
    assert len(theirs) > 300
    covered = sum(1 for w in theirs if w in ours) / len(theirs)
    assert covered >= 0.95, covered


def test_wet_records():
    rows = rows_of("whirlwind/whirlwind.warc.wet.gz", wet=True)
    assert count_reasons(rows) == {"document": 1, R.SKIP_WARCINFO: 1}
    doc = docs(rows)[0]
    assert doc["title"] == "" and doc["headings"] == [] and doc["anchors"] == []
    oscar = rows_of("oscar_wet/oscar-io-sample.warc.wet.gz", wet=True)
    assert count_reasons(oscar) == {"document": 63}
    assert not any(r["decode_errors"] for r in oscar)


def test_clueweb_warc_0_18_yields_29_documents():
    rows = rows_of("resiliparse/clueweb-quirk.warc.gz")
    assert count_reasons(rows) == {"document": 29, R.SKIP_WARCINFO: 1}
    d = docs(rows)
    assert {r["host"] for r in d} == {"www.uraharajuku.st"} or len({r["domain"] for r in d}) == 1
    assert all(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", r["text"]) for r in d)  # Japanese decoded
    assert any(r["warc_date"] and "294T" in r["warc_date"] for r in d)  # malformed date kept verbatim


def test_revisits_are_counted():
    rows = rows_of("pywb/iana.warc.gz")
    counts = count_reasons(rows)
    assert counts[R.SKIP_REVISIT] == 123
    assert counts[R.SKIP_REQUEST] == 171
    assert sum(counts.values()) == 343
    assert counts["document"] + counts[R.SKIP_HTTP_STATUS] >= 16
    assert counts[R.SKIP_NOT_HTML] > 0


def test_resource_records_and_arc():
    assert count_reasons(rows_of("warcio/example-resource.warc.gz")) == {
        R.SKIP_WARCINFO: 2,
        R.SKIP_OTHER_RECORD: 1,
    }
    arc = rows_of("warcio/example.arc.gz")
    assert count_reasons(arc) == {R.SKIP_WARCINFO: 1, "document": 1}
    doc = docs(arc)[0]
    assert doc["url"] == "http://example.com/" and doc["ip"] == "93.184.216.119"
    assert doc["warc_date"] == "2014-02-16T05:02:21Z"
    assert doc["doc_id"] == docs(rows_of("warcio/example.arc.gz"))[0]["doc_id"]  # stable id


def test_chunked_transfer_encoding():
    rows = rows_of("warcio/example-iana.org-chunked.warc")
    assert count_reasons(rows)["document"] == 1
    assert "Example Domain" in docs(rows)[0]["text"] or len(words(docs(rows)[0]["text"])) > 10


def test_truncated_gzip_keeps_earlier_records_and_stops_once():
    data = sample("resiliparse/warcfile.warc.gz").read_bytes()
    full = list(iter_warc_rows(io.BytesIO(data), "f"))
    cut = list(iter_warc_rows(io.BytesIO(data[: int(len(data) * 0.6)]), "f"))
    assert [r["skip_reason"] for r in cut].count(R.SKIP_FILE_ERROR) == 1
    assert cut[-1]["skip_reason"] == R.SKIP_FILE_ERROR
    assert cut[:-1] == full[: len(cut) - 1]
    assert count_reasons(cut[:-1])["document"] >= 5


@pytest.mark.parametrize("frac", [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99])
def test_truncation_anywhere_never_raises(frac):
    data = sample("whirlwind/whirlwind.warc.gz").read_bytes()
    rows = list(iter_warc_rows(io.BytesIO(data[: int(len(data) * frac)]), "f"))
    assert sum(r["skip_reason"] == R.SKIP_FILE_ERROR for r in rows) <= 1


def test_clipped_record_is_a_file_error_not_a_document():
    rows = rows_of("resiliparse/clipped.warc.gz")
    assert len(rows) == 1 and rows[0]["skip_reason"] == R.SKIP_FILE_ERROR
    assert rows[0]["url"].startswith("http://www.houstonpress.com/")


@pytest.mark.parametrize(
    "junk",
    [b"hello this is not a warc\n" * 50, os.urandom(4096), b"\x1f\x8b\x08\x00garbage" * 20, b"<html>x</html>"],
)
def test_garbage_file_gives_one_file_error(junk):
    rows = list(iter_warc_rows(io.BytesIO(junk), "junk"))
    assert len(rows) == 1 and rows[0]["skip_reason"] == R.SKIP_FILE_ERROR
    assert rows[0]["source"] == "junk" and rows[0]["offset"] == 0


def test_payload_cap():
    rows = rows_of("resiliparse/warcfile.warc.gz", max_payload_bytes=20_000)
    counts = count_reasons(rows)
    assert counts[R.SKIP_TOO_LARGE] > 0
    assert counts[R.SKIP_TOO_LARGE] + counts.get("document", 0) == 16
    assert len(rows) == 50


def _warc(record_type: str, http: bytes, url: str | None = "http://example.com/") -> bytes:
    headers = [f"WARC-Type: {record_type}", "WARC-Record-ID: <urn:uuid:12345678-1234-5678-1234-567812345678>"]
    if url is not None:
        headers.append(f"WARC-Target-URI: {url}")
    headers += ["WARC-Date: 2024-01-01T00:00:00Z", "Content-Type: application/http; msgtype=response"]
    headers.append(f"Content-Length: {len(http)}")
    return ("WARC/1.0\r\n" + "\r\n".join(headers) + "\r\n\r\n").encode() + http + b"\r\n\r\n"


def _http(body: bytes, ctype: str | None = "text/html", status: str = "200 OK") -> bytes:
    head = f"HTTP/1.1 {status}\r\n" + (f"Content-Type: {ctype}\r\n" if ctype else "")
    return (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def test_synthetic_skip_reasons():
    page = b"<!DOCTYPE html><html><body><p>Hello world</p></body></html>"
    stream = b"".join(
        [
            _warc("response", _http(page)),
            _warc("response", _http(page, ctype=None)),  # sniffed as HTML
            _warc("response", _http(b"just text", ctype=None)),
            _warc("response", _http(page, status="404 Not Found")),
            _warc("response", _http(b"{}", ctype="application/json")),
            _warc("response", _http(b"  \n ")),
            _warc("response", _http(page), url=""),  # empty WARC-Target-URI
            _warc("response", _http(b"<p>caf\xe9 \xff</p>", ctype="text/html; charset=utf-8")),
        ]
    )
    rows = list(iter_warc_rows(io.BytesIO(stream), "mem"))
    assert [r["skip_reason"] for r in rows] == [
        None, None, R.SKIP_NOT_HTML, R.SKIP_HTTP_STATUS, R.SKIP_NOT_HTML, R.SKIP_EMPTY,
        R.SKIP_NO_URL, None,
    ]
    assert rows[0]["text"] == "Hello world" and rows[0]["decode_errors"] is False
    assert rows[3]["skip_detail"].startswith("404")
    # bytes that do not fit the declared UTF-8 are read in the encoding a detector finds (issue 61)
    assert rows[7]["decode_errors"] is False and rows[7]["decoded_as"].endswith(", not utf-8"), rows[7]


def test_response_without_target_uri_header_stops_the_file():
    # warcio itself fails on a response with no WARC-Target-URI header at all, inside
    # its iterator, so the file cannot continue: one file_error row, earlier rows kept.
    page = b"<html><p>x</p></html>"
    stream = _warc("response", _http(page)) + _warc("response", _http(page), url=None)
    rows = list(iter_warc_rows(io.BytesIO(stream), "mem"))
    assert [r["skip_reason"] for r in rows] == [None, R.SKIP_FILE_ERROR]
