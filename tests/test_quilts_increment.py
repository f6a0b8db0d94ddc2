"""Incremental quilt detection (``--previous``): a chain of updates equals a fresh run over
everything so far, at every step, for each foreign rule; the doc_id rule; the refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_quilts_parity import assert_reference, corpus, corpus_rows
from tiers import examples, parameter_cases

from quiltdetect.common.config import ConfigError, merge_settings
from quiltdetect.common.finished import resolve_previous
from quiltdetect.documents.table import DEFINITIONS
from quiltdetect.documents.urls import domain_of, host_of
from quiltdetect.quilts.config import QuiltConfig
from quiltdetect.quilts.increment import previous_grams
from quiltdetect.quilts.job import QuiltsJob
from quiltdetect.quilts.reference import RefDoc, kgrams, reference_quilts

# One setting per foreign rule; the counting mode and phi ride along.
PARAMETERS = [
    dict(k=2, m=3, c=1, theta=0.3, foreign="host"),
    dict(k=3, m=3, c=2, theta=0.2, foreign="none", count_occurrences=True),
    dict(k=2, m=4, c=1, theta=0.0, foreign="ip"),
    dict(k=3, m=5, c=1, theta=0.5, foreign="domain", phi=0.2),
]


def write_rows(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def run_step(spark, cfg: QuiltConfig, inputs: str, output: Path, previous: Path | None, overwrite: bool = True):
    """One run of the chain: fresh when ``previous`` is None, else an update of it."""
    cfg.inputs, cfg.output, cfg.overwrite, cfg.top = [inputs], str(output), overwrite, 0
    cfg.previous = str(previous) if previous else ""
    result = QuiltsJob.run(spark, cfg.validate())
    quilts = {r["doc_id"]: r for r in (x.asDict(recursive=True) for x in spark.read.parquet(str(output / "quilts")).collect())}
    stats = {r["doc_id"]: r for r in (x.asDict() for x in spark.read.parquet(str(output / "doc_stats")).collect())}
    return result, quilts, stats


def may_change(old: list[RefDoc], new: list[RefDoc], cfg: QuiltConfig) -> set[str]:
    """The old documents (with grams) whose figures adding ``new`` may change, by definition:
    those whose patch grams change, and the patchy ones a patch gram of which gains holders."""
    grams = {d.doc_id: set(kgrams(d.text, cfg.k)) for d in [*old, *new]}
    holders: dict[tuple, set[str]] = {}
    for doc_id, gs in grams.items():
        for g in gs:
            holders.setdefault(g, set()).add(doc_id)
    old_ids = {d.doc_id for d in old}
    after = reference_quilts([*old, *new], cfg.k, cfg.m, cfg.theta, cfg.foreign, cfg.count_occurrences, phi=cfg.phi)
    changed = set()
    for d in old_ids:
        patch_before = {g for g in grams[d] if 1 < len(holders[g] & old_ids) <= cfg.m}
        patch_after = {g for g in grams[d] if 1 < len(holders[g]) <= cfg.m}
        patchy = d in after and after[d].patchfrac >= cfg.theta and after[d].n_patch_grams > 0
        gained = any(holders[g] - old_ids for g in patch_before & patch_after)
        if grams[d] and (patch_before != patch_after or (patchy and gained)):
            changed.add(d)
    return changed


@pytest.mark.spark
@pytest.mark.parametrize(("params", "budget"), parameter_cases(PARAMETERS, 1, 1))
def test_chain_of_updates_equals_a_fresh_run(spark, tmp_path_factory, params, budget):
    examples(budget)(given(data=st.data())(check_chain))(spark, tmp_path_factory, params)


def run_counts(docs: list[RefDoc], cfg: QuiltConfig) -> dict[str, int]:
    """The patch_grams stage's counts over ``docs``, by definition: distinct grams, patch grams
    (1 < df <= m) and their (document, gram) pairs."""
    df: dict[tuple, int] = {}
    for d in docs:
        for g in set(kgrams(d.text, cfg.k)):
            df[g] = df.get(g, 0) + 1
    patch = [n for n in df.values() if 1 < n <= cfg.m]
    return {"distinct_grams": len(df), "patch_grams": len(patch), "doc_patch_grams": sum(patch)}


def check_chain(spark, tmp_path_factory, params, data):
    """Split random corpora into 2-4 segments at random (a page may land after pages stitched
    from it or before them); run the first, update with each next one, and after every step
    compare with the reference over all pages so far."""
    corpora = data.draw(st.lists(corpus(), min_size=4, max_size=10), label="corpora")
    rows, ref_docs = corpus_rows(corpora)
    n_segments = data.draw(st.integers(2, 4), label="segments")
    segment_of = data.draw(st.lists(st.integers(0, n_segments - 1), min_size=len(rows), max_size=len(rows)),
                           label="segment of each page")
    if len(set(segment_of)) == 1:  # at least one update
        segment_of[-1] = 1 - segment_of[-1]
    used = sorted(set(segment_of))  # segments in their order, the empty ones left out
    segment_of, n_segments = [used.index(g) for g in segment_of], len(used)
    tmp = tmp_path_factory.mktemp("chain")
    previous = None
    for s in range(n_segments):
        seen = [i for i, g in enumerate(segment_of) if g <= s]
        inputs = write_rows(tmp / f"segment{s}.jsonl", [rows[i] for i in range(len(rows)) if segment_of[i] == s])
        cfg = merge_settings(QuiltConfig, params).validate(need_io=False)
        result, quilts, stats = run_step(spark, cfg, inputs, tmp / f"run{s}", previous)
        assert_reference(quilts, stats, [ref_docs[i] for i in seen], cfg)
        # an update's counts are the union's, as a fresh run's
        stage = result.metrics.stages["patch_grams"]
        assert {name: stage[name] for name in ("distinct_grams", "patch_grams", "doc_patch_grams")} == run_counts(
            [ref_docs[i] for i in seen], cfg)
        if previous is not None:
            ingest = result.metrics.stages["ingest"]
            assert ingest["new_documents"] == sum(1 for g in segment_of if g == s)
            assert ingest["documents"] == len(seen) and ingest["already_seen"] == 0
            # same settings: only the old documents the new ones may change are recomputed
            before = [ref_docs[i] for i in seen if segment_of[i] < s]
            expected = may_change(before, [ref_docs[i] for i in seen if segment_of[i] == s], cfg)
            assert result.metrics.stages["patchfrac"]["recomputed_old_documents"] == len(expected)
        previous = tmp / f"run{s}"
    assert n_segments >= 2


@pytest.mark.spark
def test_an_update_recomputes_old_pages_whose_patch_grams_change_or_that_are_patchy_and_gain_sources(
        spark, tmp_path):
    """k = 2, m = 3, theta = 0.5. The new page c shares "alpha beta" with a and b (df 2 -> 3:
    a patch gram before and after, gaining a holder) and "nu xi" with d and e (likewise); the new
    pages f and h take "rho tau" (e and g, df 2) past m. a and b stay below theta with the same
    patch grams, so neither their figures nor their covers can change: not recomputed. d is
    patchy, so its cover may now pick c: recomputed. e and g lose a patch gram: recomputed."""
    pages = {
        "a": "alpha beta gamma delta epsilon zeta eta theta iota kappa",
        "b": "alpha beta lambda mu",
        "d": "nu xi omicron pi",
        "e": "nu xi omicron pi rho tau",
        "g": "rho tau upsilon",
        "c": "alpha beta nu xi sigma",
        "f": "phi rho tau chi rho tau",
        "h": "psi rho tau",
    }
    rows = [{"id": i, "url": f"http://h{i}.example.com/", "text": t} for i, t in pages.items()]
    ref_docs = [RefDoc(r["id"], r["text"], r["url"], host_of(r["url"]), domain_of(host_of(r["url"]))) for r in rows]
    cfg = merge_settings(QuiltConfig, dict(k=2, m=3, c=1, theta=0.5))
    run_step(spark, cfg, write_rows(tmp_path / "old.jsonl", rows[:5]), tmp_path / "r1", None)
    result, quilts, stats = run_step(spark, cfg, write_rows(tmp_path / "new.jsonl", rows[5:]), tmp_path / "r2",
                                     tmp_path / "r1")
    assert may_change(ref_docs[:5], ref_docs[5:], cfg.validate(need_io=False)) == {"d", "e", "g"}
    assert result.metrics.stages["patchfrac"]["recomputed_old_documents"] == 3
    assert_reference(quilts, stats, ref_docs, cfg.validate(need_io=False))


@pytest.mark.spark
def test_update_keeps_the_old_page_of_a_doc_id_and_may_change_c_theta_phi(spark, tmp_path):
    """A doc_id already in the previous run keeps its old text (counted as already_seen); an
    update may use other c, theta and phi than the run it extends."""
    corpora = [[{"id": i, "url": f"http://h{n}.example.com/{i}", "ip": None, "tokens": tokens, "seps": [" "],
                 "upper": False} for n, (i, tokens) in enumerate(pages)]
               for pages in ([("a", ["w1", "w2", "w3", "w4", "w5", "w6"]), ("b", ["w4", "w5", "w6", "w7", "w8"]),
                              ("c", ["w1", "w2", "w3", "w7", "w8", "w9"])],)]
    rows, ref_docs = corpus_rows(corpora)
    first = write_rows(tmp_path / "first.jsonl", rows[:2])
    recrawl = dict(rows[0], text="000/a entirely other words now")
    second = write_rows(tmp_path / "second.jsonl", [recrawl, rows[2]])
    base = dict(k=2, m=3, c=2, theta=0.5)
    run_step(spark, merge_settings(QuiltConfig, base), first, tmp_path / "r1", None)
    changed = merge_settings(QuiltConfig, {**base, "c": 1, "theta": 0.2, "phi": 0.1})
    result, quilts, stats = run_step(spark, changed, second, tmp_path / "r2", tmp_path / "r1")
    ingest = result.metrics.stages["ingest"]
    assert (ingest["already_seen"], ingest["new_documents"], ingest["previous_documents"]) == (1, 1, 2)
    assert "recomputed_old_documents" not in result.metrics.stages["patchfrac"]  # other settings: all recomputed
    assert_reference(quilts, stats, ref_docs, changed.validate(need_io=False))
    assert quilts, "the example must have a quilt for the changed settings to matter"
    assert (tmp_path / "r1" / "_COMPLETE").exists()  # the previous run is only read


@pytest.mark.spark
def test_update_breaks_ties_on_the_smallest_doc_id_not_on_arrival(spark, tmp_path):
    """Three copies of a page: each one's cover is a tie between the other two, won by the
    smaller doc_id. The copy "a" arrives in the update, after "b" and "t": keyed after them,
    it must still win the ties (the cover compares ranks over the union, not keys)."""
    words = ["w1", "w2", "w3", "w4", "w5", "w6"]
    corpora = [[{"id": i, "url": f"http://h{n}.example.com/{i}", "ip": None, "tokens": words, "seps": [" "],
                 "upper": False} for n, i in enumerate(("a", "b", "t"))]]
    rows, ref_docs = corpus_rows(corpora)
    first = write_rows(tmp_path / "first.jsonl", rows[1:])
    second = write_rows(tmp_path / "second.jsonl", rows[:1])
    cfg = merge_settings(QuiltConfig, dict(k=2, m=3, c=1, theta=0.5))
    run_step(spark, cfg, first, tmp_path / "r1", None)
    _, quilts, stats = run_step(spark, cfg, second, tmp_path / "r2", tmp_path / "r1")
    assert_reference(quilts, stats, ref_docs, cfg.validate(need_io=False))
    a, b, t = (r["id"] for r in rows)
    assert [s["doc_id"] for s in quilts[t]["sources"]] == [a]
    assert [s["doc_id"] for s in quilts[b]["sources"]] == [a]


def _finished_run(root: Path, job: str = "quilts", **config) -> Path:
    """A directory that looks like a finished run with a gram state (no Spark needed)."""
    cfg = {"k": 5, "count_occurrences": False, "collapse_near_duplicates": False, **config}
    (root / "_quiltdetect" / "stages").mkdir(parents=True)
    (root / "_COMPLETE").write_text(json.dumps({"job": job, "config": cfg, "inputs_key": "x", "run_id": "r",
                                                "definitions": DEFINITIONS}))
    name = f"gram-buckets-k{cfg['k']}"
    (root / "_quiltdetect" / "stages" / f"{name}.json").write_text(json.dumps({"counts": {"gram_buckets": 64}}))
    (root / "_quiltdetect" / "work" / name).mkdir(parents=True)
    (root / "_quiltdetect" / "work" / name / "_SUCCESS").write_text("")
    return root


def test_update_refuses_what_it_cannot_extend(tmp_path):
    """Refusals name the option and what to do: another k or counting mode than the previous
    run, near-duplicate collapsing, the previous output as --output, a run that is not a
    finished quilt run."""
    previous = _finished_run(tmp_path / "prev")
    cfg = QuiltConfig(inputs=["x"], output=str(tmp_path / "out"), previous=str(previous))
    cfg = cfg.validate()
    assert previous_grams(QuiltsJob(cfg).open_previous(None, str(previous)), cfg).gram_buckets == 64
    with pytest.raises(ConfigError, match="-k is 3 but the previous run .* used 5"):
        QuiltsJob(QuiltConfig(inputs=["x"], output="o", k=3).validate()).open_previous(None, str(previous))
    with pytest.raises(ConfigError, match="--count-occurrences is True"):
        QuiltsJob(QuiltConfig(inputs=["x"], output="o", count_occurrences=True).validate()).open_previous(None, str(previous))
    with pytest.raises(ConfigError, match="--collapse-near-duplicates cannot update"):
        QuiltConfig(inputs=["x"], output="o", previous=str(previous), collapse_near_duplicates=True).validate()
    with pytest.raises(ConfigError, match="is the --previous run"):
        QuiltConfig(inputs=["x"], output=str(previous) + "/", previous=str(previous)).validate()
    with pytest.raises(ConfigError, match="not a finished quiltdetect output"):
        QuiltsJob(QuiltConfig(inputs=["x"], output="o").validate()).open_previous(None, str(tmp_path / "none"))
    other = _finished_run(tmp_path / "neardup", job="neardup")
    with pytest.raises(ConfigError, match="holds a neardup run"):
        QuiltsJob(QuiltConfig(inputs=["x"], output="o").validate()).open_previous(None, str(other))


def test_a_previous_glob_picks_the_last_complete_run_before_the_output(tmp_path, monkeypatch):
    """``--previous '<root>/*/quilts'`` (the scheduled DAG): the last complete run in path order,
    never the output itself nor a later date; none complete: '' (the run starts afresh)."""
    pattern = str(tmp_path / "*" / "quilts")
    assert resolve_previous(None, pattern, str(tmp_path / "20260105" / "quilts")) == ""
    for day in ("20260105", "20260112", "20260119"):
        _finished_run(tmp_path / day / "quilts")
    (tmp_path / "20260126" / "quilts").mkdir(parents=True)  # a run that died: no _COMPLETE
    assert resolve_previous(None, pattern, str(tmp_path / "20260202" / "quilts")) == str(tmp_path / "20260119" / "quilts")
    assert resolve_previous(None, pattern, str(tmp_path / "20260119" / "quilts/")) == str(tmp_path / "20260112" / "quilts")
    assert resolve_previous(None, pattern, str(tmp_path / "20260112" / "quilts")) == str(tmp_path / "20260105" / "quilts")
    assert resolve_previous(None, pattern, "/elsewhere/out") == str(tmp_path / "20260119" / "quilts")
    assert resolve_previous(None, str(tmp_path / "x"), "o") == str(tmp_path / "x")  # not a glob: as given
    monkeypatch.chdir(tmp_path)  # a relative glob and an absolute output name the same places
    assert resolve_previous(None, "*/quilts", str(tmp_path / "20260119" / "quilts")) == "20260112/quilts"


class Killed(BaseException):
    """Stands for SIGKILL at an exact point (as in tests/test_reliability.py)."""


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.spark
def test_an_update_killed_leaves_the_previous_run_alone_and_resumes(spark, tmp_path, monkeypatch):
    """Killed while its last table is being written: the previous run is byte for byte as it
    was, and the rerun reuses the update's finished stages and equals the reference."""
    from quiltdetect.common import fs

    pages = [("a", "w1 w2 w3 w4 w5 w6"), ("b", "w4 w5 w6 w7 w8 w9"), ("c", "w1 w2 w3 w7 w8 w9 w10"),
             ("d", "w9 w10 w11 w1 w2 w3"), ("e", "w5 w6 w7 w10 w11 w12")]
    rows = [{"id": i, "url": f"http://h{n}.example.com/", "text": t} for n, (i, t) in enumerate(pages)]
    first, second = write_rows(tmp_path / "first.jsonl", rows[:3]), write_rows(tmp_path / "second.jsonl", rows[3:])
    params = dict(k=2, m=3, c=1, theta=0.2)
    run_step(spark, merge_settings(QuiltConfig, params), first, tmp_path / "r1", None)
    before = _snapshot(tmp_path / "r1")
    original = fs.replace

    def dies_in_last_table(spark_, source: str, target: str) -> None:
        if target.endswith("/doc_stats"):
            raise Killed
        return original(spark_, source, target)

    monkeypatch.setattr(fs, "replace", dies_in_last_table)
    with pytest.raises(Killed):
        run_step(spark, merge_settings(QuiltConfig, params), second, tmp_path / "r2", tmp_path / "r1", False)
    assert not (tmp_path / "r2" / "_COMPLETE").exists()
    monkeypatch.setattr(fs, "replace", original)
    result, quilts, stats = run_step(spark, merge_settings(QuiltConfig, params), second, tmp_path / "r2",
                                     tmp_path / "r1", False)
    assert result.metrics.stages["ingest"]["reused"] is True and result.metrics.stages["grams"]["reused"] is True
    assert _snapshot(tmp_path / "r1") == before
    ref_docs = [RefDoc(r["id"], r["text"], r["url"], host_of(r["url"]),
                                            domain_of(host_of(r["url"]))) for r in rows]
    assert_reference(quilts, stats, ref_docs, merge_settings(QuiltConfig, params).validate(need_io=False))
    assert quilts


