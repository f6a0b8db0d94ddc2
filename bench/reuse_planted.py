"""Build the planted-copy benchmark of the content-reuse job (definitions §4) from ../shared/data.

Writes under --out (nothing here is committed):

* ``background/``  synthetic crawl of --pages pages (bench/corpus.py, Parquet):
  sites independent of the labeled source (their prose is re-cut into other paragraphs);
* ``labeled/wiki.jsonl``  the labeled corpus: --articles Wikipedia articles from
  text_corpora/gensim_test_data/enwiki_sample_plaintext.jsonl.gz, one line per paragraph;
* ``planted/planted.jsonl``  the planted copies: ``www.wiki-mirror-ads.net/wiki/`` copies
  60-100 % of each article's paragraphs (a few lightly edited) between its own navigation and
  a unique advertisement per page; --mirrors more hosts ``mirrorNN.wikiclone-farm.com/`` do
  the same (so blind discovery sees the copied chunks more than 10 times, as the paper's
  duplicated blog.archive.org); ``quotes.example-blog.org/posts/`` pages quote one paragraph
  each inside their own text (fair use that should not be flagged).

Then run (see docs/reuse.md):

    python bench/reuse_planted.py --out /tmp/reuse_bench
    quiltdetect reuse detect --input /tmp/reuse_bench/background --input /tmp/reuse_bench/planted \\
        --labeled /tmp/reuse_bench/labeled/wiki.jsonl --output /tmp/reuse_bench/informed
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: testkit/
from testkit.corpus import find_shared_data  # noqa: E402
from testkit.corpus import main as generate_main  # noqa: E402

HEADING = re.compile(r"^=+\s*(.*?)\s*=+$")
ADS = ["Casino bonus {n}% today only", "Cheap flights from ${n}", "Click here to win {n} free spins",
       "Best loan rates: {n} offers", "Buy followers, {n} for $1"]


def article_paragraphs(text: str) -> list[str]:
    """An article's paragraphs and headings, one per line (block elements of the page)."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        block = " ".join(block.split())
        if not block:
            continue
        m = HEADING.match(block)
        out.append(m.group(1) if m else block)
    return out


def load_articles(shared: Path, n: int, seed: int) -> list[dict]:
    path = shared / "text_corpora" / "gensim_test_data" / "enwiki_sample_plaintext.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    rows = [r for r in rows if len(article_paragraphs(r["text"])) >= 8]
    random.Random(seed).shuffle(rows)
    return sorted(rows[:n], key=lambda r: int(r["id"]))


def copy_page(article: dict, host: str, rng: random.Random, n: int) -> dict:
    paras = article_paragraphs(article["text"])
    keep = max(3, round(len(paras) * rng.uniform(0.6, 1.0)))
    start = rng.randint(0, len(paras) - keep)
    body = paras[start : start + keep]
    body = [p + " (edited)" if rng.random() < 0.1 else p for p in body]  # light edits break a chunk
    slug = article["title"].replace(" ", "_")
    nav = ["Wiki Mirror", "Home", "Random article", "Donate to keep this mirror online"]
    ad = ADS[n % len(ADS)].format(n=n)
    return {"id": f"{host}/{slug}", "url": f"http://{host}/wiki/{slug}.html",
            "text": "\n".join(nav + [article["title"], ad] + body + [f"{ad} - page {n}", "Mirror of Wikipedia content"])}


