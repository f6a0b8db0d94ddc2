"""Near-duplicate updates (``neardup --previous``): a chain of updates equals a fresh run over
everything so far (pairs/, clusters/; kept/ and duplicate_of/ when the segments come in crawl
order); a late segment's older copy leaves the kept page kept (and the Python API's update gives
the same); buckets that new pages take past the cap withdraw exactly the old pairs a fresh run
would not list; the refusals. The fast tier runs the lsh chain and the refusals; the extended
tier the combined-sites chain, the late segment and the cap."""

from __future__ import annotations

import json
import random
import zlib
from pathlib import Path

import pytest
from test_neardup_parity import DATES, make_corpus

from quiltdetect import find_near_duplicates
from quiltdetect import previous as previous_module
from quiltdetect.common.config import ConfigError, merge_settings
from quiltdetect.common.layout import COMPLETE, work_table
from quiltdetect.neardup import chain as chain_module
from quiltdetect.neardup import clusters as clusters_module
from quiltdetect.neardup import pairs as bucket_rule
from quiltdetect.neardup.chain import kept_state
from quiltdetect.neardup.config import PRESETS, NearDupConfig
from quiltdetect.neardup.decisions import similarity_columns
from quiltdetect.neardup.job import NearDupJob
from quiltdetect.neardup.reference import (
    RefDoc,
    crawl_key,
    reference_clusters,
    reference_kept,
    reference_pairs,
)

pytestmark = pytest.mark.spark


def write_segment(path: Path, docs: list[RefDoc]) -> str:
    rows = [{"id": d.doc_id, "url": d.url, "text": d.text, "date": d.warc_date} for d in docs]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def run_step(spark, settings: dict, inputs: str, output: Path, previous: Path | None) -> dict:
    """One run of the chain (fresh when ``previous`` is None); its tables as plain values."""
    cfg = merge_settings(NearDupConfig, {**settings, "inputs": [inputs], "output": str(output), "top": 0,
                                         "previous": str(previous) if previous else ""})
    NearDupJob.run(spark, cfg.validate())
    table = lambda name: [r.asDict() for r in spark.read.parquet(str(output / name)).collect()]  # noqa: E731
    columns = [c for c in ("resemblance", "containment", "b_similarity", "c_similarity", "same_site")]
    return {
        "pairs": {(r["doc_id_a"], r["doc_id_b"]): tuple(r[c] for c in columns if c in r) for r in table("pairs")},
        "clusters": {r["doc_id"]: (r["cluster_id"], r["cluster_size"]) for r in table("clusters")},
        "kept": sorted(r["doc_id"] for r in table("kept")),
        "duplicate_of": {r["doc_id"]: r for r in table("duplicate_of")},
        "run_id": json.loads((output / COMPLETE).read_text())["run_id"],
    }


def dropped_as_reference(got: dict, algorithm: str) -> dict:
    names = [n for n, _ in similarity_columns(algorithm)]
    return {x: (r["duplicate_of"], tuple(r[n] for n in names)) for x, r in got["duplicate_of"].items()}


def check_chain(spark, tmp_path: Path, settings: dict, segments: list[list[RefDoc]]) -> None:
    """Run the segments as a chain; after each step compare with the references over all pages
    so far: pairs and clusters as a fresh run's, the new pages decided against the kept ones."""
    cfg = merge_settings(NearDupConfig, settings).validate(need_io=False)
    seen: list[RefDoc] = []
    previous: Path | None = None
    kept_before: frozenset[str] = frozenset()
    decided: frozenset[str] = frozenset()
    dropped: dict = {}
    arrived: dict[str, str] = {}
    for i, segment in enumerate(segments):
        seen += segment
        out = tmp_path / f"step{i}"
        got = run_step(spark, settings, write_segment(tmp_path / f"seg{i}.jsonl", segment), out, previous)
        expected = reference_pairs(seen, cfg)
        assert got["pairs"] == expected, f"step {i}"
        assert got["clusters"] == reference_clusters(list(expected)), f"step {i}"
        dropped.update(reference_kept(seen, expected, kept_before, decided))
        want = {x: (y, values[:len(similarity_columns(cfg.algorithm))]) for x, (y, values) in dropped.items()}
        assert dropped_as_reference(got, cfg.algorithm) == want, f"step {i}"
        assert got["kept"] == sorted({d.doc_id for d in seen} - set(dropped)), f"step {i}"
        arrived.update({d.doc_id: got["run_id"] for d in segment})
        assert {x: r["kept_run"] for x, r in got["duplicate_of"].items()} == {
            x: arrived[r["duplicate_of"]] for x, r in got["duplicate_of"].items()}
        kept_before = frozenset(got["kept"])
        decided = frozenset(d.doc_id for d in seen)
        previous = out


