"""HTML -> visible text and the page fields some analyses need (definitions §0, §2, §5).

Pure Python on top of selectolax's Lexbor backend, so that the heavy lifting
(parsing, dropping script/style/..., CSS selection, text concatenation) runs in C.
Called from inside pandas UDFs, so every public function here is total: garbage
in, empty fields out, never an exception.

Word rule (definitions §0 "Markup is not text"): script, style, noscript, template, svg
and comments produce no words; block-level elements separate words (a newline in
``text``) while inline elements do not (``Hel<b>lo</b>`` is one word "Hello").
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from urllib.parse import urljoin

from selectolax.lexbor import LexborHTMLParser

__all__ = ["HtmlFields", "extract", "decode_html", "BLOCK_TAGS", "INVISIBLE_TAGS"]

# Elements whose content is never visible text (removed with their subtree).
INVISIBLE_TAGS: tuple[str, ...] = (
    "script", "style", "noscript", "template", "svg", "math", "head", "iframe",
)
# Elements that start/end a block: words never run across their boundaries.
BLOCK_TAGS: tuple[str, ...] = (
    "p", "div", "li", "h1", "h2", "h3", "h4", "h5", "h6", "br", "tr", "td", "th",
    "table", "thead", "tbody", "tfoot", "caption", "section", "article", "header",
    "footer", "nav", "aside", "main", "blockquote", "pre", "ul", "ol", "dl", "dt",
    "dd", "form", "fieldset", "legend", "hr", "title", "address", "figure",
    "figcaption", "details", "summary", "center", "menu", "dir", "hgroup", "option",
    "optgroup", "textarea", "body", "frameset", "frame", "noframes", "listing",
    "plaintext", "xmp", "dialog", "search",
)
_BLOCK_SELECTOR = ",".join(BLOCK_TAGS)
_HEADING_SELECTOR = "h1,h2,h3,h4,h5,h6"
# Private-use character marking our block boundaries inside Lexbor's text output;
# removed from the input first so it cannot come from the page itself.
_SEP = "\ue000"
_SEP_RUN_RE = re.compile(" ?\ue000[ \ue000]*")
_SKIP_URL_SCHEMES = ("javascript:", "data:", "vbscript:", "about:")


@dataclass(frozen=True)
class HtmlFields:
    """What :func:`extract` finds in one page (all empty for unparsable input)."""

    text: str = ""
    title: str = ""
    headings: list[str] = field(default_factory=list)
    anchors: list[tuple[str, str]] = field(default_factory=list)  # (anchor text, absolute URL)
    meta_keywords: str = ""
    meta_description: str = ""
    images: list[str] = field(default_factory=list)  # absolute IMG src URLs


def _squash(s: str | None) -> str:
    """Collapse all whitespace (and our separators) to single spaces, stripped."""
    if not s:
        return ""
    return " ".join(s.replace(_SEP, " ").split())


def _absolute(base: str, ref: str | None) -> str:
    """``ref`` resolved against ``base``; "" for empty or script/data pseudo-URLs."""
    if ref is None:
        return ""
    ref = ref.strip()
    if not ref or ref.lower().startswith(_SKIP_URL_SCHEMES):
        return ""
    head = ref[:8].lower()
    if head.startswith(("http://", "https://")) or not base:
        return ref  # already absolute (the common case): skip urljoin's cost
    try:
        return urljoin(base, ref)
    except ValueError:  # e.g. a malformed IPv6 netloc
        return ref


def extract(html: str, base_url: str = "") -> HtmlFields:
    """Visible body text, title, headings, anchors, meta fields and images of a page.

    ``base_url`` (the page URL) makes anchor and image URLs absolute; a ``<base
    href>`` in the page takes precedence as browsers do. Never raises.
    """
    if not html or not isinstance(html, str):
        return HtmlFields()
    try:
        return _extract(html, base_url or "")
    except Exception:  # selectolax/Lexbor on pathological input: empty, not a crash
        return HtmlFields()


def _extract(html: str, base_url: str) -> HtmlFields:
    if _SEP in html:
        html = html.replace(_SEP, "")
    tree = LexborHTMLParser(html)

    # Fields from <head> first: the head is dropped before the text pass.
    title_node = (tree.head.css_first("title") if tree.head is not None else None) or tree.css_first(
        "title"
    )
    title = _squash(title_node.text(deep=True)) if title_node is not None else ""
    meta_keywords = meta_description = ""
    for meta in tree.css("meta[name]"):
        name = (meta.attributes.get("name") or "").strip().lower()
        if name == "keywords" and not meta_keywords:
            meta_keywords = _squash(meta.attributes.get("content"))
        elif name == "description" and not meta_description:
            meta_description = _squash(meta.attributes.get("content"))
    base_node = tree.css_first("base[href]")
    if base_node is not None:
        base_url = _absolute(base_url, base_node.attributes.get("href")) or base_url

    # Invisible subtrees go in C; comments are not text nodes, so text() skips them.
    tree.strip_tags(list(INVISIBLE_TAGS), recursive=True)
    # Mark block boundaries: one C-side selection, two cheap inserts per block element.
    for node in tree.css(_BLOCK_SELECTOR):
        node.insert_before(_SEP)
        node.insert_after(_SEP)

    body = tree.body if tree.body is not None else tree.root
    raw = body.text(deep=True) if body is not None else ""
    text = _SEP_RUN_RE.sub("\n", " ".join(raw.split())).strip()

    headings = [h for h in (_squash(n.text(deep=True)) for n in tree.css(_HEADING_SELECTOR)) if h]
    anchors: list[tuple[str, str]] = []
    for a in tree.css("a[href]"):
        href = _absolute(base_url, a.attrs.get("href"))
        if href:
            anchors.append((_squash(a.text(deep=True)), href))
    images: list[str] = []
    for img in tree.css("img[src]"):
        src = _absolute(base_url, img.attrs.get("src"))
        if src:
            images.append(src)

    return HtmlFields(
        text=text,
        title=title,
        headings=headings,
        anchors=anchors,
        meta_keywords=meta_keywords,
        meta_description=meta_description,
        images=images,
    )


# --------------------------------------------------------------------------- decoding

_CT_CHARSET_RE = re.compile(rb"""charset\s*=\s*["']?\s*([^"'\s;,>/]+)""", re.I)
_META_CHARSET_RE = re.compile(
    rb"""<meta[^>]*?charset\s*=\s*["']?\s*([^"'\s;,>/]+)""", re.I
)
_SNIFF_BYTES = 4096
# WHATWG Encoding Standard label mappings that Python's codec names get wrong:
# browsers decode "latin-1"/"ascii" pages as windows-1252, Shift_JIS as cp932, etc.
_CHARSET_ALIASES = {
    "iso-8859-1": "cp1252", "iso8859-1": "cp1252", "latin1": "cp1252",
    "latin-1": "cp1252", "l1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252",
    "iso-8859-9": "cp1254", "latin5": "cp1254", "tis-620": "cp874",
    "iso-8859-11": "cp874", "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030",
    "gb_2312-80": "gb18030", "shift_jis": "cp932", "shift-jis": "cp932",
    "sjis": "cp932", "x-sjis": "cp932", "ms_kanji": "cp932", "windows-31j": "cp932",
    "euc-kr": "cp949", "ks_c_5601-1987": "cp949", "big5": "big5hkscs",
    "x-mac-roman": "mac-roman", "unicode-1-1-utf-8": "utf-8", "utf8": "utf-8",
    # Encodings a page may not legitimately declare in-band: treat as UTF-8.
    "utf-7": "utf-8", "x-user-defined": "cp1252",
}


def _codec_for(label: bytes | str | None) -> str | None:
    """A Python text codec name for a charset label, or None if unknown/bogus."""
    if not label:
        return None
    if isinstance(label, bytes):
        label = label.decode("ascii", "ignore")
    name = label.strip().strip("\"'").lower()
    if not name:
        return None
    name = _CHARSET_ALIASES.get(name, name)
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError):
        return None
    if not getattr(info, "_is_text_encoding", True):  # base64, rot13, zlib, ...
        return None
    return info.name


