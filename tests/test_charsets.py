"""Pages whose bytes do not fit their declared charset (definitions §0, issue 61), on real pages
of the bundled crawls (data/sample: Common Crawl's warcfile.warc.gz, ClueWeb09-ja's EUC-JP shop
pages) served with the wrong declarations crawls really carry. No Spark."""

from __future__ import annotations

import codecs
import re
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from quiltdetect.documents.html import decode_page, extract
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


def test_a_cyrillic_page_declared_latin1_is_read_in_its_own_encoding():
    """Issue 73: a Russian page in windows-1251 served as ISO-8859-1 decodes in windows-1252 (every
    byte is a letter there) and was read as mojibake (``Ïðèâåò``), not counted. The same text in
    KOI8-R likewise."""
    page = payload("warcfile.warc.gz", "http://01spb.ru/")  # a real Russian page in windows-1251
    for codec, bytes_ in (("cp1251", page), ("koi8-r", page.decode("cp1251").encode("koi8_r", "xmlcharrefreplace"))):
        for label in ("iso-8859-1", "windows-1252", "us-ascii"):
            got = decode_page(bytes_, f"text/html; charset={label}")
            assert got.chosen == f"{codec}, not cp1252" and not got.lenient, (codec, label, got.chosen)
            assert got.text == bytes_.decode(codec)
            assert any("\u0400" <= c <= "\u04ff" for c in "".join(page_words(got.text)))


def test_western_pages_in_windows_1252_are_not_read_as_cyrillic(shared):
    """Real German, English, French, ... pages (the trafilatura pages in Latin script, written in
    windows-1252) declared ISO-8859-1 or windows-1252 stay windows-1252: their accented letters
    sit in words with ASCII letters. On all 1,173 HTML pages of the shared data and the sample,
    none of the 294 Latin-script pages so written was corrected, 26 of the 31 Cyrillic pages in
    windows-1251 and 26 of 31 in KOI8-R were (each to the exact text; the other 5 hold a few
    Cyrillic words among English, or too few bytes to tell), no Arabic, Greek, Hebrew, Chinese,
    Japanese or Korean page was read as Cyrillic, and no page as crawled was read otherwise."""
    import gzip

    checked = 0
    for folder in ("trafilatura_cache_pages",):
        for path in sorted((shared / folder / "html").glob("*.html.gz")):
            text = decode_page(gzip.decompress(path.read_bytes())).text
            latin = sum(map(len, re.findall(r"[^\W\d_\x00-\x7f\u0250-\U0010ffff]+", text)))
            other = sum(map(len, re.findall(r"[^\W\d_\x00-\u024f]+", text)))
            if not latin or other > 0.05 * (latin + other):
                continue  # not a Latin-script page
            western = text.encode("cp1252", errors="xmlcharrefreplace")
            for label in ("iso-8859-1", "windows-1252"):
                got = decode_page(western, f"text/html; charset={label}")
                assert got.chosen in (None, "utf-8, not cp1252") and got.text == western.decode(
                    "utf-8" if got.chosen else "cp1252"), (path.name, got.chosen)
            checked += 1
    assert checked > 70  # of 110 pages, mostly German
    plain = payload("warcfile.warc.gz", "http://06.live-radsport.ch/fahrer")  # windows-1252 as crawled
    assert decode_page(plain, "text/html; charset=iso-8859-1").chosen is None


def test_only_cyrillic_is_taken_back_from_a_latin1_declaration():
    """Arabic in windows-1256 declared ISO-8859-1 also decodes in windows-1252; it is left as
    declared (definitions §0 says which corrections there are): a reading in the wrong Cyrillic
    code page is not taken for it."""
    arabic = (Path(__file__).parent / "data" / "scripts" / "ar.txt").read_text(encoding="utf-8")
    page = f"<html><body><p>{arabic}</p></body></html>".encode("cp1256", errors="xmlcharrefreplace")
    got = decode_page(page, "text/html; charset=iso-8859-1")
    assert got.chosen is None and got.text == page.decode("cp1252")


@pytest.mark.spark
def test_an_ingest_counts_the_pages_it_decoded_otherwise_than_declared(spark, tmp_path, capsys):
    """The corrections reach metrics.json (``charsets_corrected``) and the run's summary; the
    pages' words are their own encoding's."""
    import json

    from quiltdetect.cli import main
    from testkit.warc import gzip_member, http_response, warc_record

    chinese = payload("warcfile.warc.gz", "http://0755krk.com/")
    japanese = payload("clueweb-quirk.warc.gz", "http://www.uraharajuku.st/")
    russian = payload("warcfile.warc.gz", "http://01spb.ru/")  # windows-1251, served as ISO-8859-1
    crawl = tmp_path / "crawl.warc.gz"
    crawl.write_bytes(gzip_member(warc_record(http_response(chinese, "text/html; charset=utf-8"), rid="1"))
                      + gzip_member(warc_record(http_response(japanese, "text/html; charset=utf-8"), rid="2"))
                      + gzip_member(warc_record(http_response(japanese), rid="3").replace(b"example.com/3", b"example.org/3"))
                      + gzip_member(warc_record(http_response(russian, "text/html; charset=iso-8859-1"), rid="4")))
    out = tmp_path / "out"
    assert main(["ingest", "--input", str(crawl), "--output", str(out)]) == 0
    stage = json.loads((out / "metrics.json").read_text())["stages"]["ingest"]
    assert stage["documents"] == 4 and stage["decoded_leniently"] == 0, stage
    corrected = stage["charsets_corrected"]
    assert corrected.pop("cp1251, not cp1252") == 1, corrected
    assert sum(corrected.values()) == 3 and all(k.endswith(", not utf-8") for k in corrected), corrected
    assert "charsets_corrected" in capsys.readouterr().out
