"""Corpus rendering: a page's visible text and its HTML.

The two are built from the same pieces (site nav, heading, paragraphs, attribution, footer)
so that the HTML's visible words are exactly the page's ``text``: script, style and meta
tags carry no visible words.
"""

from __future__ import annotations

import html as htmlmod

from .model import Page, Site
from .prose import WORD_RE

__all__ = ["render_html", "visible_text"]

_STYLE = (
    "body{font-family:Georgia,'Times New Roman',serif;margin:0 auto;max-width:46em;color:#222}"
    "nav ul{list-style:none;display:flex;gap:1em}header,footer{padding:.5em 0}"
    "footer{font-size:small;color:#666;border-top:1px solid #ccc}a{color:#0645ad}"
)


def visible_text(page: Page, site: Site) -> str:
    """What a reader sees of ``page``: nav anchors, heading, paragraphs, sources, footer (one a line)."""
    parts = [" ".join(a for a, _ in site.nav), page.heading, *page.paragraphs]
    if page.attribution:
        parts.append("Sources: " + ", ".join(a for a, _ in page.attribution))
    parts.append(site.footer)
    return "\n".join(parts)


def render_html(page: Page, site: Site) -> str:
    """A real-looking HTML page for ``page`` on ``site``: its visible text equals ``page.text``
    (script/style carry no visible words)."""
    e = htmlmod.escape
    desc = e(page.paragraphs[0][:150]) if page.paragraphs else ""
    kw = ", ".join(dict.fromkeys(w.lower() for w in WORD_RE.findall(page.heading) if len(w) > 3))
    nav = "".join(f'<li><a href="{e(u)}">{e(a)}</a></li>' for a, u in site.nav)
    body = "\n".join(f"<p>{e(p)}</p>" for p in page.paragraphs)
    attr = ""
    if page.attribution:
        links = ", ".join(f'<a href="{e(u)}">{e(a)}</a>' for a, u in page.attribution)
        attr = f'\n<p class="sources">Sources: {links}</p>'
    script = (
        "var _q=window._q||[];_q.push(['pageview','" + page.id[10:-1] + "']);"
        "document.addEventListener('DOMContentLoaded',function(){var n=document.querySelectorAll('nav a');"
        "for(var i=0;i<n.length;i++){if(n[i].href===location.href){n[i].className='active';}}});"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{e(page.title)}</title>\n"
        f'<meta name="description" content="{desc}">\n'
        f'<meta name="keywords" content="{e(kw)}">\n'
        f"<style>{_STYLE}</style>\n<script>{script}</script>\n</head>\n<body>\n"
        f"<header><nav><ul>{nav}</ul></nav></header>\n<!-- main content -->\n"
        f"<main><article>\n<h1>{e(page.heading)}</h1>\n{body}{attr}\n</article></main>\n"
        f"<footer><p>{e(site.footer)}</p></footer>\n</body>\n</html>\n"
    )
