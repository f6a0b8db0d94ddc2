"""Peak memory of ingestion inside a Spark run on the pages that threaten it (issue 16).

Three WARC files, each ingested by the real ``quiltdetect ingest`` code path (local[2], the
shipped defaults: ``max_payload_bytes`` 50,000,000, no memory settings) in a fresh process:

* ``huge``: one 100 MB HTML page (over the cap: read up to the cap, skipped) and a normal page;
* ``bomb``: a 1 GB payload of one repeated byte in a ~1 MB gzip member (a decompression bomb:
  read up to the cap, skipped) and a normal page;
* ``under``: one page of ~49 MB of prose, just under the cap: parsed into a document.

For each it records the peak RSS of the JVM (driver and executor in local mode) and of the
Python workers (sampled every 0.2 s by ``testkit.memory.MemorySampler``), the JVM's peak heap and
the executors' peak Python-process RSS from the Spark REST API, and the documents and skips.

    PYTHONPATH=src python bench/ingest_memory.py --out bench/results

Writes ``<out>/ingest_memory.json``; run it on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
for _path in (HERE, HERE.parent):  # bench/ (quilts_scale) and the repository root (testkit)
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))
from quilts_scale import _rest, load_average  # noqa: E402

from testkit.memory import MemorySampler  # noqa: E402
from testkit.warc import (  # noqa: E402
    gzip_member,
    http_response,
    prose_body,
    repeated,
    warc_record,
    write_streamed_record,
)

CAP = 50_000_000
PAGE = b"<html><head><title>ok</title></head><body><p>An ordinary page after the large one.</p></body></html>"
HOST = "big.example"


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
                write_streamed_record(fh, 1, [body], len(body), host=HOST)
            elif name == "bomb":
                write_streamed_record(fh, 1, repeated(b"\0", size), size, host=HOST)
            else:
                write_streamed_record(fh, 1, prose_body(size, REPO_WORDS), size, host=HOST)
            fh.write(gzip_member(warc_record(http_response(PAGE), rid="2", host=HOST)))
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