@pytest.mark.spark
def test_an_update_with_no_new_pages_keeps_the_previous_results(spark, tmp_path):
    """A segment whose every doc_id RUN already holds (a week that re-crawled old pages only):
    nothing is recomputed and the results are the previous run's."""
    corpora = [[{"id": i, "url": f"http://h{i}.example.com/", "ip": None, "tokens": t, "seps": [" "], "upper": False}
                for i, t in (("a", ["w1", "w2", "w3", "w4"]), ("b", ["w2", "w3", "w4", "w5"]),
                             ("c", ["w1", "w2", "w4", "w5"]))]]
    rows, ref_docs = corpus_rows(corpora)
    inputs = write_rows(tmp_path / "week.jsonl", rows)
    params = dict(k=2, m=3, c=1, theta=0.3)
    _, before, _ = run_step(spark, merge_settings(QuiltConfig, params), inputs, tmp_path / "r1", None)
    result, quilts, stats = run_step(spark, merge_settings(QuiltConfig, params), inputs, tmp_path / "r2", tmp_path / "r1")
    stages = result.metrics.stages
    assert (stages["ingest"]["already_seen"], stages["ingest"]["new_documents"]) == (3, 0)
    assert stages["patchfrac"]["recomputed_documents"] == 0
    assert quilts == before and quilts
    assert_reference(quilts, stats, ref_docs, merge_settings(QuiltConfig, params).validate(need_io=False))


