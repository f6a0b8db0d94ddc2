"""``quiltdetect review --run DIR``: the judging tool on http://127.0.0.1:8765/, for the quilts of a
quilt run or the dropped pages of a near-duplicate run."""

from __future__ import annotations

import argparse
import errno
import socket
import sys
from pathlib import Path

from quiltdetect.common.paths import absolute


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``review`` with its options."""
    p = subparsers.add_parser("review", help="judge the quilts of a run in the browser (Najork 2012, Fig. 4), or "
                                             "a near-duplicate run's dropped pages beside their kept pages")
    p.add_argument("--run", required=True, metavar="DIR", type=absolute,
                   help="the --output directory of `quiltdetect quilts` or `quiltdetect neardup`")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="also answer requests whose Host header is NAME or NAME:PORT (the name browsers use to "
                        "reach the server, e.g. its DNS name behind --host 0.0.0.0); repeatable. The bound "
                        "address is always allowed, and loopback names when reachable on loopback")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    p.add_argument("--db", metavar="FILE", type=absolute, help="labels database (default DIR/labels.sqlite)")
    p.add_argument("--export", metavar="FILE", help="write the run's labels to FILE (.csv or .parquet) and exit")
    return p


def cannot_listen(exc: OSError, host: str, port: int) -> str:
    """Why the server cannot listen on ``host``:``port``, in one line naming the option to change."""
    if isinstance(exc, socket.gaierror):
        return (f"--host {host}: not an address or a host name that resolves ({exc.strerror}); give an address "
                f"of this machine, e.g. 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)")
    if exc.errno == errno.EADDRINUSE:
        return (f"--port {port}: already in use on {host} (another review server?); stop it or give another "
                f"--port (0 picks a free one)")
    if exc.errno == errno.EADDRNOTAVAIL:
        return (f"--host {host}: not an address of this machine; give one of its addresses, 127.0.0.1 "
                f"(this machine only) or 0.0.0.0 (every interface)")
    if exc.errno == errno.EACCES:
        return f"--port {port}: not allowed to listen on it here (below 1024 needs privileges); give another --port"
    return f"--host {host} --port {port}: cannot listen there ({exc.strerror or exc})"


def run(args: argparse.Namespace, *, local: bool) -> int:
    """Open the run and serve until interrupted (or export the labels)."""
    from quiltdetect.common.config import ConfigError
    from quiltdetect.common.paths import output_file
    from quiltdetect.review.data import Run, RunError
    from quiltdetect.review.labels import LabelStore
    from quiltdetect.review.server import ReviewApp, base_url, make_server

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be 0 to 65535 (0 picks a free one), got {args.port}")
    export = output_file(args.export, "--export") if args.export else None
    db = output_file(args.db, "--db") if args.db else None
    try:
        quilt_run = Run.open(args.run)
    except RunError as exc:
        raise ConfigError(str(exc)) from exc
    store = LabelStore(db or quilt_run.path / "labels.sqlite")
    app = ReviewApp(quilt_run, store)
    if export:
        out = Path(export)
        out.write_bytes(app.export_parquet() if out.suffix == ".parquet" else app.export_csv())
        print(f"wrote {len(app.export_rows())} labels to {out}")
        return 0
    try:
        server = make_server(app, args.host, args.port, args.allow_host)
    except OSError as exc:
        raise ConfigError(cannot_listen(exc, args.host, args.port)) from exc
    host, port = server.server_address[:2]
    noun = "quilts" if quilt_run.kind == "quilts" else "dropped pages"
    print(f"quiltdetect review: {len(quilt_run.quilts)} {noun} of {quilt_run.path}, labels in {store.path}\n"
          f"open {base_url(host, port)}/  (Ctrl-C to stop)\n"
          f"answering Host: {', '.join(sorted(app.allowed_hosts))} (add names with --allow-host)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0
