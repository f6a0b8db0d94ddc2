"""Fuzz of table inputs (issue 16): random Parquet and JSON Lines tables through ingestion.

Hypothesis writes a directory of 1-3 tables whose columns have random names (id, url, text,
ip, doc_id, and junk: case variants, dots, spaces, Spark's ``_corrupt_record``) and random
types (numbers, booleans, strings with NULs or invalid UTF-8, binary, all-null, timestamps
of every unit, dates, lists, structs, maps); JSON Lines files also mix types from row to row
and hold blank and malformed lines. One ingest run per directory must either complete with a
valid docs/ in which every row written is a document or a counted skip, or refuse the input
with a one-line ConfigError (a table without id or text, say). Anything else is a bug.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_hostile_tables import invalid_strings
from tiers import budgets, examples

from quiltdetect.common.config import ConfigError, merge_settings
from quiltdetect.ingest.job import IngestConfig, IngestJob

pytestmark = pytest.mark.spark

# Case variants of id and text make most runs a ConfigError (Spark cannot tell the two apart): rarer.
JUNK_NAMES = ["title", "body", "x.y", "a b", "_corrupt_record", "ünï"] * 4 + ["ID", "Text"]
TEXTS = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=24),  # any Unicode scalar value (no surrogates)
    st.just(""),
    st.text(max_size=8).map(lambda s: f"{s}\x00{s}"),
    st.builds(lambda s, n: (s or "long ") * n, st.text(max_size=6), st.integers(200, 1500)),  # long-ish
)
NOT_UTF8 = st.one_of(st.binary(max_size=16),
                     st.sampled_from([b"\xff", b"caf\xc3", b"\xed\xa0\x80 surrogate", b"cut \xe2\x82", b"\xc0\xaf"]))

# Timestamps within years 1..9999 (nanoseconds: within int64), per Parquet unit.
SECONDS = st.integers(-62_135_596_800, 253_402_300_799)
PARQUET_KINDS = {
    "int64": lambda: (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "float": lambda: (pa.float64(), st.floats()),
    "float32": lambda: (pa.float32(), st.floats(width=32)),
    "bool": lambda: (pa.bool_(), st.booleans()),
    "string": lambda: (pa.string(), TEXTS),
    "binary": lambda: (pa.binary(), st.one_of(NOT_UTF8, TEXTS.map(str.encode))),
    "timestamp_ms_utc": lambda: (pa.timestamp("ms", tz="UTC"), SECONDS.map(lambda s: s * 1000)),
    "timestamp_us": lambda: (pa.timestamp("us"), SECONDS.map(lambda s: s * 1_000_000)),
    "timestamp_ns": lambda: (pa.timestamp("ns"), st.integers(-(2**63) + 1, 2**63 - 1)),
    "date": lambda: (pa.date32(), st.integers(-719_162, 2_932_896)),
    "list_string": lambda: (pa.list_(pa.string()), st.lists(TEXTS, max_size=3)),
    "struct": lambda: (pa.struct([("body", pa.string())]), st.fixed_dictionaries({"body": TEXTS})),
    "map": lambda: (pa.map_(pa.string(), pa.string()), st.lists(st.tuples(st.text(max_size=4), TEXTS), max_size=2)),
}
NESTED_KINDS = ["list_string", "struct", "map"]  # a column no text can be taken from: rarer
KINDS = [k for k in sorted(PARQUET_KINDS) if k not in NESTED_KINDS] * 3 + NESTED_KINDS + ["invalid_utf8"] * 3 + ["null"]

JSON_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**40), 10**40), st.floats(), TEXTS,
    st.lists(TEXTS, max_size=3), st.fixed_dictionaries({"body": TEXTS}),
    st.dictionaries(st.text(max_size=3), st.one_of(TEXTS, st.integers()), max_size=2),
)
# Lines that are not one JSON object. Each is one row of Spark's (all columns null: a
# missing_id skip) or, for the last two, one row of whatever Spark makes of their first object.
MALFORMED = st.one_of(
    st.sampled_from([b"not json", b'{"id": "cut', b'{"id": "x", "text":', b"42", b'"a string"', b"null", b"true",
                     b"}{", b'{"id": "a\x00b", "text": "raw NUL"}', b'{"id": "bad\xffbyte", "text": "t\xc3"}',
                     b'{"id": "one", "text": "x"}}', b'{"id": "two", "text": "x"} {"id": "objects"}']),
    st.binary(min_size=1, max_size=24).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" ")),
    st.binary(max_size=12).map(lambda b: b'{"id": "' + bytes(c for c in b if c not in b'"\\\n\r') + b'", "text": "x"}'),
)
BLANK = st.sampled_from([b"", b"   ", b"\t"])


def column_names(draw) -> list[str]:
    """id and text usually (so most runs get past the missing-column check), the rest sometimes."""
    names = [n for n, p in (("id", 0.95), ("text", 0.95), ("url", 0.4), ("ip", 0.3), ("doc_id", 0.3))
             if draw(st.integers(0, 99)) < p * 100]
    names += draw(st.lists(st.sampled_from(JUNK_NAMES), max_size=2))
    return list(dict.fromkeys(names))


def nullable(strategy):
    return st.one_of(st.none(), strategy)


@st.composite
def parquet_table(draw) -> tuple[pa.Table, int]:
    n = draw(st.integers(0, 6))
    columns = {}
    for name in column_names(draw):
        kind = draw(st.sampled_from(KINDS))
        if kind == "null":
            columns[name] = pa.nulls(n)
        elif kind == "invalid_utf8":  # a string column holding bytes that are not UTF-8 (no nulls)
            columns[name] = invalid_strings(draw(st.lists(NOT_UTF8, min_size=n, max_size=n)))
        else:
            dtype, values = PARQUET_KINDS[kind]()
            columns[name] = pa.array(draw(st.lists(nullable(values), min_size=n, max_size=n)), dtype)
    table = pa.table(columns) if columns else pa.table({"junk": pa.nulls(n)})
    return table, n


@st.composite
def jsonl_lines(draw) -> tuple[bytes, int]:
    """The bytes of a JSON Lines file and its number of rows.

    A row is a line holding anything but whitespace: Spark's JSON reader skips blank lines
    and makes every other line one row, an object as it is and anything else (a cut-off
    object, a bare scalar, bytes that are not UTF-8, a raw NUL) a row of nulls, which ingest
    counts as a missing_id skip. Top-level arrays, which Spark would expand into one row per
    element, are not generated."""
    names = column_names(draw)
    lines, rows = [], 0
    for _ in range(draw(st.integers(0, 7))):
        kind = draw(st.sampled_from(["object"] * 5 + ["blank", "malformed"]))
        if kind == "blank":
            lines.append(draw(BLANK))
            continue
        rows += 1
        if kind == "malformed":
            lines.append(draw(MALFORMED))
        else:
            keys = [k for k in names if draw(st.integers(0, 9)) < (8 if k in ("id", "text") else 5)]
            obj = {k: draw(JSON_VALUES) for k in keys}
            lines.append(json.dumps(obj, ensure_ascii=draw(st.booleans())).encode())
    return b"".join(line + b"\n" for line in lines), rows


@st.composite
def table_dir(draw) -> list[tuple[str, bytes | pa.Table, int]]:
    """1-3 files: (name, Parquet table or JSON Lines bytes, rows written)."""
    files = []
    for i in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            table, n = draw(parquet_table())
            files.append((f"t{i}.parquet", table, n))
        else:
            data, n = draw(jsonl_lines())
            gz = draw(st.booleans())
            files.append((f"t{i}.jsonl.gz" if gz else f"t{i}.jsonl", gzip.compress(data, mtime=0) if gz else data, n))
    return files


def write_dir(root: Path, files) -> int:
    root.mkdir()
    for name, content, _ in files:
        if isinstance(content, pa.Table):
            pq.write_table(content, root / name)
        else:
            (root / name).write_bytes(content)
    return sum(n for *_, n in files)


def ingest(spark, inputs: Path, out: Path):
    return IngestJob.run(spark, merge_settings(IngestConfig, {
        "inputs": [str(inputs)], "output": str(out), "write_rejects": True}).validate())


def check_tables(spark, tmp_path_factory, files):
    root = tmp_path_factory.mktemp("tablefuzz")
    written = write_dir(root / "in", files)
    out = root / "out"
    try:
        result = ingest(spark, root / "in", out)
    except ConfigError as exc:
        message = str(exc)
        assert message and "\n" not in message, repr(message)
        assert not (out / "_COMPLETE").exists()
        return
    assert (out / "_COMPLETE").exists()
    stage = json.loads((out / "metrics.json").read_text())["stages"]["ingest"]
    assert {k: stage[k] for k in ("documents", "skipped")} == {
        k: result.metrics.stages["ingest"][k] for k in ("documents", "skipped")}
    docs = pq.read_table(out / "docs").to_pylist()  # decodes every string: fails on invalid UTF-8
    ids = [d["doc_id"] for d in docs]
    assert all(isinstance(i, str) and i for i in ids), ids
    assert len(set(ids)) == len(ids)
    for d in docs:
        assert isinstance(d["text"], str) and "\x00" not in d["text"], d["doc_id"]
        d["text"].encode("utf-8")
    rejects = pq.read_table(out / "rejects").to_pylist()
    skipped = sum(stage["skipped"].values())
    assert len(docs) == stage["documents"] and len(rejects) == skipped, (len(docs), len(rejects), stage)
    assert stage["documents"] + skipped == written, (stage, written)


@pytest.mark.parametrize("budget", budgets(3, 25))
def test_random_tables_give_documents_and_counted_skips_or_a_config_error(spark, tmp_path_factory, budget):
    examples(budget)(given(files=table_dir())(check_tables))(spark, tmp_path_factory)


def test_document_table_with_nuls_and_invalid_utf8_beside_a_nanosecond_timestamp_table(spark, tmp_path):
    """Found by the fuzz: a document table (doc_id, ...) kept NULs in its text and invalid UTF-8
    in its other string columns (docs/ then failed to decode); a table with a nanosecond
    timestamp column (pandas' default) failed the run in Spark's Parquet reader; a JSON Lines
    key ``_corrupt_record`` that is not a string failed it in Spark's JSON reader."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    pq.write_table(pa.table({"doc_id": ["d1", "d2"], "text": ["a\x00b", "fine"],
                             "url": invalid_strings([b"http://\xff.example/", b"http://ok.example/"]),
                             "ip": invalid_strings([b"\xff", b"1.2.3.4"])}), inputs / "docs.parquet")
    pq.write_table(pa.table({"id": pa.array([1, None], pa.timestamp("ns")), "text": ["t", "u"],
                             "fetched": pa.array([5, 6], pa.timestamp("ns"))}), inputs / "ns.parquet")
    (inputs / "corrupt.jsonl").write_text('{"_corrupt_record": false, "id": "j1", "text": "x"}\nnot json\n')
    result = ingest(spark, inputs, tmp_path / "out")
    docs = {d["doc_id"]: d for d in pq.read_table(tmp_path / "out" / "docs").to_pylist()}
    assert set(docs) == {"d1", "d2", "1", "j1"}
    assert docs["d1"]["text"] == "a b" and docs["d1"]["url"] == "http://\ufffd.example/" and docs["d1"]["decode_errors"]
    assert not docs["d2"]["decode_errors"]
    assert result.metrics.stages["ingest"]["skipped"] == {"missing_id": 2}  # the null timestamp, "not json"


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_columns_whose_names_differ_only_in_case_are_a_config_error(spark, tmp_path, fmt):
    """Found by the fuzz: Spark refused such a table with an AnalysisException."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    if fmt == "parquet":
        pq.write_table(pa.table({"id": ["a"], "ID": ["b"], "text": ["t"]}), inputs / "t.parquet")
    else:
        (inputs / "t.jsonl").write_text('{"id": "a", "ID": "b", "text": "t"}\n')
    with pytest.raises(ConfigError, match=r"two columns named `id` \(names that differ only in case\)") as exc:
        ingest(spark, inputs, tmp_path / "out")
    assert "\n" not in str(exc.value)
