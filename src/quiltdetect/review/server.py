"""The judging tool's web application (Najork 2012, Fig. 4) on the standard library's server.

Crawled pages are hostile input. Every piece of page text, URL, id and note is passed
through ``html.escape`` and placed in element content or quoted attributes, never in
markup of its own; links are emitted only for http(s) URLs; the Content-Security-Policy
allows scripts and styles from this server's /static/ files only (no inline script, so an
injected ``<script>`` or ``onerror`` could not run even if escaping failed); SQL is
parameterised (labels.py); static files come from a fixed table, so no request path can
reach the file system; state-changing requests need a per-process token; and the Host
header must name the server (the bound address, loopback names when reachable there, and
the names given with ``--allow-host``; never "any"), which defeats DNS rebinding.
"""

from __future__ import annotations

import io
import ipaddress
import logging
import secrets
import socket
import sqlite3
import threading
from collections.abc import Iterable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from quiltdetect.common.csvsafe import csv_bytes
from quiltdetect.review import duplicates
from quiltdetect.review.data import PAGE_SIZE, ListQuery, Run
from quiltdetect.review.highlight import highlight
from quiltdetect.review.labels import LABEL_KINDS, DuplicateSummary, LabelStore, RunSummary
from quiltdetect.review.markup import N_COLOURS, e, link, render_segments, shown_url

__all__ = ["CSP", "ReviewApp", "Handler", "allowed_hosts", "base_url", "link", "make_server", "render_segments",
           "serve_in_thread", "shown_url"]

log = logging.getLogger(__name__)

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; "
       "base-uri 'none'; frame-ancestors 'none'")
STATIC = {"review.js": "text/javascript; charset=utf-8", "review.css": "text/css; charset=utf-8"}
LABEL_NAMES = {"spam": "spam", "not_spam": "not spam", "duplicate": "duplicate", "not_duplicate": "not a duplicate",
               "undecided": "undecided"}
MAX_BODY = 1_000_000  # bytes of a POST body (a label form is a few hundred)


