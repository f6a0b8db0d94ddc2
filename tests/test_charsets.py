"""Pages whose bytes do not fit their declared charset (definitions §0, issue 61), on real pages
of the bundled crawls (data/sample: Common Crawl's warcfile.warc.gz, ClueWeb09-ja's EUC-JP shop
pages) served with the wrong declarations crawls really carry. No Spark."""

from __future__ import annotations

import codecs
import re
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from quiltdetect.ingest.html import decode_page, extract
from quiltdetect.kernel.words import words

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


def payload(warc: str, url_start: str) -> bytes:
    """The HTTP payload of the first response record whose URL starts with ``url_start``."""
    with open(SAMPLE / warc, "rb") as stream:
        for record in ArchiveIterator(stream):
            if record.rec_type == "response" and record.rec_headers.get_header("WARC-Target-URI").startswith(url_start):
                return record.content_stream().read()
    raise LookupError(url_start)


def without_declaration(page: bytes) -> bytes:
    return re.sub(rb"charset\s*=\s*[\"']?[\w-]+", b"", page, flags=re.I)


def page_words(text: str) -> list[str]:
    return words(extract(text).text)


@pytest.mark.parametrize("warc, url, truly", [
    ("warcfile.warc.gz", "http://0755krk.com/", "gb18030"),  # a Chinese page in GBK
    ("warcfile.warc.gz", "http://037426.cn/", "gb18030"),  # GB2312
    ("clueweb-quirk.warc.gz", "http://www.uraharajuku.st/", "euc_jp"),  # a Japanese shop page in EUC-JP
    ("warcfile.warc.gz", "http://01spb.ru/", "cp1251"),  # a Russian page in windows-1251
])
def test_a_page_declared_utf8_but_in_a_legacy_encoding_is_read_in_the_one_it_fits(warc, url, truly):
    page = payload(warc, url)
    right = page.decode(truly)
    wrong = decode_page(page, "text/html; charset=utf-8")  # the header lies (a proxy, a CMS default)
    assert not wrong.lenient and wrong.chosen is not None and wrong.chosen.endswith(", not utf-8"), wrong.chosen
    assert page_words(wrong.text) == page_words(right)  # every word as the page's own encoding gives it
    assert "\ufffd" not in wrong.text
    plain = decode_page(page)  # the page's own <meta> is believed when the bytes fit it
    assert plain.chosen is None and page_words(plain.text) == page_words(right)


def test_a_western_page_without_any_declaration_is_not_read_as_utf8():
    page = without_declaration(payload("warcfile.warc.gz", "http://06.live-radsport.ch/fahrer"))
    assert not page.isascii()
    got = decode_page(page)
    assert not got.lenient and got.chosen is not None and got.chosen.endswith("(undeclared)"), got.chosen
    assert page_words(got.text) == page_words(page.decode("cp1252"))
    before = page.decode("utf-8", errors="replace")  # what an undeclared page was read as
    assert page_words(before) != page_words(got.text)


def test_a_byte_order_mark_decides_over_the_header():
    page = payload("warcfile.warc.gz", "http://0513mt.com/")  # UTF-8, declared so
    marked = codecs.BOM_UTF8 + page
    got = decode_page(marked, "text/html; charset=windows-1251")
    assert got.chosen == "utf-8 by its BOM, not cp1251" and not got.lenient
    assert got.text == page.decode("utf-8")


def test_utf8_bytes_declared_in_a_legacy_encoding_are_utf8():
    page = payload("warcfile.warc.gz", "http://0513mt.com/")
    got = decode_page(page, "text/html; charset=iso-8859-1")  # browsers read this as windows-1252
    assert got.chosen == "utf-8, not cp1252" and got.text == page.decode("utf-8")


def test_utf8_with_a_few_broken_bytes_stays_utf8():
    """A UTF-8 page cut mid-character or with one stray byte is read as UTF-8 with U+FFFD where
    it breaks (``lenient``), not garbled whole by another encoding that happens to fit."""
    page = payload("warcfile.warc.gz", "http://0513mt.com/")
    broken = page[:2000] + b"\xff" + page[2000:]
    got = decode_page(broken, "text/html; charset=utf-8")
    assert got.lenient and got.chosen is None and got.text.count("\ufffd") == 1


def test_pages_that_fit_their_declaration_are_not_touched():
    for warc, url in (("warcfile.warc.gz", "http://0755krk.com/"), ("clueweb-quirk.warc.gz", "http://www.uraharajuku.st/"),
                      ("warcfile.warc.gz", "http://0513mt.com/"), ("warcfile.warc.gz", "http://01spb.ru/")):
        page = payload(warc, url)
        got = decode_page(page)
        assert got.chosen is None and not got.lenient, url


@pytest.mark.spark
def test_an_ingest_counts_the_pages_it_decoded_otherwise_than_declared(spark, tmp_path, capsys):
    """The corrections reach metrics.json (``charsets_corrected``) and the run's summary; the
    pages' words are their own encoding's."""
    import json

    from test_bad_input import gz, http, warc_record

    from quiltdetect.cli import main

    chinese = payload("warcfile.warc.gz", "http://0755krk.com/")
    japanese = payload("clueweb-quirk.warc.gz", "http://www.uraharajuku.st/")
    crawl = tmp_path / "crawl.warc.gz"
    crawl.write_bytes(gz(warc_record(http(chinese, "text/html; charset=utf-8"), rid="1"))
                      + gz(warc_record(http(japanese, "text/html; charset=utf-8"), rid="2"))
                      + gz(warc_record(http(japanese), rid="3").replace(b"example.com/3", b"example.org/3")))
    out = tmp_path / "out"
    assert main(["ingest", "--input", str(crawl), "--output", str(out)]) == 0
    stage = json.loads((out / "metrics.json").read_text())["stages"]["ingest"]
    assert stage["documents"] == 3 and stage["decoded_leniently"] == 0, stage
    corrected = stage["charsets_corrected"]
    assert sum(corrected.values()) == 3 and all(k.endswith(", not utf-8") for k in corrected), corrected
    assert "charsets_corrected" in capsys.readouterr().out
