"""Table 1's θ and c lines from a sweep's per-document outcomes, without Spark.

    python bench/sweep_from_outcomes.py SWEEP_DIR [--c 2:10] [--theta 0.4:1:0.1]

Reads every finished ``outcomes/k=K/m=M/`` (also of a sweep still running or stopped) and
prints, per (k, m), the quilted pages and average sources for each c at the pivot θ and for
each θ at the pivot c (φ = the sweep's first φ), with the same bucket arithmetic as the job.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from quiltdetect.sweep.config import parse_values
from quiltdetect.sweep.grid import grid_counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sweep")
    parser.add_argument("--c", default="2:10")
    parser.add_argument("--theta", default="0.4:1:0.1")
    parser.add_argument("--pivot-c", type=int, default=4)
    parser.add_argument("--pivot-theta", type=float, default=0.5)
    args = parser.parse_args()
    cs = sorted(parse_values("--c", args.c, int))
    thetas = sorted(parse_values("--theta", args.theta, float))
    print(f"{'k':>3}{'m':>5}{'c':>4}{'theta':>7}{'quilted':>9}{'avg src':>9}")
    for path in sorted(Path(args.sweep, "outcomes").glob("k=*/m=*"), key=lambda p: (int(p.parent.name[2:]), int(p.name[2:]))):
        if not (path / "_SUCCESS").exists():
            continue
        k, m = int(path.parent.name[2:]), int(path.name[2:])
        table = pq.read_table(path, columns=["patchfrac", "n_sources"]).to_pydict()
        pf = np.asarray(table["patchfrac"])
        ns = np.asarray([s[0] for s in table["n_sources"]])
        ti = np.searchsorted(thetas, pf, side="right") - 1
        ci = np.searchsorted(cs, ns, side="right") - 1
        keep = (ti >= 0) & (ci >= 0)
        cells = [(int(t), int(c), 1, int(n)) for t, c, n in zip(ti[keep], ci[keep], ns[keep], strict=True)]
        count, sources = grid_counts(cells, len(thetas), len(cs))
        for ii, t in enumerate(thetas):
            for jj, c in enumerate(cs):
                if c == args.pivot_c or t == args.pivot_theta:
                    n = int(count[ii, jj])
                    avg = f"{sources[ii, jj] / n:.2f}" if n else ""
                    print(f"{k:>3}{m:>5}{c:>4}{t:>7.2f}{n:>9}{avg:>9}")


if __name__ == "__main__":
    main()
