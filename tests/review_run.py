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
