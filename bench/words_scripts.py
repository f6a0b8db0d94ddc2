"""What a k-gram spans in each script, and how often unrelated text shares one by accident.

XQuAD (google-deepmind/xquad, CC BY-SA 4.0) holds the same 240 Wikipedia paragraphs of 48 articles
in English and, translated by professionals, in 11 other languages (Chinese, Thai, Hindi, Arabic,
Vietnamese, Russian, Greek, Turkish, Romanian, German, Spanish). For each language and k this
prints, with definitions §0's words:

  units/en-word  words of the language per English word of the same paragraphs: how much text
                 one word of that script holds (a k-gram spans k / this English words)
  accidental     the mean, over paragraphs, of the fraction of a paragraph's k-grams that occur in
                 a paragraph of ANOTHER article: grams shared by text that was not copied, which
                 raise every page's patch fraction (definitions §1) as copying would
  >=0.05         the share of paragraphs whose accidental fraction is at least 0.05

    git clone --depth 1 https://github.com/google-deepmind/xquad /tmp/xquad
    PYTHONPATH=src python bench/words_scripts.py /tmp/xquad --k 5 8 10 15
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from quiltdetect.kernel.grams import gram_fingerprints
from quiltdetect.kernel.words import term_hashes, words

LANGUAGES = ("en", "zh", "th", "hi", "ar", "vi", "ru", "el", "tr", "ro", "de", "es")


def paragraphs(folder: Path, language: str) -> list[tuple[str, str]]:
    """(article title, paragraph) of XQuAD in one language, in file order."""
    data = json.loads((folder / f"xquad.{language}.json").read_text(encoding="utf-8"))["data"]
    return [(article["title"], p["context"]) for article in data for p in article["paragraphs"]]


def accidental(texts: list[tuple[str, str]], k: int) -> tuple[float, float]:
    """(mean accidental fraction, share of paragraphs at >= 0.05) at k."""
    grams = [np.unique(gram_fingerprints(term_hashes(words(text)), k)) for _, text in texts]
    articles = [title for title, _ in texts]
    by_article: dict[str, list[int]] = {}
    for i, title in enumerate(articles):
        by_article.setdefault(title, []).append(i)
    fractions = []
    for i, own in enumerate(grams):
        if not own.size:
            continue
        others = np.concatenate([grams[j] for j in range(len(grams)) if articles[j] != articles[i]])
        fractions.append(float(np.isin(own, others).mean()))
    values = np.array(fractions)
    return float(values.mean()), float((values >= 0.05).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="a checkout of google-deepmind/xquad")
    parser.add_argument("--k", type=int, nargs="+", default=[5, 8, 10, 15])
    parser.add_argument("--languages", nargs="+", default=list(LANGUAGES))
    args = parser.parse_args()
    english = paragraphs(args.folder, "en")
    en_words = sum(len(words(t)) for _, t in english)
    print(f"{'lang':5} {'units/en-word':>13} " + " ".join(f"{'k=' + str(k):>16}" for k in args.k))
    for language in args.languages:
        texts = paragraphs(args.folder, language)
        ratio = sum(len(words(t)) for _, t in texts) / en_words
        cells = []
        for k in args.k:
            mean, share = accidental(texts, k)
            cells.append(f"{mean:7.4f} / {share:6.3f}")
        print(f"{language:5} {ratio:13.2f} " + " ".join(f"{c:>16}" for c in cells))
    print("cells: mean accidental fraction / share of paragraphs with accidental fraction >= 0.05")


if __name__ == "__main__":
    main()
