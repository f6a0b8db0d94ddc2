"""Peak memory of ingestion inside a Spark run on the pages that threaten it (issue 16).

Three WARC files, each ingested by the real ``quiltdetect ingest`` code path (local[2], the
shipped defaults: ``max_payload_bytes`` 50,000,000, no memory settings) in a fresh process:

* ``huge``: one 100 MB HTML page (over the cap: read up to the cap, skipped) and a normal page;
* ``bomb``: a 1 GB payload of one repeated byte in a ~1 MB gzip member (a decompression bomb:
  read up to the cap, skipped) and a normal page;
* ``under``: one page of ~49 MB of prose, just under the cap: parsed into a document.

For each it records the peak RSS of the JVM (driver and executor in local mode) and of the
Python workers (sampled every 0.2 s by ``quilts_scale.MemorySampler``), the JVM's peak heap and
the executors' peak Python-process RSS from the Spark REST API, and the documents and skips.

    PYTHONPATH=src python bench/ingest_memory.py --out bench/results

Writes ``<out>/ingest_memory.json``; run it on an idle machine.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from quilts_scale import MemorySampler, _rest, load_average  # noqa: E402

CAP = 50_000_000
PAGE = b"<html><head><title>ok</title></head><body><p>An ordinary page after the large one.</p></body></html>"


def _head(rid: int, length: int) -> bytes:
    return (
        f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-{rid:012d}>\r\n"
        f"WARC-Target-URI: http://big.example/{rid}\r\nWARC-Date: 2024-01-01T00:00:00Z\r\n"
        f"Content-Type: application/http; msgtype=response\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def _http_head(body_length: int) -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {body_length}\r\n\r\n".encode()


def write_record(fh, rid: int, body_parts, body_length: int) -> None:
    """One WARC response record as its own gzip member, its body streamed from ``body_parts``."""
    http_head = _http_head(body_length)
    z = zlib.compressobj(6, zlib.DEFLATED, 31)  # gzip container
    fh.write(z.compress(_head(rid, len(http_head) + body_length) + http_head))
    written = 0
    for part in body_parts:
        written += len(part)
        fh.write(z.compress(part))
    assert written == body_length, (written, body_length)
    fh.write(z.compress(b"\r\n\r\n") + z.flush())


def _repeat(block: bytes, total: int):
    """``total`` bytes made of ``block`` repeated (the last one cut), 16 MB at a time."""
    chunk = block * max(1, (16 << 20) // len(block))
    left = total
    while left > 0:
        yield chunk[:left]
        left -= min(left, len(chunk))


def _prose(total: int):
    """``total`` bytes of a page of paragraphs of varied words (so the text is real work)."""
    words = (REPO_WORDS or "the quick brown fox jumps over the lazy dog").split()
    opening, closing = b"<html><body>", b"</body></html>"
    body = []
    i = 0
    size = len(opening) + len(closing)
    while size < total:
        para = "<p>" + " ".join(words[(i * 7 + j) % len(words)] + str(j % 13) for j in range(60)) + "</p>\n"
        b = para.encode()
        if size + len(b) > total:
            b = b"<p>" + b"x" * max(0, total - size - 7) + b"</p>"
            b = b[: total - size]
        body.append(b)
        size += len(b)
        i += 1
    data = opening + b"".join(body) + closing
    yield data[:total]


def _repo_words() -> str:
    prose = HERE.parent.parent / "shared" / "data" / "text_corpora"
    for path in sorted(prose.rglob("*.txt"))[:20]:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if len(text) > 20_000:
            return " ".join(text.split()[:5000])
    return ""


REPO_WORDS = _repo_words()


def build(work: Path) -> dict[str, Path]:
    """The three inputs (each a directory holding one WARC file), built once."""
    work.mkdir(parents=True, exist_ok=True)
    cases = {
        "huge": (b"<html><body><p>" + b"spam " * 20_000_000 + b"</p></body></html>", None),
        "bomb": (None, 1_000_000_000),
        "under": (None, CAP - 1_000_000),
    }
    paths = {}
    for name, (body, size) in cases.items():
        folder = work / name
        target = folder / f"{name}.warc.gz"
        paths[name] = folder
        if target.exists():
            continue
        folder.mkdir(exist_ok=True)
        with open(target, "wb") as fh:
            if name == "huge":
                write_record(fh, 1, [body], len(body))
            elif name == "bomb":
                write_record(fh, 1, _repeat(b"\0", size), size)
            else:
                write_record(fh, 1, _prose(size), size)
            fh.write(gzip.compress(_head(2, len(_http_head(len(PAGE))) + len(PAGE)) + _http_head(len(PAGE)) + PAGE
                                   + b"\r\n\r\n", mtime=0))
    return paths


def run_one(input_dir: str, output: str, json_path: str) -> None:
    """Child process: one ``quiltdetect ingest`` run with its memory figures, as JSON."""
    from quiltdetect.cli import build_parser
    from quiltdetect.ingest.job import IngestConfig, IngestJob
    from quiltdetect.options import config_from_args, start_job

    sampler = MemorySampler()
    sampler.start()
    cli = ["ingest", "--input", input_dir, "--output", output, "--overwrite", "--set", "write_rejects=true"]
    for item in ("spark.ui.enabled=true", "spark.executor.processTreeMetrics.enabled=true",
                 "spark.executor.metrics.pollingInterval=200", "spark.log.level=ERROR"):
        cli += ["--set", item]
    cfg = config_from_args(IngestConfig, build_parser().parse_args(cli)).validate()
    spark = start_job("quiltdetect-bench-memory", cfg, local=True)
    t0 = time.perf_counter()
    try:
        result = IngestJob.run(spark, cfg)
        seconds = time.perf_counter() - t0
        time.sleep(1.0)  # one more executor-metrics poll
        sc = spark.sparkContext
        peaks: dict[str, int] = {}
        for ex in _rest(sc.uiWebUrl, f"/applications/{sc.applicationId}/allexecutors"):
            for key, value in (ex.get("peakMemoryMetrics") or {}).items():
                peaks[key] = max(peaks.get(key, 0), value)
        import pyarrow.parquet as pq

        docs = pq.read_table(Path(output) / "docs", columns=["doc_id", "text"]).to_pylist()
    finally:
        spark.stop()
    sampler.stop_flag.set()
    sampler.sample()
    stage = result.metrics.stages["ingest"]
    Path(json_path).write_text(json.dumps({
        "seconds": round(seconds, 1),
        "documents": stage["documents"], "skipped": stage["skipped"],
        "document_text_chars": sorted(len(d["text"]) for d in docs),
        "jvm_rss_peak": sampler.peak["jvm_rss"],
        "python_workers_rss_peak": sampler.peak["python_workers_rss"],
        "spark_jvm_heap_peak": peaks.get("JVMHeapMemory", 0),
        "spark_python_process_tree_rss_peak": peaks.get("ProcessTreePythonRSSMemory", 0),
        "spark_jvm_process_tree_rss_peak": peaks.get("ProcessTreeJVMRSSMemory", 0),
    }, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd")
    one = sub.add_parser("one")
    one.add_argument("--input", required=True)
    one.add_argument("--output", required=True)
    one.add_argument("--json", required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/quiltdetect-bench-memory"))
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    if args.cmd == "one":
        run_one(args.input, args.output, args.json)
        return
    inputs = build(args.work)
    results = {"load_before": load_average(), "max_payload_bytes": CAP, "cases": {}}
    for name, folder in inputs.items():
        json_path = args.work / f"{name}.json"
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "one", "--input", str(folder),
                        "--output", str(args.work / f"out-{name}"), "--json", str(json_path)], check=True)
        res = json.loads(json_path.read_text())
        res["input_bytes"] = sum(p.stat().st_size for p in folder.iterdir())
        results["cases"][name] = res
        mb = 1 / 1e6
        print(f"{name:>6}: {res['documents']} documents, skipped {res['skipped']}, texts {res['document_text_chars']}; "
              f"JVM RSS {res['jvm_rss_peak'] * mb:.0f} MB (heap {res['spark_jvm_heap_peak'] * mb:.0f} MB), "
              f"Python workers RSS {res['python_workers_rss_peak'] * mb:.0f} MB "
              f"(Spark: {res['spark_python_process_tree_rss_peak'] * mb:.0f} MB), {res['seconds']} s", flush=True)
    results["load_after"] = load_average()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ingest_memory.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
