"""URL helpers: host, registered domain and Henzinger site of a page (definitions §0, §2).

Pure Python, offline: the registered domain comes from the Public Suffix List
copy bundled with ``publicsuffixlist`` (never fetched over the network), so the
same URL maps to the same domain on every executor and every run.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import threading
from urllib.parse import urlsplit

from publicsuffixlist import PublicSuffixList

__all__ = ["host_of", "domain_of", "site_of"]

# "www.example.com/path" (no scheme, no "//"): treated as host + path.
_BARE_HOST_RE = re.compile(r"^[^:/?#\s]+\.[^:/?#\s]+(?::\d*)?(?:[/?#]|$)")
# A host may not contain these; urlsplit is lenient, so we check after it.
_BAD_HOST_CHARS = re.compile(r"[\s/\\?#@<>\"'`{}|^%]")

_PSL: PublicSuffixList | None = None
_PSL_LOCK = threading.Lock()


def _psl() -> PublicSuffixList:
    """The Public Suffix List, parsed once per process from the bundled copy."""
    global _PSL
    if _PSL is None:
        with _PSL_LOCK:
            if _PSL is None:
                _PSL = PublicSuffixList()  # bundled list: no network access
    return _PSL


def host_of(url: str | None) -> str:
    """Lower-cased host of ``url`` without userinfo, port or trailing dot; "" if none.

    Used as the finest "server" granularity (foreign-sourced quilts, site rule).
    Never raises: unparsable input gives "".
    """
    if not url or not isinstance(url, str):
        return ""
    try:
        url = url.strip().strip("<>").strip()
        if "//" not in url and _BARE_HOST_RE.match(url):
            url = "//" + url
        host = urlsplit(url).hostname  # lower-cased, no userinfo/port/brackets
    except (ValueError, TypeError):
        return ""
    if not host:
        return ""
    host = host.rstrip(".")
    if not host or _BAD_HOST_CHARS.search(host):
        return ""
    return canonical_host(host)


@functools.lru_cache(maxsize=1 << 16)  # a crawl has far fewer hosts than pages
def canonical_host(host: str) -> str:
    """One spelling per server: an IP address in its compressed form (``2001:DB8:0:0:0:0:0:1``
    and ``2001:db8::1`` are one address), an internationalised name in its ASCII form
    (``bücher.de`` is ``xn--bcher-kva.de``, as DNS resolves it). A name IDNA cannot encode
    stays as it is."""
    try:
        return ipaddress.ip_address(host).compressed
    except ValueError:
        pass
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def domain_of(host: str) -> str:
    """Registered domain of ``host`` per the Public Suffix List (offline).

    ``www.cl.cam.ac.uk`` -> ``cam.ac.uk``; an IP address is its own domain; a host
    that is itself a public suffix (``co.uk``) or has no registrable part
    (``localhost``) is returned unchanged; "" -> "". This is the paper's choice of
    "server" for foreign-sourced quilts.
    """
    if not host:
        return ""
    host = host.lower().rstrip(".")
    if not host:
        return ""
    if _is_ip(host):
        return host
    try:
        registered = _psl().privatesuffix(host)
    except Exception:  # defensive: odd labels must never fail a partition
        return host
    return registered or host


def site_of(host: str) -> str:
    """Henzinger's site: the host if it has at most one dot, else minus its first label.

    ``www.cs.berkeley.edu`` -> ``cs.berkeley.edu``; ``example.com`` -> ``example.com``.
    An IP-address host is its own site (dropping an octet would be meaningless).
    """
    if not host or host.count(".") <= 1 or _is_ip(host):
        return host or ""
    return host.split(".", 1)[1]
