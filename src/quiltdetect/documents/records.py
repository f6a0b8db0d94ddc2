"""WARC / ARC / WET records -> document rows, with skip-and-count semantics (definitions §0).

One output row per input record: a *document* (``skip_reason is None``) or a
*skip row* naming why the record is not one, so a run can report exactly what it
read and dropped. Pure Python (warcio + :mod:`.html` + :mod:`.urls`); the Spark
side calls these generators from inside pandas UDFs and builds its schema from
:data:`ROW_FIELDS`.

Failure policy: a record that fails to parse gives a ``parse_error`` row and the
file continues; a file that becomes unreadable (truncated gzip, a record cut
short, not a WARC at all) gives ONE ``file_error`` row and the file stops, keeping
every row already yielded. Nothing here raises on bad data.

A record cut short is reported wherever the cut falls: in its payload, in its HTTP
headers, in its WARC header block, or so early in its gzip member that nothing of it
decompresses. warcio ends the iteration silently in the last two cases (it takes the
``EOFError`` for the end of the file), so every record that began before the end of
the file has a row (issue 16).
"""

from __future__ import annotations

import re
import uuid
import zlib
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.recordloader import ArcWarcRecordLoader
from warcio.timeutils import timestamp_to_iso_date

from .html import decode_page, extract
from .urls import canonical_host, domain_of, host_of

__all__ = [
    "ROW_FIELDS", "iter_warc_rows", "iter_wet_rows", "count_reasons", "DOCUMENT",
    "SKIP_REQUEST", "SKIP_METADATA", "SKIP_REVISIT", "SKIP_WARCINFO", "SKIP_OTHER_RECORD",
    "SKIP_NOT_HTML", "SKIP_HTTP_STATUS", "SKIP_EMPTY", "SKIP_NO_URL", "SKIP_PARSE_ERROR",
    "SKIP_FILE_ERROR", "SKIP_TOO_LARGE", "SKIP_REASONS",
]

SKIP_REQUEST = "request"
SKIP_METADATA = "metadata"
SKIP_REVISIT = "revisit"
SKIP_WARCINFO = "warcinfo"
SKIP_OTHER_RECORD = "other_record_type"
SKIP_NOT_HTML = "not_html"
SKIP_HTTP_STATUS = "http_status_not_2xx"
SKIP_EMPTY = "empty_payload"
SKIP_NO_URL = "missing_url"
SKIP_PARSE_ERROR = "parse_error"
SKIP_FILE_ERROR = "file_error"
SKIP_TOO_LARGE = "payload_too_large"
SKIP_SEGMENTED = "segmented_record"  # a record split over several (WARC-Segment-Number): not reassembled
SKIP_REASONS: tuple[str, ...] = (
    SKIP_REQUEST, SKIP_METADATA, SKIP_REVISIT, SKIP_WARCINFO, SKIP_OTHER_RECORD,
    SKIP_NOT_HTML, SKIP_HTTP_STATUS, SKIP_EMPTY, SKIP_NO_URL, SKIP_PARSE_ERROR,
    SKIP_FILE_ERROR, SKIP_TOO_LARGE,
)
DOCUMENT = "document"  # count_reasons' key for documents

ROW_FIELDS: tuple[str, ...] = (
    "doc_id", "url", "host", "domain", "ip", "text", "title", "headings", "anchors",
    "meta_keywords", "meta_description", "images", "warc_date", "source", "offset",
    "decode_errors", "skip_reason", "skip_detail", "decoded_as",
)

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TYPE_SKIPS = {
    "request": SKIP_REQUEST,
    "metadata": SKIP_METADATA,
    "revisit": SKIP_REVISIT,
    "warcinfo": SKIP_WARCINFO,
    "arc_header": SKIP_WARCINFO,  # ARC version block (filedesc://)
}
_HTML_SNIFF_RE = re.compile(rb"<!doctype\s+html|<html[\s>]", re.I)
_SNIFF_BYTES = 1024
_READ_CHUNK = 1 << 20


class _FileBroken(Exception):
    """The underlying file ended or failed inside a record: stop this file."""


class _RecordCut(Exception):
    """The file (or gzip member) ended inside a record's headers."""

    def __init__(self, message: str, url: str | None) -> None:
        super().__init__(message)
        self.url = url