def _bom(payload: bytes) -> tuple[str, int] | None:
    """(codec, bytes to skip) of a byte order mark, or None."""
    if payload.startswith(codecs.BOM_UTF8):
        return "utf-8", 3
    if payload.startswith(codecs.BOM_UTF16_LE) or payload.startswith(codecs.BOM_UTF16_BE):
        return "utf-16", 0  # the utf-16 codec consumes its BOM
    return None


def _declared(payload: bytes, content_type: str | None) -> str | None:
    """The codec a page declares: its ``Content-Type`` header's charset, else a ``<meta
    charset>`` / ``http-equiv`` in the first 4 KB (an in-band UTF-16 label means UTF-8, as for
    browsers); a UTF-16/32 declaration on bytes without a single NUL (every ASCII character of
    such text has one) is wrong, and the page is read as undeclared by its header."""
    codec = None
    if content_type:
        m = _CT_CHARSET_RE.search(content_type.encode("latin-1", "ignore"))
        codec = _codec_for(m.group(1)) if m else None
    if codec is None or codec.startswith(("utf-16", "utf-32")) and b"\x00" not in payload[:4096]:
        m = _META_CHARSET_RE.search(payload[:_SNIFF_BYTES])
        codec = _codec_for(m.group(1)) if m else None
        if codec and codec.startswith(("utf-16", "utf-32")):
            codec = "utf-8"
    return codec