class ReviewApp:
    """Everything a request needs: the run, the label store and the anti-CSRF token."""

    def __init__(self, run: Run, store: LabelStore):
        self.run = run
        self.store = store
        self.token = secrets.token_urlsafe(24)
        self.allowed_hosts: set[str] = set()

    # ---- pages -------------------------------------------------------------------------
    def page(self, title: str, body: str) -> str:
        cfg = self.run.config
        if self.run.kind == "quilts":
            params = ", ".join(f"{n}={e(str(cfg[n]))}" for n in ("k", "m", "c", "theta", "foreign", "phi") if n in cfg)
        else:
            params = e(duplicates.rule_text(cfg))
        noun = self.run.noun
        return (
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{e(title)} · quiltdetect review</title>"
            '<link rel="stylesheet" href="/static/review.css"><script src="/static/review.js" defer></script>'
            "</head><body><header><h1>quiltdetect review</h1><nav>"
            f'<a href="/">{noun}</a><a href="/summary">summary</a>'
            '<a href="/export.csv">labels.csv</a><a href="/export.parquet">labels.parquet</a></nav>'
            f'<span class="meta">{e(str(self.run.path))} ({params}) · {len(self.run.quilts)} {noun}</span>'
            f"</header>{body}</body></html>"
        )

    def list_page(self, params: dict[str, list[str]]) -> str:
        query = ListQuery.parse(params)
        labels = self.store.of_run(self.run.key)
        rows = self.run.select(query, labels)
        total = len(rows)
        start = (query.page - 1) * PAGE_SIZE
        shown = rows[start : start + PAGE_SIZE]
        ctx = urlencode(query.params())
        if self.run.kind == "neardup":
            return self._dropped_list(query, labels, total, start, shown, ctx)

        def sel(name: str, value: str, current: str, text: str) -> str:
            chosen = " selected" if value == current else ""
            return f'<option value="{e(value)}"{chosen}>{e(text)}</option>'

        form = (
            '<form class="filters" method="get" action="/">'
            f'<label>url contains<input name="q" value="{e(query.q)}"></label>'
            f'<label>patchfrac ≥<input name="min_pf" size="5" value="{e(str(query.min_pf))}"></label>'
            f'<label>sources ≥<input name="min_sources" size="4" value="{e(str(query.min_sources))}"></label>'
            '<label>attributed<select name="attributed">'
            + "".join(sel("attributed", v, query.attributed, v) for v in ("any", "yes", "no"))
            + '</select></label><label>label<select name="label">'
            + "".join(sel("label", v, query.label, t) for v, t in
                      (("any", "any"), ("none", "unlabelled"), ("spam", "spam"), ("not_spam", "not spam"),
                       ("undecided", "undecided")))
            + '</select></label><label>sort<select name="sort">'
            + "".join(sel("sort", v, query.sort, v) for v in
                      ("patchfrac", "n_sources", "n_attributed_sources", "doc_id", "url", "label"))
            + '</select></label><label>order<select name="order">'
            + sel("order", "desc", query.order, "descending") + sel("order", "asc", query.order, "ascending")
            + "</select></label>"
            f'<label>sample N<input name="sample" size="5" value="{e(str(query.sample or ""))}"></label>'
            f'<label>seed<input name="seed" size="6" value="{e(str(query.seed))}"></label>'
            '<button type="submit">apply</button><a href="/">reset</a></form>'
        )
        noun, score, many = "quilts", "patchfrac", "sources"
        what = (f"a uniform random sample of {total} {noun} (seed {query.seed})" if query.sample
                else f"{total} {noun}")
        body_rows = []
        for i, r in enumerate(shown, start + 1):
            label = labels.get(r["doc_id"], ("", "", ""))[0]
            href = "/quilt?" + urlencode({"id": r["doc_id"], "ctx": ctx})
            body_rows.append(
                f'<tr><td class="num">{i}</td>'
                f'<td><a class="open-quilt" href="{e(href)}">{e(r["doc_id"])}</a></td>'
                f'<td class="url">{shown_url(r["url"] or "")}</td>'
                f'<td class="num">{r["patchfrac"]:.3f}</td><td class="num">{r["n_sources"]}</td>'
                f'<td class="num">{r["n_attributed_sources"] if r["attributed"] else ""}</td>'
                f'<td class="label-{e(label)}">{e(LABEL_NAMES.get(label, ""))}</td></tr>'
            )
        pages = self._pages(query, total)
        table = (
            '<table class="list" id="quilts"><thead><tr><th>#</th><th>doc_id</th><th>url</th>'
            f"<th>{score}</th><th>{many}</th><th>attributed</th><th>label</th></tr></thead><tbody>"
            + "".join(body_rows) + "</tbody></table>"
        )
        keys = '<p class="keys"><kbd>o</kbd> open the first one</p>'
        return self.page(noun, f"{form}<p>{e(what)}</p>{keys}{table}{pages}")

    def _pages(self, query: ListQuery, total: int) -> str:
        """Links to the list's pages when it has more than one."""
        if total <= PAGE_SIZE:
            return ""
        last = (total - 1) // PAGE_SIZE + 1
        parts = []
        for p in range(1, last + 1):
            cls = ' class="current"' if p == query.page else ""
            parts.append(f'<a{cls} href="/?{e(urlencode(query.params(page=p)))}">{p}</a>')
        return "<p>pages: " + " ".join(parts) + "</p>"

    def _dropped_list(self, query: ListQuery, labels: dict[str, tuple[str, str, str]], total: int, start: int,
                      shown: list[dict[str, Any]], ctx: str) -> str:
        """A near-duplicate run's list: its dropped pages with their kept pages and similarity."""
        noun = self.run.noun
        what = (f"a uniform random sample of {total} {noun} (seed {query.seed})" if query.sample
                else f"{total} {noun}")
        table = duplicates.list_table(self.run, shown, start + 1, labels, ctx, LABEL_NAMES)
        keys = '<p class="keys"><kbd>o</kbd> open the first one</p>'
        return self.page(noun, f"{duplicates.filter_form(self.run, query)}<p>{e(what)}</p>{keys}{table}"
                               f"{self._pages(query, total)}")

    def quilt_page(self, params: dict[str, list[str]]) -> tuple[int, str]:
        doc_id = (params.get("id") or [""])[0]
        quilt = self.run.by_id.get(doc_id)
        if quilt is None:
            what = "quilt" if self.run.kind == "quilts" else "dropped page"
            return HTTPStatus.NOT_FOUND, self.page("not found", f"<p>No {what} {e(doc_id)} in this run.</p>")
        ctx = (params.get("ctx") or [""])[0]
        labels = self.store.of_run(self.run.key)
        order = self.run.select(ListQuery.parse(parse_qs(ctx)), labels)
        ids = [r["doc_id"] for r in order]
        pos = ids.index(doc_id) if doc_id in ids else -1
        prev_id = ids[pos - 1] if pos > 0 else None
        next_id = ids[pos + 1] if 0 <= pos < len(ids) - 1 else None

        sources = quilt["sources"]
        texts = self.run.texts([doc_id, *[s["doc_id"] for s in sources]])
        text = (texts.get(doc_id) or {}).get("text") or ""
        marked = highlight(text, [(texts.get(s["doc_id"]) or {}).get("text") or "" for s in sources], self.run.k)

        label, note, judged_at = labels.get(doc_id, ("", "", ""))
        nav = []
        if prev_id:
            nav.append(f'<a id="prev" href="/quilt?{e(urlencode({"id": prev_id, "ctx": ctx}))}">← previous</a>')
        nav.append(f'<a id="back" href="/?{e(ctx)}">list</a>')
        if next_id:
            nav.append(f'<a id="next" href="/quilt?{e(urlencode({"id": next_id, "ctx": ctx}))}">next →</a>')
        position = f"{pos + 1} of {len(ids)}" if pos >= 0 else "not in the current list"
        current = (f'<span id="current-label" class="label-{e(label)}">{e(LABEL_NAMES[label])}</span>'
                   f' <span class="meta">{e(judged_at)}</span>' if label
                   else '<span id="current-label">unlabelled</span>')
        kinds = LABEL_KINDS[self.run.kind]
        buttons = "".join(
            f'<button type="submit" name="label" value="{v}">{e(LABEL_NAMES[v])} (<kbd>{v[0]}</kbd>)</button>'
            for v in kinds
        )
        keys = " · ".join(f"<kbd>{v[0]}</kbd> {e(LABEL_NAMES[v])}" for v in kinds)
        judge = (
            '<form class="judge" method="post" action="/label">'
            f'<input type="hidden" name="token" value="{e(self.token)}">'
            f'<input type="hidden" name="doc_id" value="{e(doc_id)}">'
            f'<input type="hidden" name="ctx" value="{e(ctx)}">'
            f'<div>{" · ".join(nav)} <span class="meta">({e(position)})</span> — label: {current}</div>'
            f'<textarea name="note" placeholder="note (e to edit, Esc to leave)">{e(note)}</textarea>'
            f"<div>{buttons}</div>"
            f'<p class="keys">{keys} (each saves and '
            "moves on) · <kbd>j</kbd>/<kbd>→</kbd> next · <kbd>k</kbd>/<kbd>←</kbd> previous · <kbd>e</kbd> note"
            " · <kbd>l</kbd> list</p></form>"
        )
        if self.run.kind == "neardup":
            kept = texts.get(sources[0]["doc_id"])
            body = duplicates.page_body(self.run, quilt, marked, kept and kept.get("text"))
            return HTTPStatus.OK, self.page(quilt["url"] or doc_id, judge + body)
        attributed = (f", links to {quilt['n_attributed_sources']} of its sources (attributed)"
                      if quilt["attributed"] else "")
        head = (
            f'<h2 class="url">{link(quilt["url"])}</h2>'
            f'<p class="meta">doc_id {e(doc_id)} · patch fraction <b id="patchfrac">{quilt["patchfrac"]:.3f}</b> '
            f'({quilt["n_patch_grams"]} of {quilt["n_grams"]} grams) · {len(sources)} sources{e(attributed)} · '
            f"{marked.covered_words} of {marked.n_words} words in highlighted patches</p>"
        )
        items = []
        for rank, (s, match) in enumerate(zip(sources, marked.sources, strict=True)):
            credit = " · linked from the quilt" if s.get("attributed") else ""
            mismatch = (f" · {match.recomputed} shared grams found in the texts" if match.recomputed != s["shared"]
                        else "")
            items.append(
                f'<details class="source" id="source-{rank + 1}"{" open" if rank < 3 else ""}><summary>'
                f'<span class="swatch c{rank % N_COLOURS}"></span>{rank + 1}. {link(s["url"])}</summary>'
                f'<p class="meta">doc_id {e(s["doc_id"])} · covered <b>{s["covered"]}</b> · shared '
                f'<b>{s["shared"]}</b>{e(mismatch)} · first source of {match.first} grams{e(credit)}</p>'
                f'<div class="text">{render_segments(match.segments)}</div></details>'
            )
        body = (
            f"{judge}{head}<div class=\"layout\"><div><div class=\"text\" id=\"quilt-text\">"
            f"{render_segments(marked.segments)}</div></div>"
            f'<div class="sources"><h3>sources in pick order</h3>{"".join(items)}</div></div>'
        )
        return HTTPStatus.OK, self.page(quilt["url"] or doc_id, body)

    def summary_page(self) -> str:
        summaries = self.store.summaries()
        found = [s for s in summaries if isinstance(s, DuplicateSummary)]
        near = (duplicates.summary_section(self.run, found, self.store.of_run(self.run.key))
                if found or self.run.kind == "neardup" else "")
        quilt_runs = [s for s in summaries if isinstance(s, RunSummary)]
        if self.run.kind == "neardup" and not quilt_runs:
            return self.page("summary", near)
        rows = []
        for s in quilt_runs:
            share = "" if s.spam_share is None else f"{100 * s.spam_share:.1f}%"
            low, high = s.interval
            ci = "" if s.spam_share is None else f"{100 * low:.1f}% – {100 * high:.1f}%"
            mine = ' class="current"' if s.run == self.run.key else ""
            rows.append(f"<tr{mine}><td>{e(s.run)}</td><td>{s.judged}</td><td>{s.spam}</td><td>{s.not_spam}</td>"
                        f"<td>{s.undecided}</td><td>{share}</td><td>{ci}</td></tr>")
        table = ('<table class="summary" id="summary"><thead><tr><th>run</th><th>judged</th><th>spam</th>'
                 "<th>not spam</th><th>undecided</th><th>spam %</th><th>95% interval (Wilson)</th></tr></thead>"
                 f"<tbody>{''.join(rows)}</tbody></table>")
        note = ("<p>Table 2 of the paper: the share of judged quilts (spam or not spam; undecided ones left out) "
                "that are spam, with a Wilson score 95% confidence interval. Judge a uniform sample (list page: "
                "sample N, seed) for an unbiased estimate.</p>")
        return self.page("summary", f"<h2>Judgments per run</h2>{note}{table}{near}")

    # ---- exports -----------------------------------------------------------------------
    def export_fields(self) -> list[str]:
        """The columns of the label export: a quilt's patch fraction, sources and attribution, or a
        dropped page's kept page and similarity."""
        if self.run.kind == "neardup":
            return duplicates.export_fields(self.run)
        return ["run", "doc_id", "url", "label", "note", "judged_at", "patchfrac", "n_sources", "attributed"]

    def export_rows(self) -> list[dict[str, Any]]:
        out = []
        for doc_id, (label, note, at) in sorted(self.store.of_run(self.run.key).items()):
            q = self.run.by_id.get(doc_id, {})
            if self.run.kind == "neardup":
                out.append({"run": self.run.key, "doc_id": doc_id, "url": q.get("url"), "label": label,
                            "note": note, "judged_at": at, **{f: q.get(f) for f in self.export_fields()[6:]}})
                continue
            out.append({"run": self.run.key, "doc_id": doc_id, "url": q.get("url"), "label": label, "note": note,
                        "judged_at": at, "patchfrac": q.get("patchfrac"), "n_sources": q.get("n_sources"),
                        "attributed": q.get("attributed")})
        return out

    def export_csv(self) -> bytes:
        """The labels as CSV; a text cell a spreadsheet would run gets a leading ' (common/csvsafe.py)."""
        return csv_bytes(self.export_rows(), self.export_fields())

    def export_parquet(self) -> bytes:
        import pyarrow as pa
        import pyarrow.parquet as pq

        types = {"patchfrac": pa.float64(), "n_sources": pa.int32(), "attributed": pa.bool_(),
                 "resemblance": pa.float64(), "containment": pa.float64(), "b_similarity": pa.int32(),
                 "c_similarity": pa.int32()}
        schema = pa.schema([(name, types.get(name, pa.string())) for name in self.export_fields()])
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(self.export_rows(), schema=schema), buf)
        return buf.getvalue()

    # ---- the label form ----------------------------------------------------------------
    def label(self, form: dict[str, list[str]]) -> tuple[int, str]:
        """Save a judgment; returns (status, where to go next)."""
        def one(name: str) -> str:
            return (form.get(name) or [""])[0]

        if not secrets.compare_digest(one("token"), self.token):
            return HTTPStatus.FORBIDDEN, ""
        doc_id, label, ctx = one("doc_id"), one("label"), one("ctx")
        if doc_id not in self.run.by_id or label not in LABEL_KINDS[self.run.kind]:
            return HTTPStatus.BAD_REQUEST, ""
        self.store.set(self.run.key, doc_id, label, one("note")[:10_000], kind=self.run.kind)
        ids = [r["doc_id"] for r in self.run.select(ListQuery.parse(parse_qs(ctx)), self.store.of_run(self.run.key))]
        after = ids[ids.index(doc_id) + 1] if doc_id in ids and ids.index(doc_id) + 1 < len(ids) else doc_id
        return HTTPStatus.SEE_OTHER, "/quilt?" + urlencode({"id": after, "ctx": ctx})


    def not_saved_page(self, form: dict[str, list[str]], why: str) -> str:
        """The judge's label could not be saved (the database is locked by another program, its
        disk is full): say so and why, and keep everything the judge entered in a form that
        posts it again with one click."""
        def one(name: str) -> str:
            return (form.get(name) or [""])[0]

        label = one("label")
        body = (
            '<main class="not-saved"><h2>Your label was not saved</h2>'
            f"<p>The labels database {e(str(self.store.path))} could not be written: {e(why)}. "
            "Nothing was lost: this page holds the label and note you entered. When the other program "
            "lets go of the database (a second judge's sqlite shell, a backup), save again.</p>"
            '<form class="judge" method="post" action="/label">'
            f'<input type="hidden" name="token" value="{e(self.token)}">'
            f'<input type="hidden" name="doc_id" value="{e(one("doc_id"))}">'
            f'<input type="hidden" name="ctx" value="{e(one("ctx"))}">'
            f'<input type="hidden" name="label" value="{e(label)}">'
            f'<p>Label: <strong>{e(LABEL_NAMES.get(label, label))}</strong> for {e(one("doc_id"))}</p>'
            f'<textarea name="note">{e(one("note"))}</textarea>'
            '<div><button type="submit" id="save-again">Save again</button></div></form></main>'
        )
        return self.page("label not saved", body)