def crawl_ordered(seed: int, n_corpora: int, n_segments: int) -> tuple[list[list[RefDoc]], list[RefDoc]]:
    """Random corpora of near-copies, dated, split into segments in crawl order."""
    rng = random.Random(seed)
    docs = [d for s in rng.sample(range(10**6), n_corpora) for d in make_corpus(s, rng.randint(2, 30))]
    docs = sorted((RefDoc(d.doc_id, d.text, d.url, (), rng.choice(DATES)) for d in docs), key=crawl_key)
    cuts = sorted(rng.sample(range(1, len(docs)), n_segments - 1))
    return [docs[a:b] for a, b in zip([0, *cuts], [*cuts, len(docs)], strict=True)], docs


# lsh (the default) in the fast tier; combined-sites in the extended tier: both of Henzinger's
# bucket families (supershingles, simhash pieces) and the same-site split of its pairs, so what
# b, c and combined do is in it (measured: each of them as a chain of its own cost ~45 s of CPU).
SETTINGS = [
    pytest.param({}, id="lsh"),
    pytest.param({"algorithm": "combined-sites", "k": 2, "b_threshold": 1, "c_threshold": 340,
                  "combined_c_threshold": 300, "wrap": True}, id="combined-sites"),
]


@pytest.mark.parametrize("settings", SETTINGS)
def test_a_chain_in_crawl_order_equals_a_fresh_run_over_the_union(spark, tmp_path, settings, monkeypatch):
    """Two segments in the fast tier (lsh), three for combined-sites (extended). Each step
    equals the references over the pages so far (``check_chain``), and in crawl order the chain's
    decisions are those of one pass over the union (a fresh run's: the parity tests hold the
    fresh run to that pass). The combined-sites chain takes the paths of a large segment: the
    pages it verifies, names and decides picked by shuffles instead of broadcasts (past
    ``BROADCAST_PAGES`` and ``BROADCAST_KEYS``), the new doc_ids matched against the previous ones by a shuffle (past
    ``previous.BROADCAST_NEW``), its clusters by Spark's joins instead of one task (past
    ``clusters.ONE_TASK_EDGES``), its tables sorted by ``orderBy``'s ranges (past
    ``ONE_TASK_SORT_ROWS``), the pages it compares ranked by Spark's sort (past
    ``previous.ONE_TASK_RANKS``), the stored bucket rows read by Spark, not pyarrow (as on
    a remote file system: ``chain.PARTS_READ_BY_PYARROW``)."""
    n = 2 if not settings else 3
    if settings:
        monkeypatch.setattr(bucket_rule, "BROADCAST_PAGES", -1)
        monkeypatch.setattr(bucket_rule, "BROADCAST_KEYS", -1)
        monkeypatch.setattr(bucket_rule, "ONE_TASK_SORT_ROWS", -1)
        monkeypatch.setattr(previous_module, "BROADCAST_NEW", -1)
        monkeypatch.setattr(clusters_module, "ONE_TASK_EDGES", -1)
        monkeypatch.setattr(previous_module, "ONE_TASK_RANKS", -1)
        monkeypatch.setattr(chain_module, "PARTS_READ_BY_PYARROW", False)
    segments, docs = crawl_ordered(zlib.crc32(repr(sorted(settings.items())).encode()), 6, n)
    check_chain(spark, tmp_path, settings, segments)
    cfg = merge_settings(NearDupConfig, settings).validate(need_io=False)
    pairs = reference_pairs(docs, cfg)
    one_pass = {x: y for x, (y, _) in reference_kept(docs, pairs).items()}
    chained = {x: r["duplicate_of"] for x, r in run_step_tables(spark, tmp_path / f"step{n - 1}").items()}
    assert chained == one_pass and one_pass


def run_step_tables(spark, output: Path) -> dict:
    return {r["doc_id"]: r.asDict() for r in spark.read.parquet(str(output / "duplicate_of")).collect()}


