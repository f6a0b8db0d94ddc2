"""Corpus step 3: the sites, each a host on its own registered domain with shared boilerplate.

Sizes are skewed (a few big sites, many singletons), a few organisations host several
domains on one IP, and every site has sections, a footer from a glue sentence and, once its
pages exist, a nav bar linking them. That boilerplate is repeated on every page of the site,
as in a real crawl.
"""

from __future__ import annotations

import numpy as np

from .model import Page, Site
from .pool import SentencePool

__all__ = ["HOST_PREFIXES", "SECTIONS", "TLDS", "link_nav", "make_sites", "site_sizes"]

SECTIONS = [
    "Home",
    "News",
    "Archive",
    "About",
    "Contact",
    "Blog",
    "Features",
    "Opinion",
    "Reviews",
    "Guides",
    "Events",
    "Library",
    "Topics",
    "Community",
    "Resources",
    "Politics",
    "History",
    "Science",
    "Culture",
    "Travel",
    "Business",
    "Sport",
]
TLDS = [".com"] * 6 + [".org"] * 2 + [".net", ".co.uk", ".info", ".de", ".com.au", ".io"]
HOST_PREFIXES = ["www."] * 6 + ["blog.", "news.", ""] + [""] * 2


def site_sizes(n_pages: int, rng: np.random.Generator) -> list[int]:
    """Skewed site sizes (Zipf-like): a few big sites, many small ones."""
    cap = max(3, n_pages // 15)
    sizes: list[int] = []
    total = 0
    while total < n_pages:
        s = int(min(rng.zipf(1.7), cap))
        s = min(s, n_pages - total)
        sizes.append(s)
        total += s
    return sizes


def _new_domain(vocab: list[str], used: set[str], rng: np.random.Generator) -> tuple[str, str]:
    """``(label, domain)``: a prose word (60 %: plus a number) and a TLD, not yet in ``used``."""
    while True:
        word = vocab[int(rng.integers(len(vocab)))]
        tld = TLDS[int(rng.integers(len(TLDS)))]
        label = f"{word}{int(rng.integers(1, 100))}" if rng.random() < 0.6 else word
        domain = label + tld
        if domain not in used:
            used.add(domain)
            return label, domain


def _site_ip(ips: list[str], rng: np.random.Generator) -> str:
    """An earlier site's IP (6 %: one organisation, several domains) or a new public-looking one."""
    if ips and rng.random() < 0.06:
        return ips[int(rng.integers(len(ips)))]
    ip = f"{int(rng.integers(23, 223))}.{int(rng.integers(0, 256))}.{int(rng.integers(0, 256))}.{int(rng.integers(1, 255))}"
    while ip.startswith(("127.", "172.", "192.168.", "100.", "169.254.")):
        ip = f"{int(rng.integers(23, 126))}.{int(rng.integers(0, 256))}.{int(rng.integers(0, 256))}.{int(rng.integers(1, 255))}"
    return ip


def make_sites(sizes: list[int], pool: SentencePool, rng: np.random.Generator) -> list[Site]:
    """One site per entry of ``sizes``: domain, host, IP, 3-5 sections, footer and scheme.

    Pages are not assigned here; ``sizes`` only says how many sites to make.
    """
    sites: list[Site] = []
    used: set[str] = set()
    ips: list[str] = []
    vocab = [
        w.lower() for w in pool.vocab.tolist() if w.isascii() and w.isalpha() and 4 <= len(w) <= 10
    ]
    for i, _ in enumerate(sizes):
        label, domain = _new_domain(vocab, used, rng)
        prefix = HOST_PREFIXES[int(rng.integers(len(HOST_PREFIXES)))]
        host = prefix + domain
        ip = _site_ip(ips, rng)
        ips.append(ip)
        k = int(rng.integers(3, 6))
        sections = [SECTIONS[j] for j in rng.choice(len(SECTIONS), size=k, replace=False)]
        footer_sentence, _ = pool.glue()
        name = label.capitalize()
        footer = f"\u00a9 {int(rng.integers(2008, 2024))} {name}. {footer_sentence}"
        sites.append(
            Site(
                index=i,
                host=host,
                domain=domain,
                ip=ip,
                scheme="https" if rng.random() < 0.7 else "http",
                name=name,
                sections=sections,
                footer=footer,
            )
        )
    return sites


def link_nav(sites: list[Site], pages: list[Page]) -> None:
    """Fill each site's nav bar: its home page, then each further section's first page.

    It needs the page URLs, so it runs once all pages exist (before the crawl-order shuffle,
    while ``site.page_indices`` are still generation indices).
    """
    for site in sites:
        idx = site.page_indices
        nav = [(site.name, f"{site.scheme}://{site.host}/")]
        for j, sec in enumerate(site.sections[1:], start=1):
            # the site's first page in that section (page j is filed under sections[j])
            target = pages[idx[j]].url if j < len(idx) else nav[0][1]
            nav.append((sec, target))
        site.nav = nav
