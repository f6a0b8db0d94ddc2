"""quiltdetect neardup against datatrove's MinHash deduplication, side by side in one run.

    python bench/corpus.py --pages 100000 --format parquet --out /tmp/c100k
    python -m venv /tmp/dt && /tmp/dt/bin/pip install 'datatrove[io,processing]' spacy  # only here
    PYTHONPATH=src python bench/datatrove_side_by_side.py --corpus /tmp/c100k --datatrove-python /tmp/dt/bin/python \
        --work /tmp/dt-vs --repeat 3 --out bench/results/neardup_vs_datatrove_100k.json

Both tools read the same Parquet files (the corpus split into ``--files`` files, so that each of
datatrove's ``--tasks`` tasks has its share) and run with shipped defaults on the same cores:

- ``quiltdetect neardup --input FILES --output OUT`` (the console command, whole: JVM start,
  ingest, fingerprints, pairs, clusters, kept/ and duplicate_of/);
- datatrove's documented MinHash example (``examples/minhash_deduplication.py``) on a local
  executor: signatures (``MinhashConfig()``: 5-grams, 14 buckets x 8 hashes), buckets, clusters,
  filter writing the kept and the removed documents, each stage ``--tasks`` tasks on
  ``--workers`` workers (the buckets stage one task per bucket, the cluster stage one task).

Each command is timed whole (wall clock, a fresh process, after a sync), the two alternating ``--repeat``
times; the figures are the medians and their ratio. The pages each drops are compared by id,
and datatrove's with every page of quiltdetect's clusters (the two keep different members of a
cluster: quiltdetect the earliest crawled, datatrove its own pick).
datatrove is never a dependency of quiltdetect: it runs in its own interpreter
(``--datatrove-python``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

# datatrove's MinHash example (examples/minhash_deduplication.py) on its local executor.
DATATROVE_PIPELINE = '''
import sys
from datatrove.executor.local import LocalPipelineExecutor
from datatrove.pipeline.dedup import MinhashDedupSignature
from datatrove.pipeline.dedup.minhash import MinhashConfig, MinhashDedupBuckets, MinhashDedupCluster, MinhashDedupFilter
from datatrove.pipeline.readers import ParquetReader
from datatrove.pipeline.writers.jsonl import JsonlWriter

if __name__ == "__main__":
    data, work, tasks, workers = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    config = MinhashConfig()
    reader = ParquetReader(data, text_key="text", id_key="id")
    stage1 = LocalPipelineExecutor(pipeline=[reader, MinhashDedupSignature(output_folder=f"{work}/signatures",
                                                                          config=config)],
                                   tasks=tasks, workers=workers, logging_dir=f"{work}/logs/signatures")
    stage2 = LocalPipelineExecutor(pipeline=[MinhashDedupBuckets(input_folder=f"{work}/signatures",
                                                                 output_folder=f"{work}/buckets", config=config)],
                                   tasks=config.num_buckets, workers=workers, logging_dir=f"{work}/logs/buckets",
                                   depends=stage1)
    stage3 = LocalPipelineExecutor(pipeline=[MinhashDedupCluster(input_folder=f"{work}/buckets",
                                                                 output_folder=f"{work}/remove_ids", config=config)],
                                   tasks=1, logging_dir=f"{work}/logs/clusters", depends=stage2)
    stage4 = LocalPipelineExecutor(pipeline=[reader,
                                             MinhashDedupFilter(input_folder=f"{work}/remove_ids",
                                                                exclusion_writer=JsonlWriter(f"{work}/removed")),
                                             JsonlWriter(output_folder=f"{work}/deduplicated_output")],
                                   tasks=tasks, workers=workers, logging_dir=f"{work}/logs/filter", depends=stage3)
    stage4.run()
'''


def split_corpus(corpus: Path, files: int, into: Path) -> int:
    """The corpus's rows (id, url, text) as ``files`` Parquet files of about equal rows; returns the pages."""
    parts = sorted(corpus.rglob("*.parquet")) if corpus.is_dir() else [corpus]
    table = pq.ParquetDataset([str(p) for p in parts]).read(columns=["id", "url", "text"])
    into.mkdir(parents=True, exist_ok=True)
    step = -(-table.num_rows // files)
    for i in range(files):
        pq.write_table(table.slice(i * step, step), into / f"part-{i:05d}.parquet")
    return table.num_rows


def timed(command: list[str], log: Path, env: dict[str, str] | None = None) -> float:
    """Wall seconds of one whole command (fails loudly, its output in ``log``), started on a
    machine with nothing left to write back: the command before it (the other tool's, whose
    outputs this harness has just deleted) must not be paid for by this one."""
    os.sync()
    start = time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env, check=False)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: see {log}")
    return seconds


