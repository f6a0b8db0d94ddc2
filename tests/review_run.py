"""A small quilt run directory built without Spark, for the review tool's tests.

Pages are stitched from random sources; the quilts table comes from the reference
implementation (quilts/reference.py), so covered/shared are the definition's values. One
quilt carries a hostile payload (a <script> element and an onerror attribute) in its text.
"""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from quiltdetect.quilts.reference import RefDoc, reference_quilts

HOSTILE = '<script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2">'
VOCAB = [f"w{i}" for i in range(400)] + ["naïve", "İstanbul", "straße", "東京"]


def make_run(root: Path, *, n_quilts: int = 3, seed: int = 7, k: int = 5) -> Path:
    """Write ``root``/{docs,quilts}/ and config.yaml; returns ``root``."""
    rng = random.Random(seed)
    sources = [" ".join(rng.choice(VOCAB) for _ in range(60)) for _ in range(8)]
    docs = [(f"src-{i}", f"https://site{i}.example/page-{i}.html", t, []) for i, t in enumerate(sources)]
    for q in range(n_quilts):
        parts, links = [], []
        for s in rng.sample(range(8), 4):
            words = sources[s].split()
            start = rng.randrange(0, 30)
            parts.append(" ".join(words[start : start + 14]))
            if q == 1 and s % 2 == 0:
                links.append(("credit", f"https://site{s}.example/page-{s}.html#top"))
        text = "\n".join(parts)
        if q == 0:
            text = parts[0] + "\n" + HOSTILE + "\n" + "\n".join(parts[1:])
        docs.append((f"quilt-{q}", f"https://quilts.example/q{q}?a=1&b=<2>", text, links))
    ref = reference_quilts([RefDoc(d, t, u) for d, u, t, _ in docs], k, 50, 0.5)
    url_of = {d: u for d, u, _, _ in docs}
    links_of = {d: {h.split("#")[0].rstrip("/") for _, h in a} for d, _, _, a in docs}
    rows = []
    for doc_id, r in sorted(ref.items()):
        if r.patchfrac < 0.5 or len(r.sources) < 2:
            continue
        srcs = [{"doc_id": s, "url": url_of[s], "covered": c, "shared": sh,
                 "attributed": url_of[s] in links_of[doc_id]} for s, c, sh in r.sources]
        n_att = sum(s["attributed"] for s in srcs)
        rows.append({"doc_id": doc_id, "url": url_of[doc_id], "n_grams": r.n_grams,
                     "n_patch_grams": r.n_patch_grams, "patchfrac": r.patchfrac, "sources": srcs,
                     "attributed": n_att > 0, "n_attributed_sources": n_att})
    (root / "quilts").mkdir(parents=True)
    (root / "docs").mkdir()
    pq.write_table(pa.Table.from_pylist(rows), root / "quilts" / "part-00000.parquet")
    anchor = pa.struct([("text", pa.string()), ("href", pa.string())])
    docs_table = pa.table({
        "doc_id": [d for d, _, _, _ in docs], "url": [u for _, u, _, _ in docs], "text": [t for _, _, t, _ in docs],
        "anchors": pa.array([[{"text": a, "href": h} for a, h in links] for _, _, _, links in docs], pa.list_(anchor)),
    })
    pq.write_table(docs_table, root / "docs" / "part-00000.parquet")
    (root / "config.yaml").write_text(f"k: {k}\nm: 50\nc: 2\ntheta: 0.5\nforeign: none\n", encoding="utf-8")
    (root / "_COMPLETE").write_text('{"job": "quilts"}', encoding="utf-8")
    return root


# ---- a near-duplicate run ----------------------------------------------------------------------

KEPT_RUN = "20260101T000000-review"
SCRIPT_URL = "javascript:alert(1)"  # a kept page's url that must never become a link


def make_neardup_run(root: Path, *, n_sites: int = 4, seed: int = 11) -> Path:
    """Write ``root``/{docs,duplicate_of}/, config.yaml and _COMPLETE as ``quiltdetect neardup``
    (lsh, the defaults) does, from the in-memory reference (neardup/reference.py) instead of Spark.

    Each base page ``a-N`` (kept: without dates doc_id orders the pages) has copies that are
    dropped: ``b-N`` with a few words changed (resemblance and containment high), ``c-N`` its
    first half (containment 1, resemblance about 0.5: dropped by containment only). ``b-0``
    carries the hostile payload; ``a-1``'s url is a ``javascript:`` url; ``x-N`` are unrelated.
    """
    from quiltdetect.neardup.config import NearDupConfig
    from quiltdetect.neardup.reference import RefDoc, reference_kept, reference_lsh_pairs

    rng = random.Random(seed)
    docs: list[tuple[str, str, str]] = []
    for i in range(n_sites):
        base = [rng.choice(VOCAB) for _ in range(120)]
        changed = list(base)
        for j in rng.sample(range(120), 3 + i):
            changed[j] = f"changed{j}"
        copy = " ".join(changed)
        if i == 0:
            copy = " ".join(changed[:60]) + "\n" + HOSTILE + "\n" + " ".join(changed[60:])
        url = SCRIPT_URL if i == 1 else f"https://site{i}.example/article-{i}.html"
        docs += [(f"a-{i}", url, " ".join(base)),
                 (f"b-{i}", f"https://mirror{i}.example/copy?a=1&b=<2>", copy),
                 (f"c-{i}", f"https://short{i}.example/half", " ".join(base[:60])),
                 (f"x-{i}", f"https://other{i}.example/", " ".join(rng.choice(VOCAB) for _ in range(120)))]
    cfg = NearDupConfig()
    ref = [RefDoc(d, t, u) for d, u, t in docs]
    dropped = reference_kept(ref, reference_lsh_pairs(ref, cfg))
    url_of = {d: u for d, u, _ in docs}
    rows = [{"doc_id": d, "duplicate_of": kept, "kept_url": url_of[kept], "kept_run": KEPT_RUN,
             "resemblance": float(values[0]), "containment": float(values[1])}
            for d, (kept, values) in sorted(dropped.items())]
    schema = pa.schema([("doc_id", pa.string()), ("duplicate_of", pa.string()), ("kept_url", pa.string()),
                        pa.field("kept_run", pa.string(), nullable=False), ("resemblance", pa.float64()),
                        ("containment", pa.float64())])
    (root / "duplicate_of").mkdir(parents=True)
    (root / "docs").mkdir()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), root / "duplicate_of" / "part-00000.parquet")
    pq.write_table(pa.table({"doc_id": [d for d, _, _ in docs], "url": [u for _, u, _ in docs],
                             "text": [t for _, _, t in docs]}), root / "docs" / "part-00000.parquet")
    (root / "config.yaml").write_text(
        f"algorithm: lsh\nk: {cfg.k}\nresemblance_threshold: {cfg.resemblance_threshold}\n"
        f"containment_threshold: {cfg.containment_threshold}\nlsh_bands: {cfg.lsh_bands}\nlsh_rows: {cfg.lsh_rows}\n",
        encoding="utf-8")
    (root / "_COMPLETE").write_text(f'{{"job": "neardup", "run_id": "{KEPT_RUN}"}}', encoding="utf-8")
    return root