def test_a_late_older_copy_of_a_kept_page_is_dropped_and_the_kept_page_stays(spark, tmp_path):
    text = " ".join(f"w{i}" for i in range(60))
    first = [RefDoc("b-kept", text, "http://b.org/", (), "2021-03-01T00:00:00Z"),
             RefDoc("other", " ".join(f"x{i}" for i in range(60)), "http://c.org/", (), "2021-03-02T00:00:00Z")]
    late = [RefDoc("a-older", text + " w0", "http://a.org/", (), "2019-01-01T00:00:00Z")]
    check_chain(spark, tmp_path, {}, [first, late])
    rows = run_step_tables(spark, tmp_path / "step1")
    assert {x: r["duplicate_of"] for x, r in rows.items()} == {"a-older": "b-kept"}
    # the Python API's update, on a DataFrame of the late segment, gives the same tables
    frame = spark.createDataFrame([(d.doc_id, d.url, d.text, d.warc_date) for d in late], "id string, url string, "
                                  "text string, date string")
    api = find_near_duplicates(frame, previous=str(tmp_path / "step0"), output=str(tmp_path / "api"))
    assert {r["doc_id"]: r["duplicate_of"] for r in api.duplicate_of.collect()} == {"a-older": "b-kept"}
    assert sorted(r["doc_id"] for r in api.kept.collect()) == ["b-kept", "other"]
    assert api.pairs.count() == 1
    # a fresh run over both keeps the older copy instead (one pass in crawl order)
    got = run_step(spark, {}, write_segment(tmp_path / "both.jsonl", first + late), tmp_path / "fresh", None)
    assert {x: r["duplicate_of"] for x, r in got["duplicate_of"].items()} == {"b-kept": "a-older"}


def test_buckets_taken_past_the_cap_withdraw_the_old_pairs_a_fresh_run_does_not_list(spark, tmp_path):
    """Copies of one page, cap 4: three old copies give all their pairs; two new ones (one with
    the smallest doc_id, the new root) take every bucket past the cap, so only star edges from
    the new root remain, as in a fresh run; a second group passes the cap in the previous run
    already and gets a new root too."""
    same = " ".join(f"s{i}" for i in range(40))
    group = " ".join(f"g{i}" for i in range(40))
    old = [RefDoc(f"m{i}", same) for i in (3, 5, 7)] + [RefDoc(f"q{i}", group) for i in range(3, 9)]
    new = [RefDoc("m1", same), RefDoc("m9", same), RefDoc("q0", group)]
    settings = {"bucket_cap": 4}
    run_step(spark, settings, write_segment(tmp_path / "old.jsonl", old), tmp_path / "old", None)
    chained = run_step(spark, settings, write_segment(tmp_path / "new.jsonl", new), tmp_path / "up", tmp_path / "old")
    fresh = run_step(spark, settings, write_segment(tmp_path / "all.jsonl", old + new), tmp_path / "fresh", None)
    assert chained["pairs"] == fresh["pairs"]
    assert set(chained["pairs"]) == {("m1", x) for x in ("m3", "m5", "m7", "m9")} | {
        ("q0", f"q{i}") for i in range(3, 9)}
    assert chained["clusters"] == fresh["clusters"]
    metrics = json.loads((tmp_path / "up" / "metrics.json").read_text())["stages"]
    # m3-m5, m3-m7, m5-m7 (their buckets now past the cap), q3-q4 ... q3-q8 (q0 the new root)
    assert metrics["pairs"]["withdrawn_pairs"] == 8
    assert metrics["clusters"]["rebuilt_clusters"] == 2