class Handler(BaseHTTPRequestHandler):
    """Routes requests to the ReviewApp held by the server."""

    server_version = "quiltdetect-review"
    timeout = 60  # seconds a connection may stall (e.g. a body slower than announced)
    app: ReviewApp

    def log_message(self, fmt: str, *args: Any) -> None:  # quiet by default
        log.debug("%s " + fmt, self.address_string(), *args)

    def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Cache-Control", "no-store")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _html(self, status: int, text: str) -> None:
        self._send(status, text.encode("utf-8"), "text/html; charset=utf-8")

    def _body_length(self) -> int | HTTPStatus:
        """The request body's length, or the status to answer at once.

        Only a decimal Content-Length (one value) up to MAX_BODY is read; a negative or
        non-numeric one is 400 (``-1`` made ``read`` wait for the client to leave, ``abc``
        raised), a larger one 413, a chunked body 411. No header means no body.
        """
        if self.headers.get("Transfer-Encoding"):
            return HTTPStatus.LENGTH_REQUIRED
        values = {v.strip() for v in self.headers.get_all("Content-Length") or []}
        if not values:
            return 0
        if len(values) > 1:
            return HTTPStatus.BAD_REQUEST
        text = values.pop()
        if not (text.isascii() and text.isdigit()):
            return HTTPStatus.BAD_REQUEST
        if len(text) > len(str(MAX_BODY)) or int(text) > MAX_BODY:
            return HTTPStatus.REQUEST_ENTITY_TOO_LARGE
        return int(text)

    def _host_ok(self) -> bool:
        app = self.server.app  # type: ignore[attr-defined]
        return (self.headers.get("Host") or "").strip().lower() in app.allowed_hosts

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        app: ReviewApp = self.server.app  # type: ignore[attr-defined]
        if not self._host_ok():
            return self._send(HTTPStatus.MISDIRECTED_REQUEST, b"unknown host", "text/plain; charset=utf-8")
        url = urlsplit(self.path)
        params = parse_qs(url.query)
        try:
            if url.path == "/":
                return self._html(HTTPStatus.OK, app.list_page(params))
            if url.path == "/quilt":
                status, text = app.quilt_page(params)
                return self._html(status, text)
            if url.path == "/summary":
                return self._html(HTTPStatus.OK, app.summary_page())
            if url.path == "/export.csv":
                return self._send(HTTPStatus.OK, app.export_csv(), "text/csv; charset=utf-8",
                                  {"Content-Disposition": 'attachment; filename="labels.csv"'})
            if url.path == "/export.parquet":
                return self._send(HTTPStatus.OK, app.export_parquet(), "application/vnd.apache.parquet",
                                  {"Content-Disposition": 'attachment; filename="labels.parquet"'})
            if url.path.startswith("/static/") and url.path[len("/static/"):] in STATIC:
                name = url.path[len("/static/"):]
                data = resources.files("quiltdetect.review").joinpath("static", name).read_bytes()
                return self._send(HTTPStatus.OK, data, STATIC[name])
        except Exception:  # one broken page must not stop the judging session
            log.exception("error serving %s", self.path)
            return self._send(HTTPStatus.INTERNAL_SERVER_ERROR, b"internal error (see the log)", "text/plain")
        return self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain; charset=utf-8")

    do_HEAD = do_GET

    def do_POST(self) -> None:  # noqa: N802
        app: ReviewApp = self.server.app  # type: ignore[attr-defined]
        if not self._host_ok():
            return self._send(HTTPStatus.MISDIRECTED_REQUEST, b"unknown host", "text/plain; charset=utf-8")
        if urlsplit(self.path).path != "/label":
            self.close_connection = True
            return self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain; charset=utf-8")
        length = self._body_length()
        if isinstance(length, HTTPStatus):  # answered at once; the body (if any) is never read
            self.close_connection = True
            return self._send(length, f"{length.phrase}\n".encode(), "text/plain; charset=utf-8",
                              {"Connection": "close"})
        try:
            raw = self.rfile.read(length)
        except OSError:  # the client stalled past the socket timeout, or left
            self.close_connection = True
            return None
        if len(raw) < length:  # the client closed before sending the body it announced
            self.close_connection = True
            return self._send(HTTPStatus.BAD_REQUEST, b"body shorter than Content-Length",
                              "text/plain; charset=utf-8", {"Connection": "close"})
        form = parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True)
        try:
            status, location = app.label(form)
        except (sqlite3.Error, OSError) as exc:  # locked by another program, a full disk: not saved
            log.warning("label not saved: %s", exc)
            return self._html(HTTPStatus.SERVICE_UNAVAILABLE, app.not_saved_page(form, str(exc)))
        if status == HTTPStatus.SEE_OTHER:
            return self._send(status, b"", "text/plain", {"Location": location})
        return self._send(status, b"rejected", "text/plain; charset=utf-8")