@dataclass(frozen=True)
class Decoded:
    """A page's text, whether undecodable bytes were replaced (U+FFFD), and, when its bytes did
    not fit what the page declared, which encoding was taken instead (``None`` otherwise)."""

    text: str
    lenient: bool
    chosen: str | None = None


def _strict(data: bytes, codec: str) -> str | None:
    try:
        return data.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


# Encodings of the web (the WHATWG Encoding Standard's legacy ones), most used first: when the
# detector finds several that read the bytes equally well (a German page without a declaration
# reads alike in windows-1250 and windows-1252), the first of these among them is taken.
_WEB_ENCODINGS = ("cp1252", "cp1251", "gb18030", "cp932", "euc_jp", "cp949", "big5hkscs", "cp1250", "cp1254",
                  "cp1256", "cp1253", "cp1255", "cp1257", "cp1258", "cp874", "koi8_r", "koi8_u", "iso8859_2")


def _detected(data: bytes) -> str | None:
    """The encoding a maintained detector (charset-normalizer) finds for bytes that fit no
    declaration, as a Python codec name; among equally good readings, the web's most used."""
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data[:_DETECT_BYTES]))
    if not matches:
        return None
    best = matches[0]
    tied = {codecs.lookup(m.encoding).name for m in matches
            if m.chaos == best.chaos and m.coherence == best.coherence}
    for name in _WEB_ENCODINGS:
        if codecs.lookup(name).name in tied:
            return codecs.lookup(name).name
    return _codec_for(best.encoding)


def _mostly_utf8(data: bytes) -> bool:
    """Whether bytes that are not valid UTF-8 hold more valid UTF-8 characters beyond ASCII
    than broken sequences: UTF-8 with a few broken bytes, or mostly UTF-8 mixed with another
    encoding, which another encoding would garble whole. (GBK or EUC-JP bytes form valid UTF-8
    pairs by chance, but far fewer than broken ones.)"""
    text = data.decode("utf-8", errors="replace")
    broken = text.count("\ufffd")
    return len(text) - len(text.encode("ascii", errors="ignore")) - broken > broken


def _enough_to_detect(data: bytes, least: int = 32) -> bool:
    """Whether the bytes hold enough beyond ASCII for a detector to tell encodings apart; with
    fewer, windows-1252 (the web's default for a page without a usable declaration) is taken."""
    return len(data) - len(data.decode("latin-1").encode("ascii", errors="ignore")) >= least


_DETECT_BYTES = 1 << 16  # the detector reads at most the first 64 KB

# Russian, Ukrainian or Bulgarian text in windows-1251 or KOI8-R declared windows-1252 (or
# ISO-8859-1, which browsers read as it) decodes without an error, every byte being a letter of
# windows-1252: it is read as a Cyrillic encoding when its letters beyond ASCII mostly form words
# of their own (``_own_words``), and a Cyrillic reading turns its words into plain Cyrillic words.
_CYRILLIC_PAGES = ("cp1251", "koi8_r")
_LETTERS = re.compile(r"[^\W\d_]+")
_BEYOND_ASCII = re.compile(r"[^\W\d_\x00-\x7f]+")  # runs of letters beyond ASCII
_OWN_WORDS = re.compile(r"(?<![^\W\d_])[^\W\d_\x00-\x7f]{3,}(?![^\W\d_])")  # ... that are whole words


def _own_words(text: str) -> bool:
    """Whether most letters beyond ASCII of ``text`` (its first 64 KB) sit in words of at least 3
    letters with no ASCII letter: in windows-1252, Cyrillic, Greek, Arabic or Hebrew read in
    another code page (``Ïðèâåò``); Western European words mix their accented letters with ASCII
    ones (``été``)."""
    sample = text[:_DETECT_BYTES]
    beyond = sum(map(len, _BEYOND_ASCII.findall(sample)))
    own = sum(map(len, _OWN_WORDS.findall(sample)))
    return beyond > 0 and 2 * own > beyond


def _cyrillic_reading(text: str) -> tuple[float, float]:
    """Of the words of ``text`` (its first 64 KB) with letters beyond ASCII: the share that are Cyrillic words in
    lower case, title case or capitals, and the share in lower or title case."""
    found = [w for w in _LETTERS.findall(text[:_DETECT_BYTES]) if len(w) >= 2 and not w.isascii()]
    if not found:
        return 0.0, 0.0
    cyrillic = [w for w in found if all("\u0400" <= c <= "\u04ff" for c in w)]
    cased = sum(1 for w in cyrillic if w.islower() or w.istitle() or w.isupper())
    small = sum(1 for w in cyrillic if w.islower() or w.istitle())
    return cased / len(found), small / len(found)