def check(out: Path, detected: Path, min_chars: int = 100) -> int:
    """Compare a detect output on this benchmark with what was planted; 0 when it holds.

    Planted copying hosts must be bad neighborhoods (host/ and host/wiki/). A background site
    is *source-independent* when none of its pages holds a paragraph (>= min_chars) of the
    labeled articles, by plain text comparison; none of those may be flagged. Background sites
    that do hold such paragraphs (the generator draws its prose from the same articles) and the
    quoting blog are listed with their badness, not judged.
    """
    import pandas as pd

    from quiltdetect.documents.urls import host_of
    from quiltdetect.reuse.chunks import chunk_texts

    wiki = [json.loads(line) for line in open(out / "labeled" / "wiki.jsonl", encoding="utf-8")]
    labeled = {c for a in wiki for c in chunk_texts(a["text"]) if len(c) >= min_chars}
    background = pd.read_parquet(out / "background", columns=["url", "text"])
    background["host"] = background["url"].map(host_of)
    background["shares"] = background["text"].map(lambda t: any(c in labeled for c in chunk_texts(t)))
    sharing = set(background.loc[background["shares"], "host"])
    independent = set(background["host"]) - sharing
    hoods = pd.read_parquet(detected / "neighborhoods")
    bad = hoods[hoods["bad"]]
    planted = {r["url"].split("/")[2] for r in map(json.loads, open(out / "planted" / "planted.jsonl", encoding="utf-8"))
               if "wiki" in r["url"].split("/")[2]}
    planted_bad = {h for h in planted if {f"{h}/", f"{h}/wiki/"} <= set(bad["neighborhood"])}
    wrongly = sorted(set(bad["host"]) & independent)
    print(f"planted copying hosts flagged bad (host/ and host/wiki/): {len(planted_bad)} of {len(planted)}")
    print(f"source-independent background sites: {len(independent)}, flagged bad: {len(wrongly)} {wrongly[:10]}")
    lo = hoods[hoods["host"].isin(planted) & hoods["bad"]]["badness"].min()
    others = hoods[~hoods["host"].isin(planted)]
    print(f"lowest badness of a planted bad neighborhood: {lo:.3f}; highest elsewhere: {others['badness'].max():.3f}")
    shown = others[others["bad"]].sort_values(["bad_chunks", "badness"], ascending=False)
    print(f"other bad neighborhoods ({len(shown)}; background sites sharing Wikipedia paragraphs: {len(sharing)}):")
    for r in shown.head(15).itertuples():
        print(f"  {r.badness:.3f}  {r.bad_chunks:>4} bad chunks  {r.n_pages:>3} pages  {r.neighborhood}")
    return 0 if len(planted_bad) == len(planted) and not wrongly else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", type=Path, metavar="DETECT_OUTPUT",
                    help="instead of building: compare a detect output on --out with what was planted")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--pages", type=int, default=5000, help="background pages (default 5000)")
    ap.add_argument("--articles", type=int, default=20, help="Wikipedia articles in the labeled corpus")
    ap.add_argument("--mirrors", type=int, default=12, help="extra hosts that copy the same articles")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip-background", action="store_true", help="keep an existing background/")
    args = ap.parse_args(argv)
    if args.check:
        return check(args.out, args.check)
    shared = find_shared_data()
    if shared is None:
        print("error: ../shared/data not found", file=sys.stderr)
        return 2
    out: Path = args.out
    if not (args.skip_background and (out / "background").is_dir()):
        generate_main(["--pages", str(args.pages), "--seed", str(args.seed), "--format", "parquet",
                       "--out", str(out / "background"), "--truth", str(out / "background.truth.jsonl")])
    articles = load_articles(shared, args.articles, args.seed)
    (out / "labeled").mkdir(parents=True, exist_ok=True)
    with open(out / "labeled" / "wiki.jsonl", "w", encoding="utf-8") as fh:
        for a in articles:
            fh.write(json.dumps({"id": f"enwiki/{a['id']}", "url": a["url"],
                                 "text": "\n".join([a["title"], *article_paragraphs(a["text"])])}) + "\n")
    rng = random.Random(args.seed)
    rows = []
    hosts = ["www.wiki-mirror-ads.net"] + [f"mirror{i:02d}.wikiclone-farm.com" for i in range(args.mirrors)]
    n = 0
    for host in hosts:
        for a in articles:
            rows.append(copy_page(a, host, rng, n))
            n += 1
        rows.append({"id": f"{host}/about", "url": f"http://{host}/about/index.html",
                     "text": "About this mirror\nWe mirror knowledge for everyone.\nContact: admin@" + host})
    lee = (shared / "text_corpora" / "gensim_test_data" / "lee_background.cor").read_text("utf-8", "replace").splitlines()
    for i, a in enumerate(articles):
        para = rng.choice([p for p in article_paragraphs(a["text"]) if len(p) > 200])
        own = [s for s in lee[i * 3 : i * 3 + 3] if s.strip()]
        rows.append({"id": f"quotes/{i}", "url": f"http://quotes.example-blog.org/posts/{i}.html",
                     "text": "\n".join([f"My notes on {a['title']}", *own, "As Wikipedia puts it:", para, *own[:1]])})
    (out / "planted").mkdir(parents=True, exist_ok=True)
    with open(out / "planted" / "planted.jsonl", "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"labeled corpus: {len(articles)} articles -> {out / 'labeled' / 'wiki.jsonl'}")
    print(f"planted: {len(rows)} pages on {len(hosts)} copying hosts + quotes.example-blog.org -> {out / 'planted'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
