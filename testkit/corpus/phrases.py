"""A test crawl with planted slice-and-dice sites (Fetterly 2005 §1, §3.5), from real prose.

Normal sites publish original pages: consecutive sentences of one real prose document (State
of the Union and inaugural addresses, Wikipedia, news; ``prose.load_prose``), each
sentence used once, framed by the site's navigation and footer. Phrases that are popular "in
the wild" come from that chrome: shared footers ("all rights reserved"), a US-states menu on
shop sites, month lists on archive sidebars. A few pages are mirrored on other hosts (exact
copies, collapsed as near-duplicates) and one template-heavy site has long boilerplate around
short, variable content. The planted *slice-and-dice* sites build every page from 12-20
sentences drawn at random from a small pool of real sentences; an operator runs several hosts
from one pool, some on one IP (the paper's German site) and some on separate IPs (a network
of affiliated sites). ``truth`` lists the planted hosts.

    python bench/phrases_corpus.py --out crawl.jsonl --seed 1

(``bench/phrases_corpus.py`` calls ``main``.)
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .prose import ProseDoc, find_shared_data, load_prose

STATES = ("Alabama Alaska Arizona Arkansas California Colorado Connecticut Delaware Florida Georgia Hawaii Idaho "
          "Illinois Indiana Iowa Kansas Kentucky Louisiana Maine Maryland Massachusetts Michigan Minnesota "
          "Mississippi Missouri Montana Nebraska Nevada")
MONTHS = "January February March April May June July August September October November December"
SECTIONS = ("Home", "News", "Archive", "About", "Contact", "Blog", "Features", "Opinion", "Reviews", "Guides",
            "Events", "Library", "Topics", "Community", "Resources", "History", "Science", "Culture", "Travel")
WORDS = ("river", "stone", "maple", "harbor", "summit", "meadow", "cedar", "beacon", "falcon", "orchard", "prairie",
         "lantern", "willow", "granite", "canyon", "juniper", "aurora", "compass", "thistle", "ember")


@dataclass
class Page:
    """One page of the crawl: id, url, ip and visible text (one line per block)."""

    id: str
    url: str
    ip: str
    text: str


@dataclass
class Crawl:
    """The pages and the hosts of the planted slice-and-dice sites."""

    pages: list[Page] = field(default_factory=list)
    truth: dict[str, list[str]] = field(default_factory=dict)  # kind -> hosts


class _Sentences:
    """Real sentences handed out in order, each at most once."""

    def __init__(self, prose: Sequence[ProseDoc], rng: random.Random):
        self.docs = list(prose)
        rng.shuffle(self.docs)
        self.doc, self.at = 0, 0

    def run(self, n: int) -> list[str]:
        """n consecutive sentences of one document (fewer when the document ends)."""
        if self.at >= len(self.docs[self.doc].sentences):
            self.doc, self.at = self.doc + 1, 0
        if self.doc >= len(self.docs):
            raise ValueError("the prose pool is exhausted: ask for fewer pages")
        out = list(self.docs[self.doc].sentences[self.at : self.at + n])
        self.at += n
        return out

    def pool(self, n: int) -> list[str]:
        """n sentences from several documents."""
        out: list[str] = []
        while len(out) < n:
            out += self.run(min(5, n - len(out)))
        return out


def _chrome(rng: random.Random, name: str, shop: bool, archive: bool) -> tuple[str, str]:
    """(navigation line, footer line) of a site."""
    nav = " | ".join(["Home", *rng.sample(SECTIONS[1:], 5)])
    footer = f"Copyright 2024 {name}. All rights reserved. Privacy policy | Terms of use"
    if shop:
        nav += "\nShip to: " + STATES
    if archive:
        footer = "Archives: " + MONTHS + "\n" + footer
    return nav, footer


def _host(rng: random.Random, i: int) -> str:
    return f"www.{rng.choice(WORDS)}-{rng.choice(WORDS)}{i}.{rng.choice(['com', 'org', 'net'])}"


def build(prose: Sequence[ProseDoc], *, seed: int = 1, normal_sites: int = 24, normal_pages: tuple[int, int] = (10, 70),
          monster_sites: int = 3, monster_pages: tuple[int, int] = (40, 70), pool_size: int = 40,
          network_sites: int = 2, mirrors: int = 30, template_pages: int = 50) -> Crawl:
    """Build a crawl (deterministic for a seed); see the module docstring for what is planted."""
    rng = random.Random(seed)
    sentences = _Sentences(prose, rng)
    crawl = Crawl(truth={"slice_and_dice": [], "template": []})

    def page(host: str, ip: str, path: str, lines: list[str]) -> Page:
        url = f"http://{host}/{path}"
        p = Page(url, url, ip, "\n".join(lines))
        crawl.pages.append(p)
        return p

    originals: list[Page] = []
    for i in range(normal_sites):
        host, ip = _host(rng, i), f"198.51.{i // 8}.{10 + i % 8}"  # every 8 sites share a /24, not an IP
        nav, footer = _chrome(rng, host.split(".")[1].title(), shop=i % 5 == 1, archive=i % 3 == 0)
        for j in range(rng.randint(*normal_pages)):
            body = sentences.run(rng.randint(4, 14))
            originals.append(page(host, ip, f"{rng.choice(SECTIONS).lower()}/{j}.html", [nav, *body, footer]))
    for j, src in enumerate(rng.sample(originals, min(mirrors, len(originals)))):
        page(f"mirror{j % 4}.example.net", f"203.0.113.{j % 4}", f"copy/{j}.html", src.text.split("\n"))

    # a database-driven site: long boilerplate, short and variable content
    host = "www.directory-portal.com"
    crawl.truth["template"].append(host)
    boiler = " ".join(sentences.pool(6))
    for j in range(template_pages):
        page(host, "192.0.2.50", f"listing/{j}.html", [boiler, *sentences.run(rng.randint(1, 12))])

    # slice-and-dice operators: one pool each, monster_sites hosts on one IP, network_sites on their own IPs
    for op, (n_hosts, shared_ip) in enumerate(((monster_sites, True), (network_sites, False))):
        pool = sentences.pool(pool_size)
        for h in range(n_hosts):
            host = f"{rng.choice(WORDS)}-{['deals', 'info', 'guide', 'world'][h % 4]}{op}{h}.{['de', 'biz'][op]}"
            ip = f"192.0.2.{100 + op}" if shared_ip else f"192.0.2.{120 + 10 * op + h}"
            crawl.truth["slice_and_dice"].append(host)
            nav = " | ".join(rng.sample(SECTIONS, 4))
            for j in range(rng.randint(*monster_pages)):
                page(host, ip, f"p{j}.html", [nav, *rng.sample(pool, rng.randint(12, 20))])
    return crawl


def write_jsonl(crawl: Crawl, path: Path | str) -> Path:
    """Write ``id, url, text, ip`` as JSON Lines, one page a line, and the truth beside it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for p in crawl.pages:
            fh.write(json.dumps({"id": p.id, "url": p.url, "text": p.text, "ip": p.ip}, ensure_ascii=False) + "\n")
    path.with_name(path.stem + ".truth.json").write_text(json.dumps(crawl.truth, indent=2) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    """Command line: build the crawl from ../shared/data and write it as JSON Lines."""
    ap = argparse.ArgumentParser(prog="python bench/phrases_corpus.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared-data", type=Path, help="shared data dir (default: found from the working directory)")
    ap.add_argument("--out", type=Path, required=True, help="JSON Lines file to write")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--normal-sites", type=int, default=24)
    ap.add_argument("--monster-sites", type=int, default=3, help="slice-and-dice hosts on one IP")
    ap.add_argument("--network-sites", type=int, default=2, help="slice-and-dice hosts on separate IPs")
    args = ap.parse_args(argv)
    shared = args.shared_data or find_shared_data()
    if shared is None:
        ap.error("shared data not found: give --shared-data")
    crawl = build(load_prose(shared), seed=args.seed, normal_sites=args.normal_sites,
                  monster_sites=args.monster_sites, network_sites=args.network_sites)
    write_jsonl(crawl, args.out)
    print(f"{len(crawl.pages)} pages -> {args.out}; planted: {json.dumps(crawl.truth)}")
    return 0
