"""HTML pieces every page of the review tool shares: crawled text, URLs and highlighted runs,
always escaped (crawled pages are hostile; see server.py)."""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

from quiltdetect.review.highlight import NONE

N_COLOURS = 12
e = html.escape

# Characters that reorder or hide the text around them (bidirectional controls, zero-width
# characters): in a URL they only serve to make it read as another (a right-to-left override
# turns "evil.com/moc.knab" into what looks like "bank.com..."). Shown as their code points.
_DECEPTIVE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def shown_url(url: str) -> str:
    """A URL as text a judge can trust: escaped, every deceptive character as ``<U+202E>``."""
    return e(_DECEPTIVE.sub(lambda m: f"<U+{ord(m.group()):04X}>", url))


def link(url: str | None) -> str:
    """A crawled URL: a link when it is http(s), plain escaped text otherwise."""
    if not url:
        return ""
    if urlsplit(url).scheme.lower() in ("http", "https"):
        return (f'<a class="url" href="{e(url)}" rel="noopener noreferrer nofollow" target="_blank">'
                f"{shown_url(url)}</a>")
    return f'<span class="url">{shown_url(url)}</span>'


def render_segments(segments: list[tuple[str, int]], title: str | None = None) -> str:
    """Text runs as escaped text; a source's run inside <mark class="cN"> (its tooltip ``title``,
    by default "source N")."""
    out = []
    for piece, colour in segments:
        if colour == NONE:
            out.append(e(piece))
        else:
            tip = e(title) if title is not None else f"source {colour + 1}"
            out.append(f'<mark class="c{colour % N_COLOURS}" title="{tip}">{e(piece)}</mark>')
    return "".join(out)
