"""Which files a run reads, and why the others are not: the inputs (``--input``: files,
directories, globs, local or any Hadoop URI) resolved into the files of each format, the
format each is read as (from its name, else sniffed from its first bytes), and every file left
out with its reason (hidden, a table's metadata, an unknown format, an unsupported compression).
A missing path or a glob that matches nothing fails at once; a directory with no file is an
input of no files (docs/reliability.md, "Empty inputs").
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pyspark.sql import SparkSession

from quiltdetect.common import fs
from quiltdetect.common.config import ConfigError
from quiltdetect.common.listing import HIDDEN, TABLE_METADATA, is_table_metadata, list_local

_SUFFIXES = (
    (("warc.wet.gz", "wet.gz", ".wet", "wet.zst"), "wet"),
    ((".warc.gz", ".warc", ".arc.gz", ".arc", ".warc.zst"), "warc"),
    ((".parquet", ".pq"), "parquet"),
    ((".jsonl", ".jsonl.gz", ".json", ".json.gz", ".ndjson"), "jsonl"),
)


@dataclass(frozen=True)
class InputFile:
    """One input file, the format it is read as, and ``rank``: the position of the first
    ``--input`` that names it (0, 1, ...), which decides between two records of one doc_id
    (definitions §0: the earlier input's record is kept)."""

    path: str
    format: str
    rank: int = 0


def infer_format(path: str) -> str | None:
    """The input format a file name implies, or None (``x.warc.wet.gz`` is WET, not WARC)."""
    name = path.lower().rsplit("/", 1)[-1]
    if name.endswith(".crc") or name == "_success":
        return None
    for suffixes, fmt in _SUFFIXES:
        if name.endswith(suffixes):
            return fmt
    return None


class InputFiles(list):
    """The files the inputs name, each an ``InputFile`` (sorted by path), plus what was left out:
    ``skipped``, (path, reason) of every entry under an input that is not read
    (``common/listing.py``'s reasons, and ``unknown format`` / ``unsupported compression`` here),
    and ``taken_as``, how each input was taken (``path``, ``glob``, or ``uri`` for a Hadoop one)
    and how many files it gave."""

    def __init__(self, files=(), skipped=(), taken_as=None) -> None:
        super().__init__(files)
        self.skipped: list[tuple[str, str]] = list(skipped)
        self.taken_as: dict[str, tuple[str, int]] = dict(taken_as or {})  # input -> (how, files)

    def described(self) -> list[dict]:
        """Each input with how it was taken and its files, for metrics.json and the summary."""
        return [{"input": p, "taken_as": how, "files": n} for p, (how, n) in self.taken_as.items()]

    def skipped_counts(self) -> dict[str, int]:
        """How many entries were left out, per reason."""
        counts: dict[str, int] = {}
        for _, reason in self.skipped:
            counts[reason] = counts.get(reason, 0) + 1
        return dict(sorted(counts.items()))


UNKNOWN_FORMAT = "unknown format"
UNSUPPORTED_COMPRESSION = "unsupported compression"
# Compressions no reader here decompresses (zstandard is read: records.open_archive).
_UNSUPPORTED = (".zst", ".bz2", ".xz", ".lzma", ".lz4", ".br", ".zip", ".7z", ".tar", ".tgz", ".z", ".lz")


# What an input may hold besides its files and still be an input of no documents (an empty
# directory, one left by a Spark job that wrote no rows); any other entry left out (a README, an
# unreadable file) says the input is not what was meant, and the run does not start.
EMPTY_REASONS = (HIDDEN, TABLE_METADATA)


def skip_reason(path: str) -> str:
    """Why a listed file without a known format is left out."""
    name = path.rsplit("/", 1)[-1].lower()
    if name.endswith(_UNSUPPORTED):
        return UNSUPPORTED_COMPRESSION
    return UNKNOWN_FORMAT


def resolve_inputs(spark: SparkSession | None, patterns: list[str], input_format: str | None) -> InputFiles:
    """Expand every --input into files with their formats; fail when one names nothing to read.

    Local inputs are listed without Spark (so a typo fails before any Spark work), each file
    read or left out with a reason (``common/listing.py``); other URIs need ``spark`` for
    Hadoop's file-system listing. A file reached twice (two inputs, or a symlink) is read once.
    An existing directory with no file in it (``EMPTY_REASONS``) gives no file and no error:
    the run is one of no documents. A path that does not exist fails.
    """
    found = InputFiles()
    for rank, pattern in enumerate(patterns):
        if fs.is_local(pattern):
            listing = list_local(fs.local_path(pattern))
            paths, skipped, how, exists = listing.files, listing.skipped, listing.taken_as, listing.found
        elif spark is None:
            continue
        else:
            paths, skipped = fs.expand_hadoop(spark, pattern)
            how = "uri"
            exists = bool(paths or skipped) or bool(fs.matches(spark, pattern))
        matched = []
        for path in paths:
            fmt = input_format or infer_format(path)
            if fmt is not None:
                matched.append(InputFile(path, fmt, rank))
            else:
                skipped.append((path, TABLE_METADATA if is_table_metadata(path) else skip_reason(path)))
        if not matched and exists and all(reason in EMPTY_REASONS for _, reason in skipped):
            # an empty directory (or one of hidden names and table metadata only): an input of no
            # documents, as a scheduled crawl's empty day is; the run completes with none
            found.skipped.extend(skipped)
            found.taken_as[pattern] = (how, 0)
            continue
        if not matched:
            if not exists:
                raise ConfigError(f"--input {pattern}: no such file, or no files match")
            left = _left_out(skipped)
            raise ConfigError(f"--input {pattern}: no file to read{left}; give --input-format if the files "
                              "are WARC, WET, Parquet or JSON Lines under other names")
        if input_format is not None:
            refuse_other_format(pattern, matched, input_format)
        found.extend(matched)
        found.skipped.extend(skipped)
        found.taken_as[pattern] = (how, len(matched))
    unique: dict[str, InputFile] = {}
    for f in found:  # a file two inputs name is read once, as part of the first
        unique.setdefault(f.path, f)
    return InputFiles([unique[p] for p in sorted(unique)], sorted(set(found.skipped)), found.taken_as)


# What a file's first bytes show it to be (``sniffed_format``), by the name of its kind.
_KINDS = {"warc": "WARC", "wet": "WARC", "parquet": "Parquet", "jsonl": "JSON"}


def sniffed_format(path: str) -> str | None:
    """What a local file's first bytes show it to be: ``WARC`` (WARC, WET or ARC records, gzipped
    or not), ``Parquet`` or ``JSON``; None when they show nothing sure (an empty or broken file,
    zstandard, text of another kind) or the file is not local."""
    import gzip
    import zlib

    if not fs.is_local(path):
        return None
    try:
        with open(fs.local_path(path), "rb") as raw:
            head = raw.read(64)
        if head.startswith(b"PAR1"):
            return "Parquet"
        if head.startswith(b"\x1f\x8b"):
            with gzip.open(fs.local_path(path), "rb") as stream:
                head = stream.read(64)
    except (OSError, EOFError, zlib.error):
        return None
    text = head.lstrip(b" \t\r\n\xef\xbb\xbf")
    if text.startswith((b"WARC/", b"filedesc://")):
        return "WARC"
    if text[:1] in (b"{", b"["):
        return "JSON"
    return None


def refuse_other_format(pattern: str, files: list[InputFile], input_format: str) -> None:
    """A ConfigError when ``--input-format`` cannot be the format of an input: none of its files
    is of that kind by its first bytes, and some are of another (a Parquet file given as
    ``warc``). The first file of the kind ends the check (with the right format, the first file)."""
    want = _KINDS[input_format]
    other = []
    for f in files:
        kind = sniffed_format(f.path)
        if kind == want:
            return
        if kind is not None:
            other.append((f.path, kind))
    if other:
        path, kind = other[0]
        which = "its file is not" if len(files) == 1 else f"none of its {len(files)} files is"
        raise ConfigError(f"--input {pattern}: --input-format {input_format}, but {which} {want} "
                          f"({os.path.basename(path)} is {kind}); give the files' format, or leave --input-format "
                          "out to infer each file's format from its name")


def _left_out(skipped: list[tuple[str, str]]) -> str:
    """`` (3 left out: 2 unknown format, 1 hidden name)`` for an error message."""
    if not skipped:
        return ""
    counts = InputFiles(skipped=skipped).skipped_counts()
    return f" ({len(skipped)} left out: " + ", ".join(f"{n} {reason}" for reason, n in counts.items()) + ")"