def _misread_cyrillic(data: bytes, text: str) -> tuple[str, str] | None:
    """(codec, text) when ``data``, which ``text`` reads in windows-1252, is Cyrillic text in
    windows-1251 or KOI8-R: enough bytes beyond ASCII to tell (``_enough_to_detect``), most of
    its letters beyond ASCII in words of their own, and a reading whose words are at least 90 %
    plain Cyrillic words; of the two, the one with more words in lower or title case (each reads
    the other's text as capitals)."""
    if not _enough_to_detect(data) or not _own_words(text):
        return None
    best: tuple[float, str, str] | None = None
    for codec in _CYRILLIC_PAGES:
        reading = _strict(data, codec)
        if reading is None:
            continue
        cased, small = _cyrillic_reading(reading)
        if cased >= 0.9 and (best is None or small > best[0]):
            best = (small, codecs.lookup(codec).name, reading)
    return (best[1], best[2]) if best else None


def decode_page(payload: bytes, content_type: str | None = None) -> Decoded:
    """Decode an HTML payload by the encoding its bytes fit. Never raises.

    A byte order mark decides. Else the declared encoding (``_declared``: the header, else a
    ``<meta>``, else UTF-8) is taken when the bytes fit it, with two corrections, each noted in
    ``chosen`` (and counted by the ingest stage):

    * bytes that are valid UTF-8 with a character beyond ASCII are UTF-8, whatever a header or
      ``<meta>`` says (a legacy single-byte or CJK encoding essentially never yields valid
      UTF-8 by chance, while pages re-encoded to UTF-8 and still declaring windows-1252 or
      Shift_JIS are common);
    * bytes that do not decode in the declared encoding (Shift_JIS or GBK declared as UTF-8,
      windows-1252 undeclared) are decoded by the encoding a detector (charset-normalizer)
      finds, when they decode in it without error; else in the declared one, with U+FFFD for
      what does not fit (``lenient``);
    * bytes declared windows-1252 (or ISO-8859-1 or US-ASCII, which browsers read as it) that
      are Cyrillic text in windows-1251 or KOI8-R (``_misread_cyrillic``) are read in that one:
      they decode in windows-1252 too, as mojibake (``Ïðèâåò``).
    """
    if not payload:
        return Decoded("", False)
    if not isinstance(payload, (bytes, bytearray, memoryview)):
        return Decoded(payload if isinstance(payload, str) else "", False)
    payload = bytes(payload)
    try:
        declared = _declared(payload, content_type)
        bom = _bom(payload)
        if bom is not None:
            codec, skip = bom
            text = _strict(payload[skip:], codec)
            if text is None:
                return Decoded(payload[skip:].decode(codec, errors="replace"), True)
            other = declared is not None and codecs.lookup(declared).name != codecs.lookup(codec).name
            return Decoded(text, False, f"{codec} by its BOM, not {codecs.lookup(declared).name}" if other else None)
        name = codecs.lookup(declared or "utf-8").name
        if name != "utf-8" and not payload.isascii():
            text = _strict(payload, "utf-8")
            if text is not None:
                return Decoded(text, False, f"utf-8, not {name}")
        text = _strict(payload, name)
        if text is not None:
            cyrillic = _misread_cyrillic(payload, text) if name == "cp1252" and not payload.isascii() else None
            if cyrillic is not None:
                return Decoded(cyrillic[1], False, f"{cyrillic[0]}, not {name}")
            return Decoded(text, False)
        if name == "utf-8" and _mostly_utf8(payload):
            return Decoded(payload.decode("utf-8", errors="replace"), True)
        found = _detected(payload) if _enough_to_detect(payload) else "cp1252"
        if found and codecs.lookup(found).name != name:
            text = _strict(payload, found)
            if text is not None:
                return Decoded(text, False, f"{codecs.lookup(found).name}, not {name}"
                               + ("" if declared else " (undeclared)"))
        return Decoded(payload.decode(name, errors="replace"), True)
    except Exception:  # a codec or the detector failing in an unexpected way: UTF-8, leniently
        text = _strict(payload, "utf-8")
        return Decoded(text, False) if text is not None else Decoded(payload.decode("utf-8", errors="replace"), True)


def decode_html(payload: bytes, content_type: str | None = None) -> tuple[str, bool]:
    """(text, whether undecodable bytes were replaced) of an HTML payload (``decode_page``)."""
    decoded = decode_page(payload, content_type)
    return decoded.text, decoded.lenient
