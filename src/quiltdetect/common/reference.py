"""What the plain-Python references of the tests' parity checks share: a document as they see
it, and the foreign rule's server of one (``common.foreign.ForeignRule.server_column`` is the
same rule on Spark). No Spark here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RefDoc:
    """One document as the reference sees it."""

    doc_id: str
    text: str
    url: str = ""
    host: str = ""
    domain: str = ""
    ip: str | None = None


def server_of(doc: RefDoc, foreign: str) -> str | None:
    """The server a document lives on under a foreign rule; None when the rule is ``none``.

    For ``ip``, a document without an IP falls back to its registered domain.
    """
    if foreign == "none":
        return None
    if foreign == "host":
        return doc.host
    if foreign == "domain":
        return doc.domain
    if foreign == "ip":
        return doc.ip if doc.ip else "domain:" + doc.domain
    raise ValueError(f"unknown foreign rule {foreign!r}")