def test_an_update_refuses_other_settings_and_other_jobs(tmp_path):
    prev = tmp_path / "prev"
    prev.mkdir()
    from quiltdetect.documents.table import DEFINITIONS

    config = {n: getattr(NearDupConfig(), n) for n in ("algorithm", "k", "wrap", "resemblance_threshold",
                                                      "containment_threshold", "lsh_bands", "lsh_rows",
                                                      "b_threshold", "c_threshold", "combined_c_threshold",
                                                      "bucket_cap")}
    (prev / COMPLETE).write_text(json.dumps({"job": "neardup", "config": config, "definitions": DEFINITIONS}))
    with pytest.raises(ConfigError, match="-k is 5 but the previous run .* used 4"):
        NearDupJob(NearDupConfig(inputs=["x"], output="o", k=5).validate()).open_previous(None, str(prev))
    with pytest.raises(ConfigError, match="--algorithm is 'combined' but"):
        NearDupJob(merge_settings(NearDupConfig, PRESETS["henzinger-calibrated"]).validate(need_io=False)).open_previous(None, str(prev))
    with pytest.raises(ConfigError, match="has no near-duplicate state"):
        NearDupJob(NearDupConfig(inputs=["x"], output="o").validate()).open_previous(None, str(prev))
    # a run of an older version: every state table, but its bucket rows one row per entry
    for name in kept_state("lsh"):
        table = prev / work_table(name if name != "neardup-buckets-lsh-2" else "neardup-buckets-lsh")
        if name.endswith(".json"):
            table.parent.mkdir(parents=True, exist_ok=True)
            table.write_text("{}")
        else:
            table.mkdir(parents=True, exist_ok=True)
            (table / "_SUCCESS").write_text("")
    with pytest.raises(ConfigError, match=r"has no near-duplicate state \(_quiltdetect/work/neardup-buckets-lsh-2\); "
                                          "it was made by an older version: run afresh once"):
        NearDupJob(NearDupConfig(inputs=["x"], output="o").validate()).open_previous(None, str(prev))
    (prev / COMPLETE).write_text(json.dumps({"job": "quilts", "config": {}, "definitions": DEFINITIONS}))
    with pytest.raises(ConfigError, match="holds a quilts run; an update extends a neardup run"):
        NearDupJob(NearDupConfig(inputs=["x"], output="o").validate()).open_previous(None, str(prev))
    with pytest.raises(ConfigError, match="is the --previous run"):
        NearDupConfig(inputs=["x"], output=str(prev), previous=str(prev) + "/").validate()


@pytest.mark.parametrize("segment_dir", ["aa_new", "zz_new"])
def test_a_repeated_doc_id_keeps_the_earliest_runs_record_in_an_update_and_a_fresh_run(spark, tmp_path, segment_dir):
    """definitions §0: a segment repeating doc_ids with new text, its path sorting before the
    archive's or after it: the update and a fresh run given the archive first keep the archive's
    records, so their pairs, clusters, kept pages and drops are the same."""
    base = " ".join(f"w{i}" for i in range(60))
    archive = [RefDoc(f"a{i}", base + f" v{i}" * (i % 3), f"http://h{i}.org/", (), "2021-03-01T00:00:00Z")
               for i in range(6)]
    other = " ".join(f"x{i}" for i in range(60))
    repeated = [RefDoc(f"a{i}", other + f" y{i}", f"http://r{i}.org/", (), "2020-01-01T00:00:00Z") for i in (0, 2)]
    new = [RefDoc("b0", other, "http://b.org/", (), "2021-04-01T00:00:00Z")]
    (tmp_path / "mm_old").mkdir()
    (tmp_path / segment_dir).mkdir()
    old_dir = str(Path(write_segment(tmp_path / "mm_old" / "s.jsonl", archive)).parent)
    new_dir = str(Path(write_segment(tmp_path / segment_dir / "s.jsonl", [*repeated, *new])).parent)

    def run(inputs: list[str], output: str, previous: str = "") -> dict:
        cfg = merge_settings(NearDupConfig, {"inputs": inputs, "output": str(tmp_path / output), "top": 0,
                                             "previous": previous})
        NearDupJob.run(spark, cfg.validate())
        rows = lambda name: [r.asDict() for r in spark.read.parquet(str(tmp_path / output / name)).collect()]  # noqa: E731
        return {"docs": {r["doc_id"]: r["text"] for r in rows("docs")},
                "pairs": sorted((r["doc_id_a"], r["doc_id_b"], r["resemblance"]) for r in rows("pairs")),
                "clusters": sorted((r["doc_id"], r["cluster_id"]) for r in rows("clusters")),
                "kept": sorted(r["doc_id"] for r in rows("kept")),
                "duplicate_of": sorted((r["doc_id"], r["duplicate_of"]) for r in rows("duplicate_of"))}

    run([old_dir], "r1")
    update = run([new_dir], "r2", previous=str(tmp_path / "r1"))
    fresh = run([old_dir, new_dir], "fresh")
    assert fresh["docs"]["a0"] == archive[0].text and fresh["docs"]["b0"] == new[0].text
    assert update == fresh
    assert fresh["duplicate_of"] and all(a.startswith("a") for a, _ in fresh["duplicate_of"])
