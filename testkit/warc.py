"""WARC records built by hand, byte by byte: the hostile and the huge inputs of the tests and of
``bench/ingest_memory.py`` (a generated corpus is written by ``testkit.corpus.writers`` instead).

A record is WARC/1.0 headers, an HTTP response (headers and body) and the closing blank lines;
``gzip_member`` makes one gzip member of it, as a ``.warc.gz`` holds each record.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterable, Iterator
from typing import BinaryIO

# A small well-formed HTML page: one document of a few words.
PAGE = b"<!DOCTYPE html><html><body><p>Hello hostile world of crawls</p></body></html>"

UTF8_HTML = "text/html; charset=utf-8"


def warc_head(rid: int | str, length: int, *, wtype: str = "response", host: str = "example.com",
              extra: str = "") -> bytes:
    """The WARC/1.0 headers of record ``rid`` (record id and target URI derive from it) whose
    block is ``length`` bytes; ``extra`` is inserted as further header lines (each ending in CRLF)."""
    return (
        f"WARC/1.0\r\nWARC-Type: {wtype}\r\nWARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-{int(rid):012d}>\r\n"
        f"WARC-Target-URI: http://{host}/{rid}\r\nWARC-Date: 2024-01-01T00:00:00Z\r\n{extra}"
        f"Content-Type: application/http; msgtype=response\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def http_head(body_length: int, ctype: str = UTF8_HTML) -> bytes:
    """The headers of an HTTP 200 response whose body is ``body_length`` bytes of ``ctype``."""
    return f"HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {body_length}\r\n\r\n".encode()


def http_response(body: bytes, ctype: str = UTF8_HTML) -> bytes:
    """An HTTP 200 response carrying ``body``."""
    return http_head(len(body), ctype) + body


def warc_record(http: bytes, *, rid: str = "1", length: int | None = None, wtype: str = "response",
                host: str = "example.com", extra: str = "") -> bytes:
    """One uncompressed WARC record holding ``http``; ``length`` overrides the declared
    Content-Length (to build a record that lies about its size)."""
    declared = len(http) if length is None else length
    return warc_head(rid, declared, wtype=wtype, host=host, extra=extra) + http + b"\r\n\r\n"


def gzip_member(data: bytes) -> bytes:
    """``data`` as one gzip member with a fixed timestamp (the same bytes on every run)."""
    return gzip.compress(data, mtime=0)


def skip_reasons(rows: list[dict]) -> list[str | None]:
    """Each row's ``skip_reason`` (None for a document), in order."""
    return [r["skip_reason"] for r in rows]


def write_streamed_record(fh: BinaryIO, rid: int, body_parts: Iterable[bytes], body_length: int, *,
                          host: str = "example.com") -> None:
    """One WARC response record as its own gzip member, its HTML body streamed from
    ``body_parts`` (``body_length`` bytes in all): bodies of gigabytes never sit in memory."""
    head = http_head(body_length)
    z = zlib.compressobj(6, zlib.DEFLATED, 31)  # gzip container
    fh.write(z.compress(warc_head(rid, len(head) + body_length, host=host) + head))
    written = 0
    for part in body_parts:
        written += len(part)
        fh.write(z.compress(part))
    assert written == body_length, (written, body_length)
    fh.write(z.compress(b"\r\n\r\n") + z.flush())


def repeated(block: bytes, total: int) -> Iterator[bytes]:
    """``total`` bytes made of ``block`` repeated (the last one cut), 16 MB at a time: the body
    of a decompression bomb when ``block`` is one byte."""
    chunk = block * max(1, (16 << 20) // len(block))
    left = total
    while left > 0:
        yield chunk[:left]
        left -= min(left, len(chunk))


def prose_body(total: int, words: str = "") -> Iterator[bytes]:
    """Exactly ``total`` bytes of an HTML page of paragraphs of varied words drawn from ``words``
    (a stock sentence if empty), so that parsing it is real work."""
    vocabulary = (words or "the quick brown fox jumps over the lazy dog").split()
    opening, closing = b"<html><body>", b"</body></html>"
    body = []
    i = 0
    size = len(opening) + len(closing)
    while size < total:
        para = "<p>" + " ".join(vocabulary[(i * 7 + j) % len(vocabulary)] + str(j % 13) for j in range(60)) + "</p>\n"
        b = para.encode()
        if size + len(b) > total:
            b = b"<p>" + b"x" * max(0, total - size - 7) + b"</p>"
            b = b[: total - size]
        body.append(b)
        size += len(b)
        i += 1
    data = opening + b"".join(body) + closing
    yield data[:total]
