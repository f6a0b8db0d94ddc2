"""Benchmark of the quilt job at scale: time per stage and end to end against N pages.

One command runs everything and writes ``<out>/quilts_scale.json`` and ``<out>/quilts_scale.png``:

    PYTHONPATH=src python bench/quilts_scale.py --sizes 10000 25000 100000 --out bench/results

For each N it generates (once, cached in ``--work``) a corpus from the real prose in
``../shared/data`` with the project's generator (sites of Zipf-like sizes, per-site
boilerplate, mirrors, near-copies, planted quilts, log-normal page lengths around 450 words),
then runs the real quilt job (the ``quiltdetect quilts`` code path, Parquet input, local[2])
in a fresh process and records: seconds per stage and in total, pages/s and words/s per core,
peak memory (RSS of the driver's Python process, of the JVM, and of the Python workers,
sampled every 0.2 s; plus the JVM's own peak heap from the Spark REST API), shuffle bytes,
and per Spark stage the longest task's share of the stage.

In the same run it also times

* ``--port-max N``: a straightforward port of the paper's figure 5 (``bench/quilts_naive.py``:
  Python string k-grams, plain RDDs) on every size up to N, for the side-by-side ratio;
* the kernel alone (tokenise + hash + combine + distinct, one core) against the plain
  tokenise-and-hash rate (``re.findall`` + ``mmh3.hash64`` per word, no memo);
* ``--warc-pages N``: ingestion from WARC (the same generator, written as WARC);
* ``--skew-pages N``: two skewed corpora derived from the N-page one: one where a boilerplate
  line (hence its 5-grams) occurs in every page, one where 1 % of pages are 100x longer;
* ``--only neardup|phrases|reuse|mwo|sweep`` (opt-in, repeatable): the other analyses on the
  same corpora, each in its own process through the console command (``JOB_MODES``): neardup at
  its default (lsh) and at ``--preset henzinger-calibrated`` (the default before lsh), phrases,
  reuse discover, mwo index and mwo join at t = 0.8, the sweep's default grid;
* ``--cap X``: each of those stopped once it has run X times its goal (``goal_ratio``: the scale
  issue's multiple of the quilt job's time at the same size), recorded under ``stopped`` with
  the Spark jobs it was in and the seconds of each stage it got through, so that one job far
  over its goal cannot hold up the whole run; ``--drop-outputs`` deletes each job's output once
  its figures are read (every analysis at 1,000,000 pages leaves more than 34 GB);
* ``--only floor``: after the quilt job at each size, ``bench/floor.py`` on the same corpus (a
  session, the input written once, every gram's document frequency through one shuffle: what no
  layout of the job avoids), recorded under ``floor`` with the job's time over the floor's;
* ``plot A.json B.json --png X.png``: one plot of time against N from several runs' JSON
  (stopped jobs drawn as open triangles: at least that long).

Load on this shared 2-core machine varies; every record carries ``uptime``'s load averages.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:  # testkit: the corpus generator, the memory sampler (a script's sys.path starts at bench/)
    sys.path.insert(0, str(REPO))
from testkit.memory import MemorySampler  # noqa: E402

CORES = 2


def load_average() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def bytecode_cached() -> bool:
    """Whether this Python finds compiled bytecode for pandas and PySpark. Without it (uv installs
    without compiling unless asked, and PYTHONDONTWRITEBYTECODE=1 stops Python from caching),
    every driver and every Spark Python worker compiles them from source again: about 1.3 s of
    CPU per process, which small runs would report as the job's time."""
    import importlib.util

    for name in ("pandas", "pyspark"):
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None or not Path(importlib.util.cache_from_source(spec.origin)).exists():
            return False
    return True


# --------------------------------------------------------------------------- corpora


def make_corpus(work: Path, n: int, seed: int, fmt: str = "parquet",
                vocabulary: str = "prose") -> tuple[Path, dict]:
    """The N-page corpus (cached): its path and {pages, words}. ``vocabulary`` "open": remix
    passes draw every word from an open Zipf vocabulary (``testkit.corpus.pool.OpenVocabulary``)."""
    from testkit.corpus import (
        find_shared_data,
        generate,
        load_prose,
        write_corpus_table,
        write_warc,
    )

    suffix = "warc.gz" if fmt == "warc" else fmt
    name = f"c{n}-s{seed}" + ("" if vocabulary == "prose" else f"-{vocabulary}")
    path = work / f"{name}.{suffix}"
    meta_path = work / f"{name}.{suffix}.meta.json"
    if meta_path.exists():
        return path, json.loads(meta_path.read_text())
    shared = find_shared_data(REPO) or find_shared_data(REPO.parent)
    if shared is None:
        raise SystemExit("shared data not found (../shared/data)")
    if fmt == "parquet" and n > SHARD_PAGES:
        meta = _sharded_corpus(load_prose(shared), path, n, seed, vocabulary)
        meta_path.write_text(json.dumps(meta))
        return path, meta
    corpus = generate(load_prose(shared), n, seed, vocabulary)
    if fmt == "warc":
        write_warc(corpus, path)
    else:
        write_corpus_table(corpus, path, fmt)
    meta = {"pages": len(corpus.pages), "words": corpus.n_words}
    meta_path.write_text(json.dumps(meta))
    return path, meta


SHARD_PAGES = 100_000  # a generated corpus holds every page in memory: ~2 GB per 100,000 pages


