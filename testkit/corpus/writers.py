"""Corpus writers: the crawl as WARC or as a table (JSON Lines, Parquet), and the ground truth.

Every writer is byte-for-byte deterministic: the same corpus gives the same file.
"""

from __future__ import annotations

import io
import json
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from .model import NAMESPACE
from .render import render_html

if TYPE_CHECKING:
    from .model import Corpus, Page, Site

__all__ = ["write_corpus_table", "write_truth", "write_warc"]


def _warc_date(d: datetime) -> str:
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


def _warcinfo_record(writer, corpus: Corpus, path: Path):
    """The warcinfo record that opens the file: generator, seed and page count."""
    info = (
        "software: quiltdetect.corpus.generate\r\n"
        "format: WARC File Format 1.0\r\n"
        f"description: synthetic corpus with planted quilts, seed={corpus.seed}, pages={len(corpus.pages)}\r\n"
    ).encode()
    first = corpus.pages[0].date if corpus.pages else datetime(2024, 3, 1, tzinfo=timezone.utc)
    return writer.create_warc_record(
        "",
        "warcinfo",
        payload=io.BytesIO(info),
        length=len(info),
        warc_content_type="application/warc-fields",
        warc_headers_dict={
            "WARC-Record-ID": f"<urn:uuid:{uuid.uuid5(NAMESPACE, f'{corpus.seed}:warcinfo')}>",
            "WARC-Date": _warc_date(first),
            "WARC-Filename": path.name,
        },
    )


def _page_records(writer, seed: int, p: Page, site: Site) -> tuple:
    """The request record and the response record (HTTP headers and HTML) of one page on
    ``site``; the response's record id is the page id."""
    from warcio.statusandheaders import StatusAndHeaders

    date = _warc_date(p.date)
    host = p.url.split("/")[2]
    req_path = "/" + p.url.split("/", 3)[3]
    req_id = f"<urn:uuid:{uuid.uuid5(NAMESPACE, f'{seed}:request:{p.index}')}>"
    req_headers = StatusAndHeaders(
        f"GET {req_path} HTTP/1.1",
        [("Host", host), ("User-Agent", "quiltdetect-synth/0.1"), ("Accept", "text/html")],
        is_http_request=True,
    )
    req = writer.create_warc_record(
        p.url,
        "request",
        http_headers=req_headers,
        warc_headers_dict={
            "WARC-Record-ID": req_id,
            "WARC-Date": date,
            "WARC-IP-Address": p.ip,
        },
    )
    body = render_html(p, site).encode("utf-8")
    http_headers = StatusAndHeaders(
        "200 OK",
        [
            ("Date", p.date.strftime("%a, %d %b %Y %H:%M:%S GMT")),
            ("Server", "nginx"),
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Length", str(len(body))),
        ],
        protocol="HTTP/1.1",
    )
    resp = writer.create_warc_record(
        p.url,
        "response",
        payload=io.BytesIO(body),
        length=len(body),
        http_headers=http_headers,
        warc_headers_dict={
            "WARC-Record-ID": p.id,
            "WARC-Date": date,
            "WARC-IP-Address": p.ip,
            "WARC-Concurrent-To": req_id,
        },
    )
    return req, resp


def write_warc(corpus: Corpus, path: Path | str) -> int:
    """Write WARC/1.0 (.warc.gz, one gzip member per record): warcinfo, then request+response per page.

    Output is byte-for-byte deterministic. Returns the number of records written.
    """
    from warcio.warcwriter import WARCWriter

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=str(path).endswith(".gz"), warc_version="WARC/1.0")
        writer.write_record(_warcinfo_record(writer, corpus, path))
        n += 1
        for p in corpus.pages:
            req, resp = _page_records(writer, corpus.seed, p, corpus.sites[p.site])
            writer.write_record(req)
            writer.write_record(resp)
            n += 2
    return n


def _write_corpus_jsonl(corpus: Corpus, path: Path) -> Path:
    """One JSON object a line: ``id, url, text, ip`` of each page, in crawl order."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for p in corpus.pages:
            fh.write(
                json.dumps(
                    {"id": p.id, "url": p.url, "text": p.text, "ip": p.ip}, ensure_ascii=False
                )
            )
            fh.write("\n")
    return path


def _write_corpus_parquet(corpus: Corpus, directory: Path) -> Path:
    """``directory/part-00000.parquet``: string columns ``id, url, text, ip``, zstd, 20,000-row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir(parents=True, exist_ok=True)
    table = pa.table(
        {
            "id": pa.array([p.id for p in corpus.pages], pa.string()),
            "url": pa.array([p.url for p in corpus.pages], pa.string()),
            "text": pa.array([p.text for p in corpus.pages], pa.large_string()),
            "ip": pa.array([p.ip for p in corpus.pages], pa.string()),
        }
    )
    schema = pa.schema([(name, pa.string()) for name in ("id", "url", "text", "ip")])
    out = directory / "part-00000.parquet"
    pq.write_table(table.cast(schema), out, compression="zstd", row_group_size=20_000)
    return out


def write_corpus_table(corpus: Corpus, path: Path | str, fmt: str) -> Path:
    """Write ``id, url, text, ip`` as ``jsonl`` (one file) or ``parquet`` (a directory with one part).

    Returns the file written.
    """
    path = Path(path)
    if fmt == "jsonl":
        return _write_corpus_jsonl(corpus, path)
    if fmt == "parquet":
        return _write_corpus_parquet(corpus, path)
    raise ValueError(f"unknown table format: {fmt!r}")


def write_truth(corpus: Corpus, path: Path | str) -> Path:
    """Write the ground truth as JSON Lines (quilts, controls, mirrors, near-copies)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for t in corpus.truth:
            fh.write(json.dumps(t.to_json(), ensure_ascii=False) + "\n")
    return path
