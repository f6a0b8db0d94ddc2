"""Files and chunks and their SHA-1 hashes (the paper's steps 1-2); Spark-free.

Chunking rule: the document table's ``text`` holds one line per HTML block element
(paragraph, div, li, heading, td, ...), so a *chunk* is one line of ``text`` after minimal
normalisation (one Unicode form with case kept, strip, collapse internal whitespace runs to one
space); lines that normalise to
the empty string are not chunks (the extractor already drops empty blocks such as ``<p></p>``).
The *file* hash is the SHA-1 of the normalised chunks joined by ``"\\n"``: the raw payload is not
kept in the document table, and hashing the normalised text makes a one-chunk file hash equal
to its chunk's hash, so the stop list applies to files (the empty file) and chunks alike.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from quiltdetect.kernel.unicode import compose

__all__ = [
    "DocumentHashes",
    "builtin_stop_chunks",
    "chunk_texts",
    "hash_document",
    "normalise",
    "read_stop_chunks",
    "sha1",
    "stop_hashes",
]

_SPACE_RE = re.compile(r"\s+")
_ESCAPE_RE = re.compile(r"\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[\\nt#e])")


def normalise(line: str) -> str:
    """A chunk's canonical form: in one Unicode form (``kernel.unicode.compose``: invisible
    characters removed, NFKC, case kept), stripped, internal whitespace runs collapsed to one space."""
    return _SPACE_RE.sub(" ", compose(line)).strip()


def chunk_texts(text: str | None) -> list[str]:
    """The chunks of a document's text, in order, duplicates kept (the chunk vector)."""
    if not text:
        return []
    chunks = []
    for line in text.split("\n"):
        chunk = normalise(line)
        if chunk:
            chunks.append(chunk)
    return chunks


def sha1(text: str) -> bytes:
    """SHA-1 (20 bytes) of the UTF-8 encoding of ``text``."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).digest()


@dataclass(frozen=True)
class DocumentHashes:
    """One document's file hash and chunk hash vector, after stop-chunk removal.

    ``chunks``: SHA-1 digests of the non-stop chunks in page order (duplicates kept);
    ``positions`` (int32, shape (n,)): each kept chunk's index in the full chunk vector;
    ``lengths`` (int32, shape (n,)): each kept chunk's length in characters;
    ``n_stop``: chunks dropped because they are stop chunks.
    """

    file_sha1: bytes
    chunks: list[bytes]
    positions: np.ndarray
    lengths: np.ndarray
    n_stop: int


def hash_document(text: str | None, stop: frozenset[bytes] = frozenset()) -> DocumentHashes:
    """Steps 1-2 for one document: H(f) and the chunk hash vector minus the stop chunks."""
    texts = chunk_texts(text)
    file_sha1 = sha1("\n".join(texts))
    chunks: list[bytes] = []
    positions: list[int] = []
    lengths: list[int] = []
    for i, chunk in enumerate(texts):
        digest = sha1(chunk)
        if digest in stop:
            continue
        chunks.append(digest)
        positions.append(i)
        lengths.append(len(chunk))
    return DocumentHashes(
        file_sha1,
        chunks,
        np.asarray(positions, dtype=np.int32),
        np.asarray(lengths, dtype=np.int32),
        len(texts) - len(chunks),
    )


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if code[0] in "uUx":
        return chr(int(code[1:], 16))
    return {"\\": "\\", "n": "\n", "t": "\t", "#": "#", "e": ""}[code]


def read_stop_chunks(lines: Iterable[str]) -> list[str]:
    """Stop chunks from the lines of a stop-chunk file, normalised like chunks.

    Format: one chunk per line; a line starting with ``#`` is a comment and blank lines are
    ignored. Escapes make invisible chunks writable: ``\\uXXXX``, ``\\xXX``, ``\\t``, ``\\\\``,
    ``\\#`` (a chunk that starts with #), and ``\\e`` (the empty chunk / empty file).
    """
    out: list[str] = []
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        out.append(normalise(_ESCAPE_RE.sub(_unescape, line)))
    return out


def builtin_stop_chunks() -> list[str]:
    """The stop-chunk list shipped with quiltdetect (``reuse/data/stop_chunks.txt``)."""
    text = resources.files("quiltdetect.reuse").joinpath("data/stop_chunks.txt").read_text("utf-8")
    return read_stop_chunks(text.splitlines())


def stop_hashes(extra_files: Iterable[str | Path] = (), *, builtin: bool = True) -> dict[bytes, str]:
    """SHA-1 -> text of every stop chunk: the shipped list (unless ``builtin=False``) plus files."""
    texts: list[str] = builtin_stop_chunks() if builtin else []
    for path in extra_files:
        texts.extend(read_stop_chunks(Path(path).read_text("utf-8").splitlines()))
    return {sha1(t): t for t in texts}