@pytest.mark.spark
def test_updates_add_layers_of_grams_merged_without_a_shuffle_and_rewrite_an_older_table_once(spark, tmp_path):
    """The grams stage of an update writes only the new pages' pairs: the previous gram table's
    files are linked (the same files, not rewritten), a layer is added per update, and
    patch_grams groups the layers by gram bucket without shuffling them (a bucketed read). A
    run made before the gram state was bucketed (no ``spark_buckets`` in its marker) has its
    table merged with the new pairs and written once, bucketed, as one layer. Every step equals
    the reference."""
    from quiltdetect.common.folder import OutputFolder
    from quiltdetect.common.foreign import ForeignRule
    from quiltdetect.quilts.increment import _gram_table, gram_table_name
    from quiltdetect.quilts.patch_grams import doc_buckets

    pages = [("a", "w1 w2 w3 w4 w5 w6"), ("b", "w4 w5 w6 w7 w8 w9"), ("c", "w1 w2 w3 w7 w8 w9 w10"),
             ("d", "w9 w10 w11 w1 w2 w3"), ("e", "w5 w6 w7 w10 w11 w12"), ("f", "w1 w2 w3 w11 w12 w13")]
    rows = [{"id": i, "url": f"http://h{n}.example.com/", "text": t} for n, (i, t) in enumerate(pages)]
    params = dict(k=2, m=3, c=1, theta=0.2)
    cfg = merge_settings(QuiltConfig, params).validate(need_io=False)
    table = f"_quiltdetect/work/{gram_table_name(cfg)}"
    previous = None
    for step, segment in enumerate((rows[:2], rows[2:4], rows[4:])):
        inputs = write_rows(tmp_path / f"s{step}.jsonl", segment)
        output = tmp_path / f"r{step}"
        result, quilts, stats = run_step(spark, merge_settings(QuiltConfig, params), inputs, output, previous)
        grams = result.metrics.stages["grams"]
        assert grams["spark_buckets"] == int(spark.conf.get("spark.sql.shuffle.partitions"))
        if step == 0:  # as a version before layers left it: its table is then read as a plain table
            assert grams["layers"] == 1
            marker = output / "_quiltdetect" / "stages" / f"{gram_table_name(cfg)}.json"
            done = json.loads(marker.read_text())
            del done["counts"]["spark_buckets"], done["counts"]["layers"]
            marker.write_text(json.dumps(done))
        else:
            before = {p.stat().st_ino for p in (previous / table).glob("*.parquet")}
            after = {p.stat().st_ino for p in (output / table).glob("*.parquet")}
            if step == 1:  # the older table merged with the new pairs and written again: one layer
                assert grams["layers"] == 1 and before and not before & after
            else:  # the previous files themselves, and the new layer's
                assert grams["layers"] == 2 and before and before < after
        ref_docs = [RefDoc(r["id"], r["text"], r["url"], host_of(r["url"]), domain_of(host_of(r["url"])))
                    for r in rows[: 2 * (step + 1)]]
        assert_reference(quilts, stats, ref_docs, cfg)
        previous = output
    assert quilts

    layered = _gram_table(OutputFolder(spark, str(previous)), table, grams)
    assert layered.layered
    parts = doc_buckets(layered.frame, spark.createDataFrame([], "doc_key long, url string"), cfg.m, layered.buckets,
                        16, with_counts=False, foreign=ForeignRule(), layered=True)
    plan = parts._jdf.queryExecution().executedPlan().toString()
    assert "hashpartitioning(dbucket" in plan and "hashpartitioning(bucket" not in plan, plan


