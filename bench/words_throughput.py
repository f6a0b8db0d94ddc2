"""The word kernel's speed, this version beside another, in one process on one core.

Reads the ``text`` column of a Parquet corpus (the 100,000-page harness corpus of
``bench/corpus.py``, English), cuts it into batches as the job's Arrow batches are (10,000
rows), and hashes every batch's words with ``batch_word_hashes`` of this checkout and of a
baseline ``words.py`` (another version's file), in turn, batch by batch (A B A B ...: a drift
of the machine's speed touches both), several passes. Prints pages/s and words/s of each, the
ratio of their CPU seconds (each batch's fastest of ``--passes`` runs). With
``--scripts DIR`` (tests/data/scripts) it also prints this version's pages/s and characters/s
per script (each script's paragraphs as pages, about 20,000 in one batch, fastest of the passes).

    git show af57f1e:src/quiltdetect/kernel/words.py > /tmp/words_before.py
    PYTHONPATH=src python bench/words_throughput.py /tmp/quiltdetect-bench/c100000-s1.parquet \\
        --baseline /tmp/words_before.py --scripts tests/data/scripts

A version whose kernel/unicode.py differs too (issue 74's) is compared by running the script
without ``--baseline`` once per checkout, in turn (``PYTHONPATH=<checkout>/src``).
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

current = importlib.import_module("quiltdetect.kernel.words")  # (the package exports a function of that name)

BATCH = 10_000


def load(path: Path):
    spec = importlib.util.spec_from_file_location("baseline_words", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def texts_of(corpus: Path) -> list[str | None]:
    return pq.read_table(corpus, columns=["text"]).column("text").to_pylist()


def timed(function, batch) -> tuple[float, int]:
    started = time.process_time()
    hashes, _ = function(batch)
    return time.process_time() - started, int(hashes.shape[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path, help="a Parquet corpus with a text column")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another version's kernel/words.py (one that imports this version's kernel/unicode.py); "
                             "without it, this version alone: run the script once per checkout, in turn, with "
                             "PYTHONPATH=<checkout>/src")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--scripts", type=Path, default=None, help="tests/data/scripts: pages/s per script")
    args = parser.parse_args()
    versions = [("this", current.batch_word_hashes)]
    if args.baseline:
        versions.append(("baseline", load(args.baseline).batch_word_hashes))
    texts = texts_of(args.corpus)
    batches = [texts[i:i + BATCH] for i in range(0, len(texts), BATCH)]
    warm = [*batches[0][:100], "\U0001d518 \u00e9\u0301 \u00c9 \uff21 \u00ad"]  # every table built before timing
    for name, function in versions:
        started = time.process_time()
        function(warm)
        print(f"{name:9} tables built once per process: {time.process_time() - started:.2f} CPU-seconds")
    # Each batch is hashed by both, in turn, ``passes`` times; its fastest time of each counts
    # (the machine's noise only ever adds time).
    cpu = {name: 0.0 for name, _ in versions}
    found = {name: 0 for name, _ in versions}
    per_pass = []
    for batch in batches:
        best = {name: float("inf") for name, _ in versions}
        for _ in range(args.passes):
            for name, function in versions:
                seconds, n = timed(function, batch)
                best[name] = min(best[name], seconds)
                found[name] = n if _ == 0 else found[name]
        for name in cpu:
            cpu[name] += best[name]
        per_pass.append(best["this"] / best.get("baseline", best["this"]))
        found = {name: found[name] for name in found}
    pages = len(texts)
    for name in cpu:
        print(f"{name:9} {pages / cpu[name]:10,.0f} pages per CPU-second (fastest of {args.passes} per batch)")
    if args.baseline:
        print(f"this / baseline CPU: {cpu['this'] / cpu['baseline']:.3f} (per batch: min {min(per_pass):.3f}, "
              f"median {float(np.median(per_pass)):.3f}, max {max(per_pass):.3f})")
    if args.scripts:
        for path in sorted(args.scripts.glob("*.txt")):
            paragraphs = [p for p in path.read_text(encoding="utf-8").split("\n\n") if p.strip()]
            batch = paragraphs * max(1, 20_000 // max(1, len(paragraphs)))
            seconds, n = min(timed(current.batch_word_hashes, batch) for _ in range(args.passes))
            chars = sum(map(len, batch))
            print(f"{path.stem:3} {len(batch) / seconds:10,.0f} pages per CPU-second, {chars / seconds / 1e6:5.1f} M "
                  f"characters ({chars / len(batch):.0f}-character paragraphs, {n / len(batch):.0f} words each)")


if __name__ == "__main__":
    main()
