"""Precision / recall of MWO >= t on the hand-labelled Webis near-duplicate pairs (label >= 1 = near-duplicate).

The texts are main content only, so each is rendered with the main-content field alone
(weight 1 per occurrence). Usage:

    PYTHONPATH=src python bench/mwo_webis_eval.py [--pairs ../shared/data/webis_ndd_pairs/pairs.jsonl.gz]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
from pathlib import Path

from quiltdetect.mwo.reference import mwo_of
from quiltdetect.mwo.rendering import render_text

PAIRS = Path("webis_ndd_pairs") / "pairs.jsonl.gz"


def default_pairs() -> str:
    """$QUILTDETECT_SHARED_DATA's pairs, else those of ../shared/data beside the checkout (as CI
    lays it out), else the relative path."""
    env = os.environ.get("QUILTDETECT_SHARED_DATA")
    here = Path(__file__).resolve().parents[1]
    for base in ([Path(env)] if env else []) + [here.parent / "shared" / "data"]:
        if (base / PAIRS).is_file():
            return str(base / PAIRS)
    return str(PAIRS)


def record(text: str, ratio: float) -> dict[str, float]:
    names, weights = render_text(text, ratio)
    return dict(zip(names, weights.tolist(), strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", default=default_pairs())
    ap.add_argument("--min-weight-ratio", type=float, default=0.0)
    ap.add_argument("-t", type=float, nargs="*", default=[0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95])
    args = ap.parse_args()
    scored = []
    with gzip.open(args.pairs, "rt", encoding="utf-8") as fh:
        for line in fh:
            p = json.loads(line)
            value = mwo_of(record(p["left_text"], args.min_weight_ratio), record(p["right_text"], args.min_weight_ratio))
            scored.append((p["corpus"], value, int(p["label"]) >= 1))
    positives = sum(1 for _, _, y in scored if y)
    print(f"{len(scored)} pairs, {positives} labelled near-duplicate (label >= 1), min_weight_ratio={args.min_weight_ratio}")
    print("| t | predicted | true pos. | precision | recall | F1 |")
    print("|---|---|---|---|---|---|")
    for t in args.t:
        pred = [(y, v >= t) for _, v, y in scored]
        tp = sum(1 for y, hit in pred if y and hit)
        n_pred = sum(1 for _, hit in pred if hit)
        precision = tp / n_pred if n_pred else float("nan")
        recall = tp / positives if positives else float("nan")
        f1 = 2 * precision * recall / (precision + recall) if n_pred and tp else 0.0
        print(f"| {t:.2f} | {n_pred} | {tp} | {precision:.3f} | {recall:.3f} | {f1:.3f} |")


if __name__ == "__main__":
    main()