def _tables(spark, output: Path) -> dict:
    """docs/ (doc_id -> text), doc_stats/ and quilts/ of a run, as plain values."""
    rows = lambda name: [r.asDict(recursive=True) for r in spark.read.parquet(str(output / name)).collect()]  # noqa: E731
    return {"docs": {r["doc_id"]: r["text"] for r in rows("docs")},
            "doc_stats": sorted(rows("doc_stats"), key=lambda r: r["doc_id"]),
            "quilts": sorted(rows("quilts"), key=lambda r: r["doc_id"])}


@pytest.mark.spark
@pytest.mark.parametrize("segment_dir", ["aa_new", "zz_new"])
def test_a_repeated_doc_id_keeps_the_earliest_runs_record_in_an_update_and_a_fresh_run(spark, tmp_path, segment_dir):
    """definitions §0: a segment that repeats doc_ids with new text, its path sorting before the
    archive's (``aa_new/`` beside ``mm_old/``) or after it: the update keeps the archive's records,
    and so does a fresh run given the archive first (``--input mm_old --input SEGMENT``)."""
    archive = [{"id": f"a{i}", "url": f"http://h{i % 4}.example.com/{i}",
                "text": " ".join(f"w{i + j}" for j in range(6))} for i in range(10)]
    repeated = [{"id": f"a{i}", "url": f"http://h9.example.com/{i}", "text": " ".join(f"x{i + j}" for j in range(9))}
                for i in (0, 1, 2, 6)]
    new = [{"id": "b0", "url": "http://h5.example.com/b", "text": "w1 w2 w3 x2 x3 x4 w7 w8"}]
    (tmp_path / "mm_old").mkdir()
    (tmp_path / segment_dir).mkdir()
    old_dir = write_rows(tmp_path / "mm_old" / "s.jsonl", archive).rsplit("/", 1)[0]
    new_dir = write_rows(tmp_path / segment_dir / "s.jsonl", [*repeated, *new]).rsplit("/", 1)[0]
    params = dict(k=2, m=3, c=1, theta=0.3)

    def run(inputs: list[str], output: str, previous: str = "") -> dict:
        cfg = merge_settings(QuiltConfig, {**params, "inputs": inputs, "output": str(tmp_path / output),
                                           "previous": previous, "top": 0})
        QuiltsJob.run(spark, cfg.validate())
        return _tables(spark, tmp_path / output)

    run([old_dir], "r1")
    update = run([new_dir], "r2", previous=str(tmp_path / "r1"))
    fresh = run([old_dir, new_dir], "fresh")
    assert update["docs"] == fresh["docs"]
    assert {i: fresh["docs"][i] for i in ("a0", "a6", "b0")} == {"a0": archive[0]["text"], "a6": archive[6]["text"],
                                                                 "b0": new[0]["text"]}
    assert update["doc_stats"] == fresh["doc_stats"] and update["quilts"] == fresh["quilts"]
    assert fresh["quilts"], "the corpus must have quilts for their equality to matter"
