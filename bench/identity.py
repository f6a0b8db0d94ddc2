"""Do two versions of the code write the same outputs? Every analysis on the harness corpora.

    PYTHONPATH=src python bench/identity.py run --work /tmp/qd-work --out /tmp/id-before --sizes 10000 100000
    (check out the other version, reinstall)
    PYTHONPATH=src python bench/identity.py run --work /tmp/qd-work --out /tmp/id-after --sizes 10000 100000
    python bench/identity.py compare /tmp/id-before /tmp/id-after

``run`` generates (once, cached in ``--work``) the N-page Parquet corpora of ``bench/quilts_scale.py``
and runs, through the console command, each analysis of ``RUNS`` on each, plus two update chains:
an archive (the corpus less a tenth drawn by page id) then an update by that tenth, with the
quilt job and with neardup (lsh, and Henzinger's combined-sites with its two bucket families).
Each run's output is ``<out>/<N>/<run>``. ``compare`` holds every table of one tree against
the other's with ``bench/compare_outputs.py``: the result tables (metrics.json's ``outputs``)
byte for byte in their data pages, the run's state under ``_quiltdetect/work`` by its rows, as
are the MWO index's ``records/`` and ``postings/`` (their row order is not part of their
contract). ``duplicate_of/`` names the run each kept page was kept in by its run id, which no
two runs share: it is compared with each run id replaced by its place in the chain
(``neardup-state.json``). Exit status 1 on any difference.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # a script's sys.path starts at bench/ already; explicit for -m runs
from compare_outputs import same_table  # noqa: E402
from quilts_scale import make_corpus, split_corpus  # noqa: E402

# run name -> the console command's words (input and output are added). ``SMALL_ONLY`` runs at
# 10,000 pages alone (each costs about a quilt run; the 100,000-page corpus has the defaults).
RUNS: dict[str, list[str]] = {
    "ingest": ["ingest"],
    "quilts": ["quilts", "--top", "0"],
    "quilts-collapse": ["quilts", "--collapse-near-duplicates", "--foreign", "host", "--top", "0"],
    "neardup-lsh": ["neardup", "--top", "0"],
    "neardup-combined": ["neardup", "--preset", "henzinger-calibrated", "--top", "0"],
    "neardup-b": ["neardup", "--algorithm", "b", "--top", "0"],
    "neardup-c": ["neardup", "--algorithm", "c", "--top", "0"],
    "neardup-combined-sites": ["neardup", "--algorithm", "combined-sites", "--top", "0"],
    "phrases": ["phrases", "--top", "0"],
    "reuse-discover": ["reuse", "discover", "--top", "0"],
    "mwo-index": ["mwo", "index", "--top", "0"],
    "mwo-join": ["mwo", "join", "-t", "0.8", "--top", "0"],
    "sweep": ["sweep", "-k", "4,5", "-m", "25,50"],
}
SMALL_ONLY = {"quilts-collapse", "neardup-b", "neardup-c", "mwo-join"}
# update chains: name -> the command's words; the archive run, then --previous it with the segment
CHAINS: dict[str, list[str]] = {
    "quilts": ["quilts", "--top", "0"],
    "neardup-lsh": ["neardup", "--top", "0"],
    "neardup-combined-sites": ["neardup", "--algorithm", "combined-sites", "--top", "0"],
}


def console(words: list[str], inputs: Path, output: Path, log: Path, previous: Path | None = None) -> float:
    """One console run (``python -m quiltdetect.cli``: the code on PYTHONPATH first); its seconds."""
    cmd = [sys.executable, "-m", "quiltdetect.cli", *words, "--input", str(inputs), "--output", str(output), "--overwrite"]
    if previous is not None:
        cmd += ["--previous", str(previous)]
    t0 = time.perf_counter()
    with log.open("w") as sink:
        subprocess.run(cmd, check=True, stdout=sink, stderr=subprocess.STDOUT)
    return time.perf_counter() - t0


def run(args: argparse.Namespace) -> int:
    timings: dict[str, float] = {}
    for n in args.sizes:
        corpus, meta = make_corpus(args.work, n, seed=1)
        base = args.out / str(n)
        base.mkdir(parents=True, exist_ok=True)
        for name, words in RUNS.items():
            if (n > 10_000 and name in SMALL_ONLY) or (args.only and name not in args.only):
                continue
            timings[f"{n}/{name}"] = console(words, corpus, base / name, base / f"{name}.log")
            print(f"{n} {name}: {timings[f'{n}/{name}']:.1f} s", flush=True)
        archive, _, segment, _ = split_corpus(args.work, corpus, meta, n // 10)
        for name, words in CHAINS.items():
            if (n > 10_000 and name == "neardup-combined-sites") or (args.only and f"chain-{name}" not in args.only):
                continue
            first, second = base / f"chain-{name}-archive", base / f"chain-{name}-update"
            timings[f"{n}/chain-{name}"] = (console(words, archive, first, base / f"chain-{name}-archive.log")
                                            + console(words, segment, second, base / f"chain-{name}-update.log",
                                                      previous=first))
            print(f"{n} chain-{name}: {timings[f'{n}/chain-{name}']:.1f} s", flush=True)
    (args.out / "timings.json").write_text(json.dumps(timings, indent=1))
    return 0


def tables(output: Path) -> tuple[list[str], list[str]]:
    """(result tables, state tables) of one run's output, as paths under it."""
    metrics = json.loads((output / "metrics.json").read_text())
    results = sorted(os.path.relpath(p, output) for p in metrics.get("outputs", {}).values())
    work = output / "_quiltdetect" / "work"
    state = sorted(str(p.parent.relative_to(output)) for p in work.rglob("_SUCCESS")) if work.is_dir() else []
    return results, state


