"""Neighborhoods (URL-path prefixes) and recursion-error URLs (§3.3, §3.4.1, appendix A); Spark-free.

A page ``http://host/a/b/page.html`` lies in the neighborhoods ``host/a/b/``, ``host/a/`` and
``host/``: every prefix of its *directory* path (the last path component is the file, so
``http://host/a/b/`` lies in ``host/a/b/`` too). Query and fragment are not part of the path;
empty components (``//``) are skipped. A neighborhood's depth counts the host as 1, so
``host/`` has depth 1 (the paper's "path length 1", one neighborhood per site).
"""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlsplit

__all__ = [
    "RECURSION_REPEATED_COMPONENT",
    "RECURSION_TOO_DEEP",
    "neighborhood_prefixes",
    "path_components",
    "recursion_error",
]

RECURSION_REPEATED_COMPONENT = "repeated_component"
RECURSION_TOO_DEEP = "too_deep"


def path_components(url: str | None) -> tuple[list[str], str]:
    """(directory components, file name) of the URL's path; ([], "") when it has none."""
    if not url:
        return [], ""
    try:
        path = urlsplit(url.strip()).path
    except ValueError:
        return [], ""
    parts = path.split("/")
    directories = [p for p in parts[:-1] if p]
    return directories, parts[-1]


def neighborhood_prefixes(host: str | None, url: str | None) -> list[str]:
    """Every neighborhood of a page, deepest first: ``host/a/b/``, ``host/a/``, ``host/``.

    A page without a host lies in no neighborhood.
    """
    if not host:
        return []
    directories, _ = path_components(url)
    prefixes = []
    for depth in range(len(directories), -1, -1):
        prefixes.append(host + "/" + "".join(d + "/" for d in directories[:depth]))
    return prefixes


def recursion_error(url: str | None, max_component_repeats: int, max_prefix_depth: int) -> str | None:
    """Why a URL looks like a crawler recursion error, or None.

    ``too_deep``: its deepest neighborhood is deeper than ``max_prefix_depth`` (host = 1; the
    paper's appendix cuts at 96 after a gap in the Common Crawl distribution);
    ``repeated_component``: one path component (directories and file name) occurs more than
    ``max_component_repeats`` times, as in ``/a/b/a/b/a/b/a/b/``.
    """
    directories, name = path_components(url)
    if 1 + len(directories) > max_prefix_depth:
        return RECURSION_TOO_DEEP
    components = directories + ([name] if name else [])
    if components and max(Counter(components).values()) > max_component_repeats:
        return RECURSION_REPEATED_COMPONENT
    return None
