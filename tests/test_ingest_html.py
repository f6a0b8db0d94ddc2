"""quiltdetect.documents.html: visible text, page fields and lenient decoding."""

from __future__ import annotations

import gzip
import re
import time

import pytest

from quiltdetect.documents.html import HtmlFields, decode_html, extract
from testkit.shared import shared_data_or_skip


def words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


def test_inline_elements_do_not_split_words():
    assert words(extract("<p>Hel<b>lo</b> wo<span>r</span><a href='#'>ld</a></p>").text) == [
        "hello",
        "world",
    ]


@pytest.mark.parametrize(
    ("html", "text"),
    [
        ("<p>one</p><p>two</p>", "one\ntwo"),
        ("<div>one</div>two", "one\ntwo"),
        ("one<br>two", "one\ntwo"),
        ("<ul><li>a<li>b</ul>", "a\nb"),
        ("<table><tr><td>c1<td>c2</tr><tr><th>c3</table>", "c1\nc2\nc3"),
        ("<h1>Head</h1>body", "Head\nbody"),
        ("<p>  lots \n of\t  space  </p>", "lots of space"),
        ("a<hr>b<blockquote>c</blockquote>d", "a\nb\nc\nd"),
    ],
)
def test_block_elements_separate_words(html, text):
    assert extract(html).text == text


def test_markup_produces_no_words():
    html = """<html><head><title>The title</title><style>.css{color:red}</style>
    <script>var scriptword = 1;</script></head><body>
    <p>visible<!-- commentword --> text</p>
    <script type="application/ld+json">{"jsonword": 2}</script>
    <noscript>noscriptword</noscript><template><p>templateword</p></template>
    <svg><text>svgword</text><title>svgtitle</title></svg>
    <style>p{x:y}</style><iframe><p>iframeword</p></iframe>
    </body></html>"""
    fields = extract(html)
    assert words(fields.text) == ["visible", "text"]
    assert fields.title == "The title"  # title is its own field, not body text


def test_fields():
    html = """<html><head><title>  My   Page </title>
    <meta name="Keywords" content="quilt, spam">
    <meta name="description" content=" A page about   quilts ">
    </head><body><h1>Main <i>heading</i></h1><h3>Sub</h3>
    <a href="/other?x=1">Other <b>page</b></a>
    <a href="https://elsewhere.org/">abs</a><a href="javascript:void(0)">js</a>
    <img src="img/p.png"><img src="data:image/png;base64,AAAA"><img></body></html>"""
    f = extract(html, "http://example.com/dir/page.html")
    assert isinstance(f, HtmlFields)
    assert f.title == "My Page"
    assert f.meta_keywords == "quilt, spam"
    assert f.meta_description == "A page about quilts"
    assert f.headings == ["Main heading", "Sub"]
    assert f.anchors == [
        ("Other page", "http://example.com/other?x=1"),
        ("abs", "https://elsewhere.org/"),
    ]
    assert f.images == ["http://example.com/dir/img/p.png"]
    assert "Main heading" in f.text and "My Page" not in f.text


def test_base_href_wins_for_relative_links():
    f = extract('<base href="http://cdn.example.net/x/"><a href="y">t</a>', "http://example.com/")
    assert f.anchors == [("t", "http://cdn.example.net/x/y")]


@pytest.mark.parametrize(
    "garbage",
    ["", "<<<>>>", "\x00\x01\x02", "<p", "</p></div></html>", "<" * 10000, "\ue000x\ue000", None, b"x"],
)
def test_garbage_never_raises(garbage):
    f = extract(garbage)  # type: ignore[arg-type]
    assert isinstance(f, HtmlFields)
    assert "\ue000" not in f.text


def test_decode_utf8_default_and_bom():
    assert decode_html("héllo".encode()) == ("héllo", False)
    assert decode_html(b"\xef\xbb\xbf<p>x</p>") == ("<p>x</p>", False)
    assert decode_html(b"") == ("", False)


def test_decode_latin1_from_header_and_meta():
    page = "<html><body>Café déjà vu</body></html>".encode("latin-1")
    assert decode_html(page, "text/html; charset=ISO-8859-1") == (
        "<html><body>Café déjà vu</body></html>",
        False,
    )
    meta = b'<html><head><meta charset="iso-8859-1"></head><body>Caf\xe9</body></html>'
    text, bad = decode_html(meta)
    assert "Café" in text and not bad
    equiv = (
        b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">'
        b"<p>\x93quoted\x94</p>"
    )
    assert "\u201cquoted\u201d" in decode_html(equiv)[0]
    # Without any declaration latin-1 bytes are not UTF-8: the detector reads them (issue 61;
    # before, they were replaced and flagged).
    text, bad = decode_html("Café".encode("latin-1"))
    assert not bad and text == "Café"


def test_decode_header_beats_meta():
    page = '<meta charset="utf-8"><p>日本語</p>'.encode("shift_jis")
    text, bad = decode_html(page, "text/html; charset=Shift_JIS")
    assert "日本語" in text and not bad


@pytest.mark.parametrize("ctype", ["text/html; charset=bogus-9", "text/html; charset=base64", "text/html; charset="])
def test_decode_bogus_charset_falls_back_to_utf8(ctype):
    assert decode_html("naïve".encode(), ctype) == ("naïve", False)
    text, bad = decode_html(b"na\xefve", ctype)  # as undeclared: bytes that are not UTF-8 are detected
    assert not bad and text == "naïve"
    text, bad = decode_html("naïve café ".encode() + b"na\xefve", ctype)  # UTF-8 with a broken byte stays UTF-8
    assert bad and text == "naïve café na\ufffdve"


def test_decode_never_raises_on_junk():
    for junk in (b"\xff\xfe\x00", b"\x00" * 10, bytes(range(256)), b"<meta charset=rot13>"):
        text, bad = decode_html(junk, "text/html; charset=zlib_codec")
        assert isinstance(text, str) and isinstance(bad, bool)


def test_benchmark_pages_extract_fast_and_clean():
    files = sorted((shared_data_or_skip() / "article_extraction_benchmark" / "html").glob("*.html.gz"))
    if not files:
        pytest.skip("article_extraction_benchmark not present")
    pages = [decode_html(gzip.decompress(f.read_bytes()))[0] for f in files]
    start = time.perf_counter()
    results = [extract(p, "http://example.com/") for p in pages]
    per_page = (time.perf_counter() - start) / len(pages)
    assert per_page < 0.1  # generous bound for slow CI; measured ~5 ms/page (170 KB mean)
    assert sum(1 for r in results if len(words(r.text)) > 100) >= 0.9 * len(pages)
    for r in results:
        assert "function(" not in r.text.replace(" ", "")  # no script leaked into text