ANY_ORDER = {"records", "postings"}
RUN_COLUMN = "kept_run"


def chain_places(output: Path) -> dict[str, str]:
    """Each run id of a neardup output's chain -> ``run <i>``, its place in the chain."""
    state = output / "_quiltdetect" / "work" / "neardup-state.json"
    runs = json.loads(state.read_text())["runs"] if state.exists() else []
    return {str(run_id): f"run {i}" for i, (_, run_id) in enumerate(runs)}


def same_by_chain_place(a: Path, b: Path, table: str) -> bool:
    """Whether ``table`` of outputs ``a`` and ``b`` holds the same rows once each run id is
    replaced by its place in the run's chain."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = []
    for output in (a, b):
        places = chain_places(output)
        rows = pq.read_table(output / table)
        named = pa.array([places.get(v, v) for v in rows.column(RUN_COLUMN).to_pylist()], pa.string())
        tables.append(rows.set_column(rows.column_names.index(RUN_COLUMN), RUN_COLUMN, named))
    return tables[0].equals(tables[1])


def compare(a: Path, b: Path) -> int:
    ok = True
    for metrics in sorted(a.rglob("metrics.json")):
        out_a = metrics.parent
        out_b = b / out_a.relative_to(a)
        results, state = tables(out_a)
        if not (out_b / "metrics.json").exists():
            print(f"{out_a.relative_to(a)}: missing in {b}")
            ok = False
            continue
        other = tables(out_b)
        if (results, state) != other:
            print(f"{out_a.relative_to(a)}: other tables {results, state} / {other}")
            ok = False
        for table in results + state:
            loose = table in state or table in ANY_ORDER
            pages, rows, parts, n = same_table(out_a / table, out_b / table, any_order=loose)
            if not rows and table == "duplicate_of":
                rows = same_by_chain_place(out_a, out_b, table)
                pages = True  # the run ids differ, so the pages: compared by rows
            same = rows and (pages or loose)
            ok &= same
            print(f"{'same' if same else 'DIFFERENT'}  {out_a.relative_to(a)}/{table}: {parts} files, {n:,} rows"
                  f"{'' if pages else ' (data pages differ)'}")
    print("all identical" if ok else "DIFFERENT")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run", help="every analysis and the update chains on the harness corpora")
    r.add_argument("--work", type=Path, required=True, help="where the corpora are cached")
    r.add_argument("--out", type=Path, required=True, help="where the outputs go (<out>/<N>/<run>)")
    r.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    r.add_argument("--only", nargs="*", default=[], help="these runs alone (names of RUNS, chain-<name>)")
    c = sub.add_parser("compare", help="hold one tree of outputs against another")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args(argv)
    return run(args) if args.what == "run" else compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
