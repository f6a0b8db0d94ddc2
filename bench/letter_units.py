"""Quilts stitched from passages copied out of the middle of phrases, in the scripts written
without spaces between words whose letters definitions §0 cuts into units (Thai, Myanmar).

For each script and passage length, ``--seeds`` corpora are built from the real prose of
tests/data/scripts (Thai: th.txt and th-xquad.txt; Myanmar: my.txt): 6 quilts, each the
passages of ``length`` characters cut at random places inside phrases (never at a space, at
either end) of 6 pages, every page a source of one quilt at most. The quilts are judged by the definition itself
(``quilts.reference``, no Spark) with the shipped defaults k 5, m 50, c 4, θ 0.5, and a quilt
counts as found when its sources are exactly the 6 pages; "other" counts pages reported that
were not planted.

    PYTHONPATH=src python bench/letter_units.py                 # this checkout's words
    PYTHONPATH=/other/checkout/src python bench/letter_units.py # another version's, to compare
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from quiltdetect.kernel.words import WORDS_DEFINITION, words
from quiltdetect.quilts.reference import RefDoc, reference_quilts

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "scripts"
SCRIPTS = {"th": ("th.txt", "th-xquad.txt"), "my": ("my.txt",)}
QUILTS, SOURCES = 6, 6


def pages(script: str) -> list[str]:
    """The script's paragraphs, in file order."""
    return [p.strip() for name in SCRIPTS[script] for p in (DATA / name).read_text(encoding="utf-8").split("\n\n")
            if p.strip()]


def planted(texts: list[str], length: int, seed: int) -> tuple[list[RefDoc], dict[str, list[str]]]:
    """The pages and QUILTS quilts of SOURCES passages of ``length`` characters cut inside
    phrases, each page a source once; and each quilt's sources."""
    rng = random.Random(seed)
    docs = [RefDoc(f"p{i:03d}", t, f"http://s{i}.example/", ()) for i, t in enumerate(texts)]
    order = list(range(len(texts)))
    rng.shuffle(order)
    truth = {}
    for q in range(QUILTS):
        sources = order[q * SOURCES:(q + 1) * SOURCES]
        parts = []
        for s in sources:
            parts.append(mid_phrase(texts[s], length, rng))
        docs.append(RefDoc(f"quilt{q}", "\n".join(parts), f"http://quilt{q}.example/", ()))
        truth[f"quilt{q}"] = sorted(f"p{s:03d}" for s in sources)
    return docs, truth


def mid_phrase(text: str, length: int, rng: random.Random) -> str:
    """``length`` characters of ``text`` at a random place, starting and ending inside a phrase."""
    while True:
        start = rng.randrange(1, len(text) - length - 1)
        end = start + length
        if not any(c.isspace() for c in text[start - 1:start + 1] + text[end - 1:end + 1]):
            return text[start:end]


def found(docs: list[RefDoc], truth: dict[str, list[str]]) -> tuple[int, int]:
    """(quilts found with exactly their sources, other pages reported) under the defaults."""
    result = reference_quilts(docs, 5, 50, 0.5)
    quilts = {d: sorted(s for s, _, _ in r.sources) for d, r in result.items()
              if r.patchfrac >= 0.5 and len(r.sources) >= 4}
    return sum(1 for q, s in truth.items() if quilts.get(q) == s), len(set(quilts) - set(truth))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", type=int, nargs="+", default=[40, 60, 80, 150])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    print(f"words: {WORDS_DEFINITION}")
    print("| script | characters per word | " + " | ".join(f"{n} characters" for n in args.lengths) + " |")
    print("|---|---|" + "---|" * len(args.lengths))
    for script in SCRIPTS:
        texts = pages(script)
        per_word = sum(len(t) for t in texts) / sum(len(words(t)) for t in texts)
        cells = []
        for length in args.lengths:
            hits = others = 0
            for seed in range(args.seeds):
                hit, other = found(*planted(texts, length, seed))
                hits, others = hits + hit, others + other
            cells.append(f"{hits} of {QUILTS * args.seeds}" + (f" (+{others} other)" if others else ""))
        print(f"| {script} | {per_word:.1f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