def base_url(host: str, port: int) -> str:
    """The URL to open for a server bound to ``host``: an IPv6 literal in brackets, and for a
    wildcard bind (0.0.0.0, ::) the loopback address of its family, which a browser can open."""
    host = str(host).strip("[]")
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _host_forms(name: str, port: int) -> set[str]:
    """The Host header values that name ``name``: bare and with the port (IPv6 in brackets)."""
    name = name.strip().lower().rstrip(".")
    if ":" in name and not name.startswith("["):  # an IPv6 literal
        name = f"[{name}]"
    return {name, f"{name}:{port}"}


def allowed_hosts(bound: str, port: int, extra: Iterable[str] = ()) -> set[str]:
    """Host header values the server answers: never "anything".

    The address bound (as given and as the socket reports it), with and without the port;
    the loopback names when the server is reachable on loopback (a loopback address or a
    wildcard bind); and each name of ``extra`` (``--allow-host``): ``NAME`` allows ``NAME``
    and ``NAME:port``, ``NAME:PORT`` exactly that.
    """
    names = {bound}
    try:
        ip = ipaddress.ip_address(bound.strip("[]"))
    except ValueError:
        ip = None
    if bound.lower() == "localhost" or (ip is not None and (ip.is_loopback or ip.is_unspecified)):
        names |= {"127.0.0.1", "localhost", "::1"}
    out: set[str] = set()
    for name in names:
        out |= _host_forms(name, port)
    for name in extra:
        name = name.strip().lower()
        if not name:
            continue
        host, sep, given_port = name.rpartition(":")
        if sep and given_port.isdigit() and (not host.count(":") or host.endswith("]")):
            out.add(name)  # NAME:PORT (or [v6]:PORT) exactly
        else:
            out |= _host_forms(name, port)
    return out


def make_server(app: ReviewApp, host: str = "127.0.0.1", port: int = 8765,
                allow_hosts: Iterable[str] = ()) -> ThreadingHTTPServer:
    """A threaded HTTP server for ``app`` (port 0 picks a free port).

    Requests must carry a Host header naming the server (:func:`allowed_hosts`), whatever
    address is bound: a DNS-rebinding page names its own host and gets 421.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    server_class = type("ReviewServer", (ThreadingHTTPServer,), {"address_family": family})
    server = server_class((host.strip("[]"), port), Handler)
    server.daemon_threads = True
    server.app = app  # type: ignore[attr-defined]
    bound_host, bound_port = server.server_address[:2]
    app.allowed_hosts = allowed_hosts(host.strip("[]"), bound_port, allow_hosts) | allowed_hosts(
        str(bound_host), bound_port)
    return server


def serve_in_thread(app: ReviewApp, host: str = "127.0.0.1", port: int = 0,
                    allow_hosts: Iterable[str] = ()) -> tuple[ThreadingHTTPServer, str]:
    """Start the server in a daemon thread (tests); returns it and its base URL."""
    server = make_server(app, host, port, allow_hosts)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, base_url(host, server.server_address[1])