def quiltdetect_dropped(out: Path) -> set[str]:
    table = pq.ParquetDataset([str(p) for p in sorted((out / "duplicate_of").glob("*.parquet"))]).read(
        columns=["doc_id"])
    return set(table.column("doc_id").to_pylist())


def quiltdetect_clustered(out: Path) -> set[str]:
    """Every page of a near-duplicate cluster of quiltdetect's (the kept ones too): a page
    datatrove removes is one of them when both tools see it as a near-duplicate, whichever of
    its cluster each keeps."""
    table = pq.ParquetDataset([str(p) for p in sorted((out / "clusters").glob("*.parquet"))]).read(
        columns=["doc_id"])
    return set(table.column("doc_id").to_pylist())


def datatrove_dropped(work: Path) -> set[str]:
    ids: set[str] = set()
    for path in sorted((work / "removed").glob("*.jsonl*")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as lines:
            ids.update(json.loads(line)["id"] for line in lines)
    return ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, help="the generator's Parquet corpus (bench/corpus.py)")
    parser.add_argument("--datatrove-python", required=True, help="an interpreter with datatrove installed")
    parser.add_argument("--work", required=True, help="scratch directory (emptied)")
    parser.add_argument("--files", type=int, default=2, help="Parquet files the corpus is split into")
    parser.add_argument("--tasks", type=int, default=2, help="datatrove tasks of the signature and filter stages")
    parser.add_argument("--workers", type=int, default=2, help="datatrove workers (processes) per stage")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command, alternating")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()

    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    data = work / "input"
    pages = split_corpus(Path(args.corpus), args.files, data)
    script = work / "datatrove_minhash.py"
    script.write_text(DATATROVE_PIPELINE)
    version = subprocess.run([args.datatrove_python, "-c", "import datatrove, importlib.metadata as m; "
                              "print(m.version('datatrove'))"], capture_output=True, text=True, check=True).stdout
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
    runs: dict[str, list[float]] = {"quiltdetect": [], "datatrove": []}
    for i in range(args.repeat):
        qd_out, dt_work = work / "quiltdetect", work / "datatrove"
        shutil.rmtree(qd_out, ignore_errors=True)
        shutil.rmtree(dt_work, ignore_errors=True)
        runs["quiltdetect"].append(timed([sys.executable, "-m", "quiltdetect.cli", "neardup", "--input", str(data),
                                          "--output", str(qd_out)], work / f"quiltdetect-{i}.log", env))
        runs["datatrove"].append(timed([args.datatrove_python, str(script), str(data), str(dt_work),
                                        str(args.tasks), str(args.workers)], work / f"datatrove-{i}.log"))
        print(f"run {i + 1}: quiltdetect {runs['quiltdetect'][-1]:.1f} s, datatrove {runs['datatrove'][-1]:.1f} s",
              flush=True)
    ours, theirs = quiltdetect_dropped(work / "quiltdetect"), datatrove_dropped(work / "datatrove")
    medians = {name: statistics.median(times) for name, times in runs.items()}
    result = {
        "command": " ".join(sys.argv),
        "pages": pages,
        "cores": os.cpu_count(),
        "machine": platform.machine(),
        "datatrove": version.strip(),
        "seconds": runs,
        "median_seconds": medians,
        "ratio_quiltdetect_to_datatrove": round(medians["quiltdetect"] / medians["datatrove"], 4),
        "dropped": {"quiltdetect": len(ours), "datatrove": len(theirs), "both": len(ours & theirs),
                    "datatrove_in_a_quiltdetect_cluster": len(theirs & quiltdetect_clustered(work / "quiltdetect"))},
    }
    print(json.dumps(result, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