def _sharded_corpus(prose, path: Path, n: int, seed: int, vocabulary: str = "prose") -> dict:
    """A Parquet corpus of more than SHARD_PAGES pages, generated as independent shards of at
    most SHARD_PAGES pages (seeds ``seed * 1000 + i``), one Parquet part each.

    One 1,000,000-page draft needs ~21 GB of Python objects and its text column overflows an
    Arrow string array; shards keep generation within ~2 GB. Each shard is its own little web
    (its own sites, originals, mirrors and quilts); page ids differ between shards (uuid5 of the
    seed).
    """
    import gc
    import shutil

    from testkit.corpus import generate, write_corpus_table

    path.mkdir(parents=True, exist_ok=True)
    pages = words = 0
    for i, start in enumerate(range(0, n, SHARD_PAGES)):
        corpus = generate(prose, min(SHARD_PAGES, n - start), seed * 1000 + i, vocabulary)
        part = write_corpus_table(corpus, path / f"shard-{i}", "parquet")
        shutil.move(str(part), str(path / f"part-{i:05d}.parquet"))
        shutil.rmtree(path / f"shard-{i}")
        pages, words = pages + len(corpus.pages), words + corpus.n_words
        del corpus
        gc.collect()
    return {"pages": pages, "words": words, "shards": -(-n // SHARD_PAGES)}


def split_corpus(work: Path, corpus: Path, meta: dict, segment_pages: int) -> tuple[Path, dict, Path, dict]:
    """An archive and a new segment of about ``segment_pages`` pages drawn from the corpus by a
    hash of the page id (cached): the segment's pages are spread over the whole generated web,
    so they share sites, boilerplate and quilt sources with the archive as a new crawl would."""
    import mmh3
    import pyarrow as pa
    import pyarrow.parquet as pq

    base = corpus.name.removesuffix(".parquet")
    paths = (work / f"{base}-archive.parquet", work / f"{base}-segment{segment_pages}.parquet")
    metas = [p.with_name(p.name + ".meta.json") for p in paths]
    # the corpus the split was cut from (its files' names and sizes): a corpus generated again
    # (another generator version, or by bench/corpus.py) must not meet a split of the old one
    source = sorted((f.name, f.stat().st_size) for f in (sorted(corpus.glob("*.parquet")) if corpus.is_dir() else [corpus]))
    if all(m.exists() for m in metas):
        cached = [json.loads(m.read_text()) for m in metas]
        if all(c.get("source") == [list(x) for x in source] for c in cached):
            return paths[0], cached[0], paths[1], cached[1]
        for path in paths:
            shutil.rmtree(path, ignore_errors=True)
    share = segment_pages / meta["pages"]
    counts = [[0, 0], [0, 0]]
    for path in paths:
        path.mkdir(parents=True, exist_ok=True)
    for i, part in enumerate(sorted(corpus.glob("*.parquet")) if corpus.is_dir() else [corpus]):
        table = pq.read_table(part)
        ids = table.column("id").to_pylist()
        new = [mmh3.hash64(str(d), 22)[0] % (1 << 20) < share * (1 << 20) for d in ids]
        mask = pa.array(new)
        for j, chosen in enumerate((pa.compute.invert(mask), mask)):
            rows = table.filter(chosen)
            pq.write_table(rows, paths[j] / f"part-{i:05d}.parquet")
            words = sum(len(t.split()) for t in rows.column("text").to_pylist() if t)
            counts[j][0] += rows.num_rows
            counts[j][1] += words
    for m, (pages, words) in zip(metas, counts, strict=True):
        m.write_text(json.dumps({"pages": pages, "words": words, "source": source}))
    return paths[0], {"pages": counts[0][0], "words": counts[0][1]}, paths[1], {"pages": counts[1][0], "words": counts[1][1]}


def tree_bytes(path: Path) -> int:
    """Bytes of the files under a directory."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def make_skewed(work: Path, base: Path, kind: str) -> tuple[Path, dict]:
    """A skewed variant of a Parquet corpus: ``boilerplate`` or ``long`` (see module doc)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = work / f"{base.name.split('.')[0]}-{kind}.parquet"
    meta_path = Path(str(path) + ".meta.json")
    if meta_path.exists():
        return path, json.loads(meta_path.read_text())
    table = pq.read_table(base)
    texts = table.column("text").to_pylist()
    rng = np.random.default_rng(7)
    if kind == "boilerplate":
        line = "\nThis page is part of the quiltdetect benchmark network all rights reserved\n"
        texts = [t + line for t in texts]
    elif kind == "long":
        for i in range(0, len(texts), 100):  # 1 % of pages, 100x longer: its own text + 99 shuffles
            tokens = texts[i].split()
            parts = [texts[i]]
            for _ in range(99):
                parts.append(" ".join(tokens[j] for j in rng.permutation(len(tokens))))
            texts[i] = "\n".join(parts)
    else:
        raise ValueError(kind)
    table = table.set_column(table.column_names.index("text"), "text", pa.array(texts, pa.string()))
    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path / "part-00000.parquet", compression="zstd", row_group_size=20_000)
    words = sum(len(re.findall(r"[^\W_]+", t)) for t in texts)
    meta = {"pages": len(texts), "words": words}
    meta_path.write_text(json.dumps(meta))
    return path, meta


# --------------------------------------------------------------------------- one measured run


def _rest(base: str, path: str):
    with urllib.request.urlopen(base + "/api/v1" + path, timeout=300) as resp:  # slow under load
        return json.loads(resp.read())


def _time(s: str) -> float:
    return datetime.strptime(s.replace("GMT", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


def spark_figures(spark) -> dict:
    """Shuffle bytes, peak JVM heap and the longest task's share per stage, from the REST API."""
    sc = spark.sparkContext
    base = sc.uiWebUrl
    app = sc.applicationId
    stages = _rest(base, f"/applications/{app}/stages?status=complete")
    shuffle_write = sum(s.get("shuffleWriteBytes", 0) for s in stages)
    per_stage = []
    for s in stages:
        wall = _time(s["completionTime"]) - _time(s["submissionTime"])
        if wall < 1.0 or s["numTasks"] < 2:
            continue
        summary = _rest(base, f"/applications/{app}/stages/{s['stageId']}/{s['attemptId']}/taskSummary?quantiles=0.5,1.0")
        longest = summary["duration"][1] / 1000
        total = s["executorRunTime"] / 1000
        mean = total / s["numTasks"]
        per_stage.append({
            "stage": s["stageId"], "name": (s.get("description") or s["name"])[:90], "tasks": s["numTasks"],
            "seconds": round(wall, 2), "longest_task": round(longest, 2),
            "longest_share": round(longest / wall, 3) if wall else None,
            # longest task / mean task: 1.0 = perfectly even tasks
            "straggler_ratio": round(longest / mean, 2) if mean else None,
        })
    heap = 0
    for ex in _rest(base, f"/applications/{app}/allexecutors"):
        heap = max(heap, (ex.get("peakMemoryMetrics") or {}).get("JVMHeapMemory", 0))
    # the stage where one task weighs most: longest task's share of the stage's wall time,
    # among stages with more tasks than cores (with <= 2 tasks on 2 cores the share is ~1 by design)
    many = [s for s in per_stage if s["tasks"] > CORES]
    worst = max(many, key=lambda s: s["longest_share"] or 0, default=None)
    return {"shuffle_write_bytes": shuffle_write, "jvm_peak_heap": heap, "stages": per_stage, "worst_stage": worst}


def stage_cpu(timeline: list[tuple[float, ...]], start: float, stages: dict, column: int = 1) -> dict:
    """CPU seconds spent during each stage (stages ran one after another from ``start``);
    ``column``: 1 all processes, 2 the JVM, 3 the Python workers (``MemorySampler.timeline``)."""
    import bisect

    times = [row[0] for row in timeline]

    def cpu_at(t: float) -> float:
        i = min(max(bisect.bisect_left(times, t), 0), len(timeline) - 1)
        return timeline[i][column]

    out, t = {}, start
    for name, seconds in stages.items():
        out[name] = round(cpu_at(t + (seconds or 0)) - cpu_at(t), 1)
        t += seconds or 0
    return out


# Job modes of the harness: the console command's words and options for each (the same code
# path as `quiltdetect ...`). neardup is the shipped default (lsh), neardup-henzinger the
# default before it; mwo-join at t = 0.8, the working point; sweep the default grid.
JOB_MODES: dict[str, list[str]] = {
    "quilts": ["quilts", "--top", "0"],
    "neardup": ["neardup", "--top", "0"],
    "neardup-henzinger": ["neardup", "--preset", "henzinger-calibrated", "--top", "0"],
    "phrases": ["phrases", "--top", "0"],
    "reuse": ["reuse", "discover", "--top", "0"],
    "mwo-index": ["mwo", "index", "--top", "0"],
    "mwo-join": ["mwo", "join", "-t", "0.8", "--top", "0"],
    "sweep": ["sweep"],
}
# --only NAME runs these modes at every size
ONLY_GROUPS = {"quilts": ["quilts"], "neardup": ["neardup", "neardup-henzinger"], "phrases": ["phrases"],
               "reuse": ["reuse"], "mwo": ["mwo-index", "mwo-join"], "sweep": ["sweep"]}


def run_one(args: argparse.Namespace) -> None:
    """Child process: one quilt run (or one naive-port run) with its figures, as JSON."""
    sampler = MemorySampler()
    sampler.start()
    t0 = time.perf_counter()
    spark_conf = [
        "spark.master=local[2]",
        f"spark.driver.memory={args.driver_memory}",
        "spark.ui.enabled=true",
        "spark.ui.showConsoleProgress=false",
        "spark.executor.processTreeMetrics.enabled=true",
        "spark.executor.metrics.pollingInterval=500",
        "spark.log.level=ERROR",
    ] + list(args.set)
    out: dict = {"mode": args.mode, "input": args.input, "load_before": load_average()}
    if args.mode == "naive":
        from pyspark.sql import SparkSession

        builder = SparkSession.builder.appName("naive-port")
        for item in spark_conf:
            key, value = item.split("=", 1)
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.addPyFile(str(HERE / "quilts_naive.py"))  # the workers import it too
        sys.path.insert(0, str(HERE))
        from quilts_naive import naive_quilts

        try:
            res = naive_quilts(spark, args.input, args.output)
            out.update(res)
            out["stage_seconds"] = {}
            out.update(spark_figures(spark))
        finally:
            spark.stop()
    else:
        from pyspark.sql import SparkSession

        from quiltdetect.cli import main as console

        cli = [*JOB_MODES[args.mode], "--input", args.input, "--output", args.output, "--overwrite", "-q"]
        if args.previous:
            cli += ["--previous", args.previous]
        for item in spark_conf:
            cli += ["--set", item]
        if console(cli) != 0:
            raise SystemExit(f"quiltdetect {' '.join(cli)} failed")
        spark = SparkSession.getActiveSession()
        try:
            out["seconds"] = round(time.perf_counter() - t0, 3)
            metrics = json.loads((Path(args.output) / "metrics.json").read_text())
            t_job = time.perf_counter() - metrics["total_seconds"]  # when the job's first stage began
            stages = metrics["stages"]
            out["stage_seconds"] = {k: v.get("seconds") for k, v in stages.items()}
            out["counts"] = {k: {c: v for c, v in st.items() if c != "seconds"} for k, st in stages.items()}
            out["quilts"] = stages.get("quilts", {}).get("quilts")
            out["stage_cpu_seconds"] = stage_cpu(sampler.timeline, t_job, out["stage_seconds"])
            # the same split by process: where a stage's CPU goes (the driver's Python is neither)
            out["stage_cpu_jvm"] = stage_cpu(sampler.timeline, t_job, out["stage_seconds"], 2)
            out["stage_cpu_python_workers"] = stage_cpu(sampler.timeline, t_job, out["stage_seconds"], 3)
            # the job's own driver peak, before the REST figures below parse large JSON here
            out["driver_python_peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            out.update(spark_figures(spark))
        finally:
            spark.stop()
    sampler.stop_flag.set()
    sampler.sample()
    out.update(sampler.peak)
    me = os.times()
    # CPU seconds of the whole run: this driver process, the JVM and every Python worker (a
    # worker that lived less than one 0.2 s sample is missed). Load-independent, unlike wall time.
    out["cpu_seconds"] = round(sum(sampler.cpu.values()) + me.user + me.system, 2)
    out.setdefault("driver_python_peak_rss", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    out["load_after"] = load_average()
    Path(args.json).write_text(json.dumps(out, indent=2))


class Stopped(Exception):
    """A child run stopped at its time cap; ``progress`` and ``stage_seconds`` are what its
    Spark UI showed then (``spark_progress``)."""

    def __init__(self, seconds: float, progress: list[dict], stage_seconds: dict[str, float]):
        super().__init__(f"stopped after {seconds:.0f} s")
        self.seconds, self.progress, self.stage_seconds = seconds, progress, stage_seconds


def spark_progress(port: int = 4040) -> tuple[list[dict], dict[str, float]]:
    """Where a running local Spark application is, from its UI: the jobs it is in (description,
    tasks done of all), and the wall seconds each job stage (``<job>: <stage> - ...``) had
    taken so far, from its first job's submission to its last job's end (or now, when one
    still runs). What a run stopped at its cap got through. Empty when no UI answers."""
    base = f"http://localhost:{port}"
    try:
        app = _rest(base, "/applications")[0]["id"]
        jobs = _rest(base, f"/applications/{app}/jobs")
    except (OSError, ValueError, IndexError, KeyError):
        return [], {}
    running = [{"job": (j.get("description") or j["name"])[:120], "tasks_done": j["numCompletedTasks"],
                "tasks": j["numTasks"]} for j in jobs if j.get("status") == "RUNNING"]
    spans: dict[str, list[float]] = {}
    now = time.time()
    for j in jobs:
        desc = j.get("description") or ""
        if ": " not in desc or "submissionTime" not in j:
            continue
        stage = desc.split(": ", 1)[1].split(" - ", 1)[0]
        start = _time(j["submissionTime"])
        end = _time(j["completionTime"]) if j.get("completionTime") else now
        span = spans.setdefault(stage, [start, end])
        span[0], span[1] = min(span[0], start), max(span[1], end)
    return running, {k: round(b - a, 1) for k, (a, b) in sorted(spans.items(), key=lambda kv: kv[1][0])}


def child(mode: str, input_path: Path, output: Path, json_path: Path, opts: argparse.Namespace,
          previous: Path | None = None, cap: float | None = None) -> dict:
    """One measured run in its own process (``one``); with ``cap`` seconds, stopped there
    (the process group killed, after reading where its Spark UI was): ``Stopped``.

    Its Spark scratch (shuffle files, spills, cached blocks) goes to a folder of its own beside
    the output, removed when the child ends, however it ends: a killed JVM cannot delete its
    own, and three stopped million-page runs left 23 GB of it in /tmp. A ``SPARK_LOCAL_DIRS``
    or ``spark.local.dir`` of the caller's is used as it is."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "one", "--mode", mode, "--input", str(input_path),
           "--output", str(output), "--json", str(json_path), "--driver-memory", opts.driver_memory]
    if previous is not None:
        cmd += ["--previous", str(previous)]
    for item in opts.set:
        cmd += ["--set", item]
    env = dict(os.environ)
    scratch = None
    if "SPARK_LOCAL_DIRS" not in env and not any(item.startswith("spark.local.dir=") for item in opts.set):
        scratch = output.parent / f"{output.name}.scratch"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        env["SPARK_LOCAL_DIRS"] = str(scratch)
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(cmd, start_new_session=True, env=env)  # its own group: the JVM and workers go with it
        try:
            status = proc.wait(timeout=cap)
        except subprocess.TimeoutExpired:
            progress, stage_seconds = spark_progress()
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise Stopped(time.perf_counter() - t0, progress, stage_seconds) from None
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    if status != 0:
        raise subprocess.CalledProcessError(status, cmd)
    res = json.loads(json_path.read_text())
    res["process_seconds"] = round(time.perf_counter() - t0, 3)
    return res


def floor_child(input_path: Path, work: Path) -> dict:
    """``bench/floor.py`` (its ``write`` and ``merge`` jobs) on ``input_path`` in its own process,
    its scratch and table under ``work``, removed after; its figures (its stdout: Spark's log and
    any failure go to the terminal, as the job runs' do)."""
    docs, scratch = work.with_name(f"{work.name}-docs"), work.with_name(f"{work.name}.scratch")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    env = {**os.environ, "SPARK_LOCAL_DIRS": str(scratch)}
    load = load_average()
    try:
        done = subprocess.run([sys.executable, str(HERE / "floor.py"), str(input_path), "--jobs", "write", "merge",
                               "--docs", str(docs)], env=env, check=True, stdout=subprocess.PIPE, text=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(docs, ignore_errors=True)
    return {"load_before": load, **json.loads(done.stdout)}


def dropped(args: argparse.Namespace, output: Path) -> None:
    """With ``--drop-outputs``, delete a job's output once its figures are read (its JSON stays)."""
    if args.drop_outputs:
        shutil.rmtree(output, ignore_errors=True)


def goal_ratio(mode: str) -> float | None:
    """The scale issue's goal for a job, as a multiple of the quilt job's time on the same
    corpus: 3 for the MWO self-join, 0.6 per (k, m) pass for the sweep, 2 for the others."""
    if mode == "sweep":
        from quiltdetect.sweep.config import SweepConfig

        return 0.6 * len(SweepConfig().passes())
    if mode == "mwo-join":
        return 3.0
    return 2.0 if mode in JOB_MODES and mode != "quilts" else None


# --------------------------------------------------------------------------- the kernel alone


def kernel_rates(corpus: Path, n_pages: int = 3000) -> dict:
    """Words per CPU-second on one core: tokenise, plain tokenise+hash, the memoised hash, the
    vectorised hash of a batch (``batch_word_hashes``), the kernel per document
    (``distinct_grams``) and per Arrow batch (``batch_gram_pairs``, as the job runs it)."""
    import mmh3
    import pyarrow.parquet as pq

    from quiltdetect.kernel.grams import distinct_grams
    from quiltdetect.kernel.words import WORD_SEED, batch_word_hashes, word_hashes, words

    texts = pq.read_table(corpus).column("text").to_pylist()[:n_pages]
    n_words = sum(len(words(t)) for t in texts)

    def plain(text: str):
        return [mmh3.hash64(w, WORD_SEED, signed=False)[0] for w in words(text)]

    from quiltdetect.kernel.buckets import batch_gram_pairs

    def cpu() -> float:  # this process's CPU time: unlike wall time, not inflated by other load
        t = os.times()
        return t.user + t.system

    def per_text(fn):
        return lambda: [fn(t) for t in texts]

    def per_batch(fn):
        return lambda: [fn(texts[i : i + 2000]) for i in range(0, len(texts), 2000)]

    rates = {}
    for name, run in (("tokenise", per_text(words)),
                      ("tokenise_hash_plain", per_text(plain)),
                      ("tokenise_hash_memo", per_text(word_hashes)),
                      ("tokenise_hash_batch", per_batch(batch_word_hashes)),
                      ("kernel_per_doc", per_text(lambda t: distinct_grams(t, 5))),
                      ("kernel_batch", per_batch(lambda b: batch_gram_pairs(b, 5)))):
        best = 0.0
        for _ in range(3):
            t0 = cpu()
            run()
            best = max(best, n_words / max(cpu() - t0, 1e-9))
        rates[name] = round(best)
    rates["words"] = n_words
    rates["pages"] = len(texts)
    rates["load"] = load_average()
    return rates


# --------------------------------------------------------------------------- report


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.6, 4.2))
    labels = {"naive": "straightforward port (fig. 5)", "neardup-henzinger": "neardup, henzinger-calibrated",
              "mwo-join": "mwo join, t = 0.8"}
    stopped_label = "stopped at its cap (at least this long)"
    for key in dict.fromkeys(["quilts", "naive", *JOB_MODES]):
        label = labels.get(key, " ".join(w for w in JOB_MODES.get(key, [key]) if not w.startswith("-") and w != "0"))
        pts = sorted((r["pages"], r["seconds"]) for r in results["runs"] if r["mode"] == key)
        stops = sorted((r["pages"], r["seconds"]) for r in results.get("stopped", []) if r["mode"] == key)
        if not pts and not stops:
            continue
        line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=label if pts else None)
        if stops:  # a lower bound, joined to the finished sizes by a dashed line
            joined = sorted([pts[-1], *stops]) if pts else stops
            ax.plot([p[0] for p in joined], [p[1] for p in joined], "--", color=line.get_color())
            ax.plot([p[0] for p in stops], [p[1] for p in stops], "^", mfc="none", color=line.get_color(),
                    label=None if pts else label)
    if results.get("stopped"):
        ax.plot([], [], "^", mfc="none", color="black", label=stopped_label)
    pts = sorted((r["pages"], r["seconds"]) for r in results["runs"] if r["mode"] == "quilts")
    if pts:
        n0, t0 = pts[0]
        ax.plot([p[0] for p in pts], [t0 * p[0] / n0 for p in pts], ":", color="grey", label="linear from smallest N")
    ax.set_xlabel("pages")
    ax.set_ylabel("seconds, end to end (local[2])")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:  # --only incremental alone plots no size runs
        ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.02, 0.5))
    ax.set_title("time against corpus size, each job in its own process")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def summary(results: dict) -> str:
    lines = [f"{'run':<28}{'pages':>9}{'s':>9}{'pages/s/core':>14}{'words/s/core':>14}{'jvm GB':>8}{'py-w GB':>8}"
             f"{'drv GB':>8}{'shuffle MB':>11}{'cpu s':>8}{'pages/cpu-s':>12}{'load':>6}"]
    for r in results["runs"]:
        lines.append(
            f"{r['label']:<28}{r['pages']:>9}{r['seconds']:>9.1f}{r['pages_per_s_core']:>14.0f}"
            f"{r['words_per_s_core']:>14.0f}{r['jvm_rss'] / 2**30:>8.2f}{r['python_workers_rss'] / 2**30:>8.2f}"
            f"{r['driver_python_peak_rss'] / 2**30:>8.2f}{r['shuffle_write_bytes'] / 2**20:>11.0f}"
            f"{r['cpu_seconds']:>8.0f}{r['pages_per_cpu_s']:>12.0f}"
            f"{r['load_before'][0]:>6.1f}")
    return "\n".join(lines)


def incremental_rows(args: argparse.Namespace, record) -> dict:
    """An archive run, the update that adds a new segment to it (``--previous``), a fresh run
    over both and a fresh run over the segment alone, in this one harness run: the update's
    share of the fresh run's time, its floor (the segment alone: every stage's fixed cost and
    the segment's own work, no archive), the bytes of state per page, and the share of old
    documents the update recomputed."""
    total = args.archive_pages + args.segment_pages
    corpus, meta = make_corpus(args.work, total, args.seed)
    archive, archive_meta, segment, segment_meta = split_corpus(args.work, corpus, meta, args.segment_pages)
    mode = args.incremental_mode
    tag = "inc" if mode == "quilts" else f"inc-{mode}"
    runs = {}
    archive_out, update_out = args.work / f"{tag}-archive", args.work / f"{tag}-update"
    for label, path, m, output, previous in (
        ("archive", archive, archive_meta, archive_out, None),
        ("update", segment, segment_meta, update_out, archive_out),
        ("fresh", corpus, meta, args.work / f"{tag}-fresh", None),
        ("segment-alone", segment, segment_meta, args.work / f"{tag}-segment-alone", None),
    ):
        res = child(mode, path, output, args.work / f"{tag}-{label}.json", args, previous=previous)
        record(f"incremental {mode} {label} {m['pages']}", f"incremental-{mode}-{label}", m, res)
        runs[label] = res
        if label == "archive":  # the state an update reads, per page of the archive
            work = archive_out / "_quiltdetect" / "work"
            states = [work / "gram-buckets-k5"] if mode == "quilts" else sorted(work.glob("neardup-*"))
            state_bytes, docs_bytes = sum(tree_bytes(s) for s in states), tree_bytes(archive_out / "docs")
        if label == "update":  # a million-page fresh run needs their disk (its shuffle files alone ~13 GB)
            shutil.rmtree(archive_out, ignore_errors=True)
            shutil.rmtree(update_out, ignore_errors=True)
        elif label != "archive":
            dropped(args, output)
    pages = archive_meta["pages"]
    ingest = runs["update"]["counts"].get("ingest", {})
    touched = runs["update"]["counts"].get("patchfrac", {}).get("recomputed_old_documents", pages)
    figures = {"mode": mode,
        "archive_pages": pages, "segment_pages": segment_meta["pages"],
        "update_seconds": runs["update"]["seconds"], "fresh_seconds": runs["fresh"]["seconds"],
        "update_over_fresh": round(runs["update"]["seconds"] / runs["fresh"]["seconds"], 3),
        "update_cpu_over_fresh": round(runs["update"]["cpu_seconds"] / runs["fresh"]["cpu_seconds"], 3),
        "segment_alone_seconds": runs["segment-alone"]["seconds"],
        "segment_alone_over_fresh": round(runs["segment-alone"]["seconds"] / runs["fresh"]["seconds"], 3),
        "state_bytes_per_page": round(state_bytes / pages, 1),
        "docs_bytes_per_page": round(docs_bytes / pages, 1),
        "already_seen": ingest.get("already_seen"),
        "update_stage_seconds": runs["update"]["stage_seconds"],
        "fresh_stage_seconds": runs["fresh"]["stage_seconds"],
    }
    if mode == "quilts":
        figures["old_documents_recomputed_share"] = round(touched / pages, 4)
    else:
        figures["update_pairs"] = runs["update"]["counts"].get("pairs", {})
    print(json.dumps(figures), flush=True)
    return figures


def skip_spec(text: str) -> tuple[str, int | None]:
    """``--skip JOB`` (every size) or ``--skip JOB@N`` (only the N-page corpus)."""
    mode, _, pages = text.partition("@")
    if mode not in JOB_MODES:
        raise argparse.ArgumentTypeError(f"{mode!r} is not a job: one of {', '.join(JOB_MODES)}")
    try:
        return mode, int(pages) if pages else None
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: N in JOB@N is a page count, e.g. mwo-join@1000000") from None


def build_parser() -> argparse.ArgumentParser:
    """The command line: ``one`` (a child's measured run), ``plot``, or no command (the harness)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd")
    one = sub.add_parser("one")
    one.add_argument("--mode", choices=["naive", *JOB_MODES], default="quilts")
    one.add_argument("--input", required=True)
    one.add_argument("--output", required=True)
    one.add_argument("--json", required=True)
    one.add_argument("--driver-memory", default=None, help="the JVM heap (default: the shipped default)")
    one.add_argument("--set", action="append", default=[])
    one.add_argument("--previous", default=None, help="update this finished quilt run (incremental)")
    drawn = sub.add_parser("plot", help="one plot of time against N from several runs' JSON")
    drawn.add_argument("results", type=Path, nargs="+")
    drawn.add_argument("--png", type=Path, required=True)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000, 25000, 100000])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--vocabulary", choices=["prose", "open"], default="prose",
                    help="the generated corpora's remix words: the prose's (default) or an open Zipf "
                         "vocabulary that grows with the corpus, as a crawl's does")
    ap.add_argument("--work", type=Path, default=Path("/tmp/quiltdetect-bench"), help="corpora and outputs")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--port-max", type=int, default=25000, help="run the naive port on sizes up to this N")
    ap.add_argument("--warc-pages", type=int, default=10000, help="WARC ingestion run size (0: skip)")
    ap.add_argument("--skew-pages", type=int, default=25000, help="skewed corpora size (0: skip)")
    ap.add_argument("--driver-memory", default=None,
                    help="the JVM heap of every run (default: the console command's, spark.driver.memory in "
                         "common/config.py: 4g)")
    ap.add_argument("--set", action="append", default=[], help="extra Spark/quilt settings KEY=VALUE")
    ap.add_argument("--archive-pages", type=int, default=100000,
                    help="with --only incremental: the archive's size before the new segment")
    ap.add_argument("--segment-pages", type=int, default=10000,
                    help="with --only incremental: the new segment's size")
    ap.add_argument("--incremental-mode", choices=["quilts", "neardup"], default="quilts",
                    help="with --only incremental: the job whose update is measured")
    ap.add_argument("--cap", type=float, default=0.0,
                    help="stop an analysis at this many times its goal ratio to the quilt job of the same "
                         "size (goal_ratio) and record where it was; 0 = never (needs the quilts row)")
    ap.add_argument("--drop-outputs", action="store_true",
                    help="delete each job's output once its row is recorded (the JSON figures stay): "
                         "every analysis at 1,000,000 pages leaves more than 34 GB")
    ap.add_argument("--skip", type=skip_spec, action="append", default=[], metavar="JOB[@N]",
                    help="leave out this job of an --only group (repeatable), at every size or only at N pages: "
                         f"one of {', '.join(JOB_MODES)}, e.g. --only mwo --skip mwo-join or --skip mwo-join@1000000")
    ap.add_argument("--only", choices=[*ONLY_GROUPS, "naive", "kernel", "warc", "skew", "incremental", "floor"],
                    action="append",
                    help="what to run (repeatable; default: quilts, naive, kernel, warc, skew); neardup (default "
                         "and henzinger-calibrated), phrases, reuse (discover), mwo (index, join at t = 0.8) and "
                         "sweep (default grid) run beside quilts at every size; floor (bench/floor.py) after "
                         "quilts at every size")
    return ap


def plot_runs(paths: list[Path], png: Path) -> None:
    """``plot``: one plot of time against N from several runs' JSON."""
    merged: dict = {"runs": [], "stopped": []}
    for path in paths:
        one_run = json.loads(path.read_text())
        merged["runs"] += one_run.get("runs", [])
        merged["stopped"] += one_run.get("stopped", [])
    plot(merged, png)


class Results:
    """A harness run's figures (``data``), written to ``<out>/quilts_scale.json`` as they come."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.path = args.out / "quilts_scale.json"
        self.data: dict = {"command": " ".join(sys.argv), "vocabulary": args.vocabulary, "cores": CORES,
                           "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "bytecode_cached": bytecode_cached(),
                           "runs": []}

    def save(self) -> None:
        self.path.write_text(json.dumps(self.data, indent=2))

    def record(self, label: str, mode: str, meta: dict, res: dict) -> None:
        """A measured run's row, with its rates per core and per CPU-second; the table so far printed."""
        res.update(label=label, mode=mode, pages=meta["pages"], words=meta["words"])
        res["pages_per_s_core"] = meta["pages"] / res["seconds"] / CORES
        res["words_per_s_core"] = meta["words"] / res["seconds"] / CORES
        res["pages_per_cpu_s"] = meta["pages"] / res["cpu_seconds"]
        self.data["runs"].append(res)
        self.save()
        print(summary(self.data), flush=True)

    def add(self, key: str, row: dict) -> None:
        """A row of the ``key`` list (stopped, failed, floor), saved at once."""
        self.data.setdefault(key, []).append(row)
        self.save()

    def quilts_seconds(self, pages: int) -> list[float]:
        """The quilt job's seconds on the corpus of ``pages`` pages (empty before it ran)."""
        return [r["seconds"] for r in self.data["runs"] if r["mode"] == "quilts" and r["pages"] == pages]


def run_quilts(args: argparse.Namespace, results: Results, n: int, path: Path, meta: dict) -> None:
    """--only quilts: the quilt job on the N-page corpus."""
    res = child("quilts", path, args.work / f"q{n}", args.work / f"q{n}.json", args)
    results.record(f"quilts parquet {n}", "quilts", meta, res)
    dropped(args, args.work / f"q{n}")


def run_job(args: argparse.Namespace, results: Results, mode: str, n: int, path: Path, meta: dict) -> None:
    """One job of an --only group (``ONLY_GROUPS``) on the N-page corpus, unless --skip leaves it
    out; one stopped at its --cap or failing is recorded as such (``stopped``, ``failed``)."""
    if (mode, None) in args.skip or (mode, n) in args.skip:
        results.data.setdefault("skipped", []).append({"mode": mode, "pages": n})
        return
    started = time.perf_counter()
    quilts = results.quilts_seconds(meta["pages"])
    cap = args.cap * goal_ratio(mode) * quilts[0] if args.cap and quilts else None
    try:
        res = child(mode, path, args.work / f"{mode}{n}", args.work / f"{mode}{n}.json", args, cap=cap)
    except Stopped as stop:  # over its goal by the cap's factor: where it was is the figure
        results.add("stopped", {
            "mode": mode, "pages": meta["pages"], "seconds": round(stop.seconds, 1),
            "cap_seconds": round(cap, 1), "goal_ratio": goal_ratio(mode),
            "quilts_seconds": quilts[0], "running": stop.progress,
            "stage_seconds": stop.stage_seconds})
        print(f"{mode} parquet {n}: stopped at {stop.seconds:.0f} s ({args.cap:g} x its goal of "
              f"{goal_ratio(mode):g} x quilts), in {stop.progress}", flush=True)
        return
    except subprocess.CalledProcessError as exc:  # one job failing at a size is a figure too
        results.add("failed", {"mode": mode, "pages": meta["pages"], "exit_status": exc.returncode,
                               "seconds": round(time.perf_counter() - started, 1)})
        print(f"{mode} parquet {n}: failed with exit status {exc.returncode}", flush=True)
        return
    finally:
        dropped(args, args.work / f"{mode}{n}")
    results.record(f"{mode} parquet {n}", mode, meta, res)


def run_floor(args: argparse.Namespace, results: Results, n: int, path: Path, meta: dict) -> None:
    """--only floor: ``bench/floor.py`` on the N-page corpus, and the quilt job's time over the floor's."""
    res = floor_child(path, args.work / f"floor{n}")
    quilts = results.quilts_seconds(meta["pages"])
    row = {"pages": meta["pages"], **res}
    if quilts:
        row["job_over_floor"] = round(quilts[0] / res["seconds"]["total"], 3)
    results.add("floor", row)
    print(f"floor {n}: {json.dumps(row['seconds'])}, job / floor {row.get('job_over_floor')}", flush=True)


def run_naive(args: argparse.Namespace, results: Results, n: int, path: Path, meta: dict) -> None:
    """--only naive: the straightforward port (``bench/quilts_naive.py``) on the N-page corpus."""
    res = child("naive", path, args.work / f"naive{n}", args.work / f"naive{n}.json", args)
    results.record(f"naive port {n}", "naive", meta, res)


def run_size(args: argparse.Namespace, results: Results, only: set[str], n: int) -> None:
    """The runs on the N-page corpus: quilts, the other --only groups' jobs, floor, the naive port."""
    path, meta = make_corpus(args.work, n, args.seed, vocabulary=args.vocabulary)
    if "quilts" in only:
        run_quilts(args, results, n, path, meta)
    for group, modes in ONLY_GROUPS.items():
        if group != "quilts" and group in only:
            for mode in modes:
                run_job(args, results, mode, n, path, meta)
    if "floor" in only:
        run_floor(args, results, n, path, meta)
    if "naive" in only and n <= args.port_max:
        run_naive(args, results, n, path, meta)


def run_kernel(args: argparse.Namespace, results: Results) -> None:
    """--only kernel: the kernel's rates on one core, on the smallest size's corpus."""
    path, _ = make_corpus(args.work, min(args.sizes), args.seed)
    results.data["kernel"] = kernel_rates(path)
    print(json.dumps(results.data["kernel"]), flush=True)


def run_warc(args: argparse.Namespace, results: Results) -> None:
    """--only warc: the quilt job on a corpus of --warc-pages pages written as WARC."""
    path, meta = make_corpus(args.work, args.warc_pages, args.seed, fmt="warc")
    res = child("quilts", path, args.work / f"w{args.warc_pages}", args.work / f"w{args.warc_pages}.json", args)
    results.record(f"quilts warc {args.warc_pages}", "warc", meta, res)


def run_skew(args: argparse.Namespace, results: Results) -> None:
    """--only skew: the quilt job on the two skewed variants of the --skew-pages corpus."""
    base, _ = make_corpus(args.work, args.skew_pages, args.seed)
    for kind in ("boilerplate", "long"):
        path, meta = make_skewed(args.work, base, kind)
        res = child("quilts", path, args.work / f"skew-{kind}", args.work / f"skew-{kind}.json", args)
        results.record(f"skew {kind} {args.skew_pages}", f"skew-{kind}", meta, res)


def run_harness(args: argparse.Namespace) -> None:
    """No command: the --only runs (default quilts, naive, kernel, warc, skew), then
    ``<out>/quilts_scale.json``, its plot and its table."""
    args.work.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    only = set(args.only or ["quilts", "naive", "kernel", "warc", "skew"])
    results = Results(args)
    if not results.data["bytecode_cached"]:
        print("warning: pandas and PySpark have no compiled bytecode here, so every Python process compiles "
              "them again (about 1.3 s each) and small runs look slower than they are: compile the "
              "environment's site-packages once (python -m compileall -q -j 0 <site-packages>), or install "
              "with pip or with uv pip install --compile-bytecode", file=sys.stderr, flush=True)
    # the corpora of --sizes only for the runs that use them (--only incremental makes its own)
    per_size = "naive" in only or "floor" in only or any(group in only for group in ONLY_GROUPS)
    for n in sorted(args.sizes) if per_size else []:
        run_size(args, results, only, n)
    if "kernel" in only:
        run_kernel(args, results)
    if "warc" in only and args.warc_pages:
        run_warc(args, results)
    if "skew" in only and args.skew_pages:
        run_skew(args, results)
    if "incremental" in only:
        results.data["incremental"] = incremental_rows(args, results.record)
    results.data["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    results.save()
    plot(results.data, args.out / "quilts_scale.png")
    print(summary(results.data))


def main() -> None:
    """Parse the command line and run its mode: ``one``, ``plot`` or the harness."""
    args = build_parser().parse_args()
    if args.driver_memory is None:  # what a user running the console command gets
        from quiltdetect.common.config import local_spark_defaults

        args.driver_memory = local_spark_defaults()["spark.driver.memory"]
    if args.cmd == "one":
        run_one(args)
    elif args.cmd == "plot":
        plot_runs(args.results, args.png)
    else:
        run_harness(args)


if __name__ == "__main__":
    main()
