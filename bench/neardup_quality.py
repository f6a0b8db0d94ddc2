"""Quality of the near-duplicate algorithms on the shared labelled pairs, against datasketch.

    PYTHONPATH=src python bench/neardup_quality.py [--pairs ../shared/data/webis_ndd_pairs/pairs.jsonl.gz]

For each k: thresholds chosen on one corpus and scored on the other (both directions), and on
all pairs; then fixed settings (the shipped defaults, the henzinger2006 preset) on each corpus;
then the baseline: datasketch MinHashLSH at its defaults (threshold 0.5, 128 permutations) over
each page's set of terms, a pair predicted near-duplicate when one page's query finds the other.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import numpy as np

from quiltdetect.neardup import calibrate as cal
from quiltdetect.neardup.config import PRESETS, NearDupConfig
from quiltdetect.neardup.tokens import page_terms

DEFAULT_PAIRS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "webis_ndd_pairs" / "pairs.jsonl.gz"


def datasketch_baseline(pairs: list[cal.LabelledPair]) -> cal.Score:
    from datasketch import MinHash, MinHashLSH

    predicted = []
    for p in pairs:
        lsh = MinHashLSH()  # defaults: threshold=0.5, num_perm=128
        sketches = []
        for name, text in (("left", p.left_text), ("right", p.right_text)):
            m = MinHash()
            for term in set(page_terms(text)):
                m.update(term.encode("utf-8"))
            sketches.append(m)
            lsh.insert(name, m)
        predicted.append("right" in lsh.query(sketches[0]))
    truth = np.array([p.label >= 1 for p in pairs])
    return cal.score("datasketch", {"threshold": 50, "num_perm": 128}, np.array(predicted), truth)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", default=str(DEFAULT_PAIRS))
    parser.add_argument("--k", type=int, nargs="+", default=[5, 8])
    args = parser.parse_args()
    pairs = cal.read_pairs(args.pairs)
    corpora = sorted({p.corpus for p in pairs})
    by = {c: [p for p in pairs if p.corpus == c] for c in corpora}
    print(f"{len(pairs)} labelled pairs: " + ", ".join(f"{c} {len(v)} ({sum(p.label >= 1 for p in v)} near-dup)"
                                                    for c, v in by.items()))
    for k in args.k:
        for train, test in ((a, b) for a in corpora for b in corpora if a != b):
            result = cal.calibrate(by[train], by[test], k)
            print(f"\nk={k}: thresholds chosen on {train}, tested on {test}")
            for alg in result.chosen:
                print(f"  train {result.chosen[alg].row()}")
                print(f"  test  {result.test[alg].row()}")
        result = cal.calibrate(pairs, [], k)
        print(f"\nk={k}: thresholds chosen on all pairs")
        for score in result.chosen.values():
            print("        " + score.row())
        print(f"  config: {result.config()}")
    shipped = {f.name: getattr(NearDupConfig(), f.name) for f in dataclasses.fields(NearDupConfig)}
    for name, settings in (("shipped defaults", shipped), ("henzinger2006", {**shipped, **PRESETS["henzinger2006"]})):
        for corpus in [*corpora, "all"]:
            subset = pairs if corpus == "all" else by[corpus]
            print(f"\n{name} on {corpus}:")
            for score in cal.fixed_scores(subset, settings).values():
                print("        " + score.row())
    for corpus in [*corpora, "all"]:
        subset = pairs if corpus == "all" else by[corpus]
        print(f"\nbaseline on {corpus}:\n        " + datasketch_baseline(subset).row())


if __name__ == "__main__":
    main()