class _StrictLoader(ArcWarcRecordLoader):
    """warcio's loader, except that a record whose HTTP headers are cut off raises.

    warcio's ArchiveIterator takes any ``EOFError`` from the loader for the end of the
    file, so a record whose header block was read but whose HTTP headers are missing
    vanished without a trace (and a later gzip member was read as the next record).
    """

    def load_http_headers(self, rec_type: Any, uri: Any, stream: Any, length: Any) -> Any:
        try:
            return super().load_http_headers(rec_type, uri, stream, length)
        except EOFError as exc:
            raise _RecordCut(
                f"record cut short: the {rec_type} record ends inside its HTTP headers",
                (uri or "").strip() or None,
            ) from exc


class _Archive(ArchiveIterator):
    def __init__(self, fileobj: Any) -> None:
        super().__init__(fileobj)
        self.loader = _StrictLoader(verify_http=False, arc2warc=False)


_TAIL_BYTES = 1 << 20  # how much of the end of a file is kept to judge what follows the last record


class _CountingStream:
    """Counts the bytes read from ``raw`` and keeps the last ``_TAIL_BYTES`` of them."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.pos = 0
        self._chunks: deque[bytes] = deque()
        self._kept = 0

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        if data:
            self.pos += len(data)
            self._chunks.append(bytes(data))
            self._kept += len(data)
            while self._chunks and self._kept - len(self._chunks[0]) >= _TAIL_BYTES:
                self._kept -= len(self._chunks.popleft())
        return data

    def tell(self) -> int:
        return self.pos

    def last(self, n: int) -> bytes | None:
        """The last ``n`` bytes read, or None if they are no longer kept."""
        if n > self._kept:
            return None
        return b"".join(self._chunks)[self._kept - n:]


def _is_padding(data: bytes) -> bool:
    """True if ``data`` holds no record: whitespace, or whole gzip members of whitespace."""
    while data.strip():
        if not data.startswith(b"\x1f\x8b"):
            return False
        dec = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out = dec.decompress(data)
        except zlib.error:
            return False
        if not dec.eof or out.strip():
            return False
        data = dec.unused_data
    return True


def _unread_record(stream: _CountingStream, records: ArchiveIterator) -> str | None:
    """Why the iteration ended before the end of the file, or None if it did not.

    ``records.offset`` is where the last complete record ended; bytes after it that are
    not padding are the start of a record warcio could not read (cut short).
    """
    while stream.read(_READ_CHUNK):  # warcio stops at the end of the file; make sure
        pass
    end = getattr(records, "offset", None)
    if not isinstance(end, int) or end >= stream.pos:
        return None
    tail = stream.last(stream.pos - end)
    if tail is not None and _is_padding(tail):
        return None
    return (
        f"record cut short: the file ends inside the record at byte {end} "
        f"({stream.pos - end} bytes of it, no complete header block)"
    )


WHOLE_GZIP = "non-chunked gzip file detected"  # warcio's words for a WARC gzipped whole
ZSTD_FRAME = b"\x28\xb5\x2f\xfd"
ZSTD_DICTIONARY_FRAME = 0x184D2A5D  # the skippable frame that carries a .warc.zst's dictionary


def is_whole_gzip(row: dict) -> bool:
    """A skip row saying warcio met a WARC gzipped as one member (``gzip crawl.warc``)."""
    return row.get("skip_reason") == SKIP_FILE_ERROR and WHOLE_GZIP in (row.get("skip_detail") or "")


class _Prefixed:
    """``head`` then the rest of ``raw``: the bytes read to sniff a header, given back."""

    def __init__(self, head: bytes, raw: BinaryIO) -> None:
        self.head, self.raw = head, raw

    def read(self, size: int = -1) -> bytes:
        if not self.head:
            return self.raw.read(size)
        if size is None or size < 0:
            data, self.head = self.head + self.raw.read(), b""
            return data
        data, self.head = self.head[:size], self.head[size:]
        return data if len(data) == size else data + self.raw.read(size - len(data))


def zstd_stream(raw: BinaryIO) -> BinaryIO:
    """The decompressed bytes of a zstandard file (``.warc.zst``: a frame per record), with the
    dictionary the WARC zstd format may carry in a first skippable frame (itself plain or
    zstd-compressed)."""
    import zstandard

    head = raw.read(8)
    dictionary = None
    if len(head) == 8 and int.from_bytes(head[:4], "little") == ZSTD_DICTIONARY_FRAME:
        data = raw.read(int.from_bytes(head[4:], "little"))
        if data[:4] == ZSTD_FRAME:
            data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
        dictionary = zstandard.ZstdCompressionDict(data)
        body: Any = raw
    else:
        body = _Prefixed(head, raw)
    return zstandard.ZstdDecompressor(dict_data=dictionary).stream_reader(body, read_across_frames=True)


def decompressed(stream: BinaryIO, source: str, *, whole_gzip: bool = False) -> BinaryIO:
    """The stream a record reader parses: ``.zst`` files through zstandard; a WARC gzipped
    whole through one gzip stream (``whole_gzip``); others as they are (warcio reads gzip
    members itself, one per record)."""
    if whole_gzip:
        import gzip

        return gzip.GzipFile(fileobj=stream, mode="rb")
    if source.lower().endswith(".zst"):
        return zstd_stream(stream)
    return stream


def _detail(value: object) -> str:
    """A message as stored in a skip row: one line, whole (a cut message hides its advice)."""
    return str(value).strip().replace("\n", " ")


def _exc_detail(exc: BaseException) -> str:
    return _detail(f"{type(exc).__name__}: {exc}")


def _row(source: str, offset: int, **values: Any) -> dict:
    """A row with every ROW_FIELDS key; unspecified fields empty/None."""
    row: dict[str, Any] = {
        "doc_id": None, "url": None, "host": "", "domain": "", "ip": None, "text": None,
        "title": None, "headings": [], "anchors": [], "meta_keywords": None,
        "meta_description": None, "images": [], "warc_date": None, "source": source,
        "offset": offset, "decode_errors": False, "skip_reason": None, "skip_detail": None,
        "decoded_as": None,
    }
    row.update(values)
    return row


def _stable_id(url: str | None, date: str | None, offset: int) -> str:
    """A deterministic record id for records that carry none (ARC, malformed WARC)."""
    name = f"{url or ''} {date or ''} {offset}"
    return f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, name)}>"


def _identity(rec: Any, offset: int) -> dict:
    """doc_id, url, ip, warc_date of a record (WARC headers, or ARC's converted)."""
    h = rec.rec_headers
    if rec.format == "arc":
        url = h.get_header("uri")
        ip = h.get_header("ip-address")
        stamp = h.get_header("archive-date")
        try:
            date = timestamp_to_iso_date(stamp) if stamp else None
        except Exception:
            date = stamp
        doc_id = None
    else:
        url = h.get_header("WARC-Target-URI")
        ip = h.get_header("WARC-IP-Address")
        date = h.get_header("WARC-Date")
        doc_id = h.get_header("WARC-Record-ID")
    url = url.strip() if url else None
    ip = canonical_host(ip.strip().strip("[]")) if ip and ip.strip() and ip.strip() != "-" else None
    if not doc_id:
        doc_id = _stable_id(url, date, offset)
    return {"doc_id": doc_id, "url": url or None, "ip": ip, "warc_date": date}


_DIGITS_RE = re.compile(r"^\d+$")
_ARC_DATE_RE = re.compile(r"^\d{8,17}$")


def _check_framing(rec: Any) -> None:
    """Raise _FileBroken unless the record header can delimit the record.

    warcio accepts a header block cut by end-of-file, or random text that happens
    to have five fields (an "ARC" line); without a valid length the record's end,
    and so every later record, is unknown.
    """
    h = rec.rec_headers
    if rec.format == "arc":
        length = (h.get_header("length") or "").strip()
        date = (h.get_header("archive-date") or "").strip()
        uri = h.get_header("uri") or ""
        if not (_DIGITS_RE.match(length) and _ARC_DATE_RE.match(date) and ":" in uri):
            raise _FileBroken("not a valid ARC record header (not an ARC/WARC file?)")
        return
    length = (h.get_header("Content-Length") or "").strip()
    if not _DIGITS_RE.match(length) or not h.get_header("WARC-Type"):
        raise _FileBroken("WARC header block without WARC-Type/Content-Length (cut short?)")


def _read_upto(stream: Any, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``stream`` (fewer only at its end)."""
    parts: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = stream.read(min(remaining, _READ_CHUNK))
        if not chunk:
            break
        parts.append(chunk)
        remaining -= len(chunk)
    return b"".join(parts)


def _drain(rec: Any) -> None:
    """Consume the rest of the record; raise _FileBroken if the file ends inside it."""
    raw = rec.raw_stream
    try:
        while raw.read(_READ_CHUNK):
            pass
    except Exception as exc:  # zlib/gzip/OS errors in the container itself
        raise _FileBroken(_exc_detail(exc)) from exc
    missing = getattr(raw, "limit", 0) or 0
    if missing > 0:  # Content-Length promised more bytes than the file holds
        raise _FileBroken(f"record truncated: {missing} bytes missing (file cut short)")


def _read_payload(rec: Any, max_payload_bytes: int) -> bytes | None:
    """The HTTP payload (transfer/content-decoded), or None if over the cap."""
    data = _read_upto(rec.content_stream(), max_payload_bytes + 1)
    return None if len(data) > max_payload_bytes else data


def _warc_record_row(rec: Any, source: str, offset: int, ident: dict, max_payload: int) -> dict:
    rec_type = rec.rec_type
    if rec_type != "response":
        reason = _TYPE_SKIPS.get(rec_type, SKIP_OTHER_RECORD)
        return _row(source, offset, **ident, skip_reason=reason, skip_detail=_detail(rec_type))
    segment = rec.rec_headers.get_header("WARC-Segment-Number")
    if segment is not None:  # one part of a payload split over records: half a page is no page
        return _row(source, offset, **ident, skip_reason=SKIP_SEGMENTED,
                    skip_detail=_detail(f"segment {segment} of a record split across records (not reassembled)"))
    if not ident["url"]:
        return _row(source, offset, **ident, skip_reason=SKIP_NO_URL, skip_detail="response")
    http = rec.http_headers
    if http is None:  # e.g. dns: records: a response, but not HTTP
        ctype = rec.rec_headers.get_header("Content-Type") or ""
        return _row(source, offset, **ident, skip_reason=SKIP_NOT_HTML, skip_detail=_detail(ctype))
    status = http.get_statuscode()
    if not (status and status.isdigit() and 200 <= int(status) < 300):
        return _row(
            source, offset, **ident, skip_reason=SKIP_HTTP_STATUS,
            skip_detail=_detail(http.statusline or status),
        )
    ctype = http.get_header("Content-Type")
    mime = ctype.split(";", 1)[0].strip().lower() if ctype else ""
    if mime and mime not in HTML_TYPES:
        return _row(source, offset, **ident, skip_reason=SKIP_NOT_HTML, skip_detail=_detail(ctype))
    payload = _read_payload(rec, max_payload)
    if payload is None:
        return _row(
            source, offset, **ident, skip_reason=SKIP_TOO_LARGE,
            skip_detail=f"payload > {max_payload} bytes",
        )
    if not payload.strip():
        return _row(source, offset, **ident, skip_reason=SKIP_EMPTY, skip_detail=_detail(ctype or ""))
    if not mime and not _HTML_SNIFF_RE.search(payload[:_SNIFF_BYTES]):
        return _row(
            source, offset, **ident, skip_reason=SKIP_NOT_HTML,
            skip_detail="no content type; payload does not look like HTML",
        )
    decoded = decode_page(payload, ctype)
    html, decode_errors = decoded.text, decoded.lenient
    fields = extract(html, ident["url"])
    host = host_of(ident["url"])
    return _row(
        source, offset, **ident, host=host, domain=domain_of(host), text=fields.text,
        title=fields.title, headings=list(fields.headings),
        anchors=[{"text": t, "href": h} for t, h in fields.anchors],
        meta_keywords=fields.meta_keywords, meta_description=fields.meta_description,
        images=list(fields.images), decode_errors=decode_errors, decoded_as=decoded.chosen,
    )


def _wet_record_row(rec: Any, source: str, offset: int, ident: dict, max_payload: int) -> dict:
    rec_type = rec.rec_type
    if rec_type != "conversion":
        reason = _TYPE_SKIPS.get(rec_type, SKIP_OTHER_RECORD)
        return _row(source, offset, **ident, skip_reason=reason, skip_detail=_detail(rec_type))
    if not ident["url"]:
        return _row(source, offset, **ident, skip_reason=SKIP_NO_URL, skip_detail="conversion")
    data = _read_upto(rec.content_stream(), max_payload + 1)
    if len(data) > max_payload:
        return _row(
            source, offset, **ident, skip_reason=SKIP_TOO_LARGE,
            skip_detail=f"payload > {max_payload} bytes",
        )
    if not data.strip():
        return _row(source, offset, **ident, skip_reason=SKIP_EMPTY, skip_detail="conversion")
    try:
        text, decode_errors = data.decode("utf-8"), False
    except UnicodeDecodeError:
        text, decode_errors = data.decode("utf-8", errors="replace"), True
    if text.startswith("\ufeff"):
        text = text[1:]
    host = host_of(ident["url"])
    return _row(
        source, offset, **ident, host=host, domain=domain_of(host), text=text.strip(),
        title="", meta_keywords="", meta_description="", decode_errors=decode_errors,
    )


def _iter_rows(stream: BinaryIO, source: str, max_payload: int, record_row: Any) -> Iterator[dict]:
    offset = 0
    counted = _CountingStream(stream)
    try:
        archive = _Archive(counted)
        records = iter(archive)
    except Exception as exc:
        yield _row(source, offset, skip_reason=SKIP_FILE_ERROR, skip_detail=_exc_detail(exc))
        return
    while True:
        try:
            rec = next(records)
        except StopIteration:
            try:
                cut = _unread_record(counted, archive)
            except Exception as exc:
                cut = _exc_detail(exc)
            if cut:
                yield _row(source, offset, skip_reason=SKIP_FILE_ERROR, skip_detail=_detail(cut))
            return
        except _RecordCut as exc:
            yield _row(source, offset, url=exc.url, skip_reason=SKIP_FILE_ERROR, skip_detail=_detail(exc))
            return
        except Exception as exc:  # not a WARC, bad gzip, cut inside a header block
            yield _row(source, offset, skip_reason=SKIP_FILE_ERROR, skip_detail=_exc_detail(exc))
            return
        ident: dict = {}
        try:
            _check_framing(rec)
        except _FileBroken as exc:
            yield _row(source, offset, skip_reason=SKIP_FILE_ERROR, skip_detail=_detail(exc))
            return
        except Exception as exc:
            yield _row(source, offset, skip_reason=SKIP_FILE_ERROR, skip_detail=_exc_detail(exc))
            return
        try:
            ident = _identity(rec, offset)
            row = record_row(rec, source, offset, ident, max_payload)
        except Exception as exc:
            row = _row(source, offset, **ident, skip_reason=SKIP_PARSE_ERROR,
                       skip_detail=_exc_detail(exc))
        try:
            _drain(rec)  # a record cut short means the file is broken from here on
        except _FileBroken as exc:
            yield _row(source, offset, **ident, skip_reason=SKIP_FILE_ERROR, skip_detail=_detail(exc))
            return
        yield row
        offset += 1


def iter_warc_rows(
    stream: BinaryIO, source: str, max_payload_bytes: int = 50_000_000
) -> Iterator[dict]:
    """One row per record of a WARC/ARC file (gzipped or not).

    HTTP 2xx ``response`` records with an HTML payload (``text/html``,
    ``application/xhtml+xml``, or no content type and an ``<html``/doctype start)
    become documents; everything else is a skip row with its reason. ``offset``
    counts every record from 0. Payloads above ``max_payload_bytes`` are skipped
    without being held in memory. Never raises on bad data.
    """
    return _iter_rows(stream, source, max_payload_bytes, _warc_record_row)


def iter_wet_rows(
    stream: BinaryIO, source: str, max_payload_bytes: int = 50_000_000
) -> Iterator[dict]:
    """One row per record of a WET file: ``conversion`` records are documents.

    The document text is the record payload (UTF-8, undecodable bytes replaced);
    the HTML-only fields are empty. Other records are skip rows.
    """
    return _iter_rows(stream, source, max_payload_bytes, _wet_record_row)


def count_reasons(rows: Iterable[dict]) -> dict[str, int]:
    """How many rows per skip reason, documents under ``"document"``."""
    return dict(Counter(row.get("skip_reason") or DOCUMENT for row in rows))
