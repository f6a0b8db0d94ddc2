"""Quality of the near-duplicate algorithms on the shared labelled pairs, against datasketch.

    PYTHONPATH=src python bench/neardup_quality.py [--pairs ../shared/data/webis_ndd_pairs/pairs.jsonl.gz]

Prints one table (precision, recall, F1 and the confusion counts):

- fixed settings on each corpus and on all pairs: the shipped default (lsh), the
  ``henzinger-calibrated`` preset (the default before lsh) and ``henzinger2006``;
- cross-collection: thresholds chosen by ``neardup calibrate`` on one corpus, scored on the
  other (both directions), for lsh and for Henzinger's combined algorithm at the same k;
- the baseline, datasketch MinHashLSH over each page's set of terms (as its documentation
  shows), a pair predicted near-duplicate when one page's query finds the other: at its defaults
  (``MinHashLSH()``: threshold 0.9, 128 permutations), at the threshold best on all pairs, and cross-collection
  (threshold chosen on one corpus, scored on the other).

A further check on data no setting was chosen on (``--clough``, default on when the folder is
there): the Clough & Stevenson short answers, each answer paired with the Wikipedia text it was
written from; ``cut`` (copy-paste) and ``light`` revision count as near-duplicates, ``heavy``
revision and ``non`` (written independently) do not.

Everything runs the kernel in one process (no Spark); the lsh figures include the pairs that
its banding does not make candidates.
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
DEFAULT_CLOUGH = DEFAULT_PAIRS.parents[1] / "clough_stevenson_short_answers"
DATASKETCH_THRESHOLDS = [round(0.05 * i, 2) for i in range(2, 20)]
DATASKETCH_DEFAULT = 0.9  # MinHashLSH()'s threshold


def datasketch_scores(pairs: list[cal.LabelledPair]) -> dict[float, cal.Score]:
    """datasketch MinHashLSH (128 permutations, each page's set of terms) at each threshold: a
    pair is predicted near-duplicate when the left page's query returns the right page. One
    index per threshold holds every page (a query can only return pages, so pairs do not mix)."""
    from datasketch import MinHash, MinHashLSH

    sketches = []
    for p in pairs:
        pair = []
        for text in (p.left_text, p.right_text):
            m = MinHash()
            m.update_batch([t.encode("utf-8") for t in set(page_terms(text))])
            pair.append(m)
        sketches.append(pair)
    truth = np.array([p.label >= 1 for p in pairs])
    out = {}
    for t in DATASKETCH_THRESHOLDS:
        index = MinHashLSH(threshold=t)
        for i, (_, right) in enumerate(sketches):
            index.insert(f"{i}-right", right)
        predicted = np.array([f"{i}-right" in index.query(left) for i, (left, _) in enumerate(sketches)])
        out[t] = cal.score("datasketch", {"threshold": t}, predicted, truth)
    return out


def clough_pairs(folder: Path) -> list[cal.LabelledPair]:
    """(answer, its source) pairs; label 1 for cut and light revision, 0 for heavy and non."""
    import csv

    def read(name: str) -> str:
        return (folder / name).read_bytes().decode("utf-8", errors="replace")

    out = []
    with open(folder / "file_information.csv", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if r["Category"] != "orig":
                out.append(cal.LabelledPair("clough", int(r["Category"] in ("cut", "light")), read(r["File"]),
                                            read(f"orig_task{r['Task']}.txt")))
    return out


def row(setting: str, corpus: str, s: cal.Score) -> str:
    th = ", ".join(f"{k.replace('_threshold', '')}={v}" for k, v in s.thresholds.items())
    return (f"| {setting} | {corpus} | {th} | {s.precision:.3f} | {s.recall:.3f} | {s.f1:.3f} "
            f"| {s.tp}/{s.fp}/{s.fn} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", default=str(DEFAULT_PAIRS))
    parser.add_argument("--clough", default=str(DEFAULT_CLOUGH), help="the short-answer folder ('' to skip)")
    args = parser.parse_args()
    pairs = cal.read_pairs(args.pairs)
    corpora = sorted({p.corpus for p in pairs})
    by = {c: [p for p in pairs if p.corpus == c] for c in corpora}
    by["all"] = pairs
    print(f"{len(pairs)} labelled pairs: " + ", ".join(f"{c} {len(by[c])} ({sum(p.label >= 1 for p in by[c])} "
                                                    "near-dup)" for c in corpora))
    print("\n| setting | scored on | thresholds | P | R | F1 | tp/fp/fn |\n|---|---|---|---|---|---|---|")
    shipped = {f.name: getattr(NearDupConfig(), f.name) for f in dataclasses.fields(NearDupConfig)}
    settings = {"default (lsh)": (shipped, "lsh"),
                **{name: ({**shipped, **PRESETS[name]}, "combined") for name in ("henzinger-calibrated", "henzinger2006")}}
    for name, (values, alg) in settings.items():
        for corpus in [*corpora, "all"]:
            print(row(name, corpus, cal.fixed_scores(by[corpus], values)[alg]))
    cfg = NearDupConfig()
    for train, test in ((a, b) for a in corpora for b in corpora if a != b):
        result = cal.calibrate(by[train], by[test], cfg.k, cfg.wrap, cfg.lsh_bands, cfg.lsh_rows)
        for alg in ("lsh", "combined"):
            print(row(f"{alg}, k={cfg.k}, calibrated on {train}", test, result.test[alg]))
    ds = {c: datasketch_scores(by[c]) for c in [*corpora, "all"]}
    for corpus in [*corpora, "all"]:
        print(row("datasketch MinHashLSH, defaults", corpus, ds[corpus][DATASKETCH_DEFAULT]))
    top = cal.best(list(ds["all"].values()))
    print(row("datasketch MinHashLSH, best threshold on all", "all", top))
    for train, test in ((a, b) for a in corpora for b in corpora if a != b):
        chosen = cal.best(list(ds[train].values())).thresholds["threshold"]
        print(row(f"datasketch MinHashLSH, threshold chosen on {train}", test, ds[test][chosen]))
    if args.clough and Path(args.clough).is_dir():
        answers = clough_pairs(Path(args.clough))
        for name, (values, alg) in settings.items():
            print(row(name, "clough", cal.fixed_scores(answers, values)[alg]))
        ds_clough = datasketch_scores(answers)
        print(row("datasketch MinHashLSH, defaults", "clough", ds_clough[DATASKETCH_DEFAULT]))
        print(row("datasketch MinHashLSH, best threshold on all Webis", "clough",
                  ds_clough[top.thresholds["threshold"]]))


if __name__ == "__main__":
    main()
