"""MWO kernels without Spark: rendering (Table 1 weights), the lossless filters, the config."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from quiltdetect.common.config import ConfigError, merge_settings
from quiltdetect.mwo.config import MwoConfig
from quiltdetect.mwo.filtering import (
    EPS,
    extended_prefix,
    mwo,
    mwo_batch,
    paper_prefix_length,
    positional_bound,
    positional_bounds,
    prefix_block,
    prefix_block_csr,
    prefix_length,
    shared_prefix_candidates,
    shares_enough,
    suffix_weights,
    suffix_weights_batch,
)
from quiltdetect.mwo.reference import brute_force_pairs, mwo_of
from quiltdetect.mwo.rendering import (
    FIELD_WEIGHTS,
    PageFields,
    normalise,
    render,
    render_batch,
    render_rows,
    term_weights,
    terms,
)

REPO = Path(__file__).resolve().parents[1]


def test_terms_drop_stop_words_and_stem():
    # (a Han character is a word of its own: definitions §0)
    assert terms("The pages were RUNNING over the duplicates_ and 東京") == ["page", "run", "duplic", "東", "京"]


def test_table_1_field_weights():
    page = PageFields(
        url="http://www.shop.example.com/bikes",
        title="Bike",
        headings=("bikes",),
        anchors=(("bike", "http://shop.example.com/x"), ("bike", "http://other.org/"), ("wheel", "/rel")),
        meta_keywords="bike",
        meta_description="wheels",
        text="bike wheel",
    )
    w = term_weights(page)
    # url 2 + title 2 + heading 2 + same-site anchor 1 + other-site anchor 0.5 + keywords 3 + text 1
    assert w["bike"] == pytest.approx(11.5)
    # relative anchor (same site by construction) 1 + description 3 + text 1
    assert w["wheel"] == pytest.approx(5.0)
    assert w["shop"] == w["exampl"] == w["http"] == w["www"] == pytest.approx(2.0)
    names, weights = render(page)
    assert names == sorted(w)
    assert math.fsum(weights) == pytest.approx(1.0)
    total = sum(w.values())
    assert dict(zip(names, weights, strict=True))["bike"] == pytest.approx(11.5 / total)


WORDS = st.lists(st.sampled_from(["dog", "dogs", "Running", "runs", "the", "and", "東京", "x1", "page"]),
                 max_size=40).map(" ".join)


@given(WORDS, WORDS, st.lists(WORDS, max_size=3), st.lists(st.tuples(WORDS, st.sampled_from(["/r", "http://o.org/"])),
                                                           max_size=3), WORDS, WORDS, WORDS)
@settings(max_examples=60, deadline=None)
def test_term_weights_equal_one_occurrence_at_a_time(url, title, headings, anchors, keywords, description, text):
    page = PageFields(url=f"http://e.com/{url}", title=title, headings=tuple(headings), anchors=tuple(anchors),
                      meta_keywords=keywords, meta_description=description, text=text)
    fields = [(page.url, "url"), (title, "title"), *((h, "heading") for h in headings),
              *((a, "anchor_same_site" if href == "/r" else "anchor_other_site") for a, href in anchors),
              (keywords, "meta_keywords"), (description, "meta_description"), (text, "text")]
    expected: dict[str, float] = {}
    for value, name in fields:  # the definition: every occurrence adds its field's weight
        for term in terms(value):
            expected[term] = expected.get(term, 0.0) + FIELD_WEIGHTS[name]
    assert term_weights(page) == expected  # exactly, not approximately
    names, weights = render(page)
    assert names == normalise(expected)[0] and np.array_equal(weights, normalise(expected)[1])


TEXTS = st.one_of(st.none(), WORDS, st.text(alphabet="aZ09_ -.'é€ßİΣσ中😀\u0301", max_size=30),
                 st.sampled_from(["The THE the", "running runs ran", "a an the"]))


@given(st.lists(st.tuples(TEXTS, TEXTS, st.one_of(st.none(), st.lists(TEXTS, max_size=3)),
                          st.one_of(st.none(), st.lists(st.tuples(TEXTS, st.sampled_from(["/r", "http://o.org/",
                                                                                          None])), max_size=3)),
                          TEXTS, TEXTS, TEXTS), max_size=8),
       st.sampled_from([0.0, 0.5, 0.9, 3.0]))
@settings(max_examples=200, deadline=None)
def test_render_batch_equals_render_rows(pages, min_weight_ratio):
    columns = ("url", "title", "headings", "anchors", "meta_keywords", "meta_description", "text")
    rows = [dict(zip(columns, page, strict=True)) for page in pages]
    for row in rows:
        if row["url"] is not None:
            row["url"] = f"http://e.com/{row['url']}"
        if row["anchors"] is not None:
            row["anchors"] = [{"text": text, "href": href} for text, href in row["anchors"]]
    batch = render_batch({c: [row[c] for row in rows] for c in columns}, min_weight_ratio)
    expected = [(i, names, weights) for i, (names, weights) in enumerate(render_rows(rows, min_weight_ratio))
                if names]
    assert batch.pages.tolist() == [i for i, _, _ in expected]
    terms_of = batch.terms.to_pylist()
    for j, (_, names, weights) in enumerate(expected):
        lo, hi = batch.offsets[j], batch.offsets[j + 1]
        assert terms_of[lo:hi] == names
        assert np.array_equal(batch.weights[lo:hi], weights)  # bit for bit


def test_anchor_site_compares_registered_domains():
    page = PageFields(url="http://a.example.co.uk/", anchors=(("x", "http://b.example.co.uk/"), ("y", "http://x.co.uk/")))
    w = term_weights(page)
    assert w["x"] == 1.0 and w["y"] == 0.5


def test_dynamic_threshold_drops_light_terms_and_renormalises():
    names, weights = normalise({"a": 10.0, "b": 1.0, "c": 9.0}, min_weight_ratio=0.5)
    # mean normalised weight 1/3; cut 1/6: b (0.05) goes, a and c are renormalised
    assert names == ["a", "c"]
    assert weights.tolist() == pytest.approx([10 / 19, 9 / 19])
    assert normalise({"a": 1.0, "b": 1.0}, 0.0)[0] == ["a", "b"]
    assert normalise({}, 0.5)[0] == []


def test_render_rows_reads_document_table_columns():
    row = {"url": "http://e.com/", "title": None, "headings": np.array(["Kettle"]),
           "anchors": np.array([{"text": "kettle", "href": "http://f.com/"}]), "meta_keywords": None,
           "meta_description": "", "text": "kettle"}
    (names, weights), = render_rows([row])
    assert dict(zip(names, weights, strict=True))["kettl"] == pytest.approx(3.5 / 9.5)  # url terms http, e, com weigh 2 each


def test_prefix_and_suffix_weights():
    w = np.array([0.1, 0.2, 0.3, 0.4])
    assert suffix_weights(w).tolist() == pytest.approx([1.0, 0.9, 0.7, 0.4])
    assert prefix_length(w, 0.5) == 3  # rem(2)=0.7 >= 0.5 > rem(3)=0.4
    assert prefix_length(w, 1.0) == 1
    assert prefix_length(w, 0.0) == 4
    assert paper_prefix_length(10, 0.5) == 6 and paper_prefix_length(1, 0.0) == 1


def test_mwo_is_the_sum_of_smaller_weights():
    ids_a, w_a = np.array([1, 3, 5]), np.array([0.2, 0.3, 0.5])
    ids_b, w_b = np.array([3, 5, 7]), np.array([0.6, 0.1, 0.3])
    assert mwo(ids_a, w_a, ids_b, w_b) == pytest.approx(0.3 + 0.1)
    assert mwo(ids_a, w_a, ids_a, w_a) == pytest.approx(1.0)
    assert mwo(ids_a, w_a, np.array([2]), np.array([1.0])) == 0.0


@st.composite
def weighted_corpus(draw):
    """Records over a small vocabulary, some of them perturbed copies of others."""
    vocab = [f"w{i}" for i in range(draw(st.integers(2, 14)))]
    records: dict[str, dict[str, float]] = {}
    for i in range(draw(st.integers(2, 10))):
        if records and draw(st.booleans()):
            base = dict(records[draw(st.sampled_from(sorted(records)))])
            for term in draw(st.lists(st.sampled_from(vocab), max_size=3)):
                base[term] = base.get(term, 0.0) + draw(st.sampled_from([0.5, 1.0, 2.0, 3.0]))
        else:
            chosen = draw(st.lists(st.sampled_from(vocab), min_size=1, max_size=len(vocab), unique=True))
            base = {x: draw(st.sampled_from([0.5, 1.0, 2.0, 3.0, 4.5])) for x in chosen}
        names, weights = normalise(base)
        records[f"d{i}"] = dict(zip(names, weights.tolist(), strict=True))
    return records


def canonical(records: dict[str, dict[str, float]]) -> tuple[dict[str, int], dict[str, tuple[np.ndarray, np.ndarray]]]:
    """Global order by increasing document frequency, ties by term; canonical records."""
    df: dict[str, int] = {}
    for rec in records.values():
        for x in rec:
            df[x] = df.get(x, 0) + 1
    order = {x: i for i, x in enumerate(sorted(df, key=lambda x: (df[x], x)))}
    canon = {}
    for d, rec in records.items():
        pairs = sorted((order[x], w) for x, w in rec.items())
        canon[d] = (np.array([p for p, _ in pairs], dtype=np.int64), np.array([w for _, w in pairs]))
    return order, canon


@settings(max_examples=300, deadline=None)
@given(weighted_corpus(), st.sampled_from([0.0, 0.1, 0.25, 0.3, 0.5, 0.6, 0.75, 0.9, 1.0]))
def test_filters_never_drop_a_pair_that_brute_force_accepts(records, t):
    _, canon = canonical(records)
    truth = brute_force_pairs(records, t)
    ids = sorted(records)
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            (ia, wa), (ib, wb) = canon[a], canon[b]
            value = mwo(ia, wa, ib, wb)
            assert value == mwo_of(records[a], records[b])  # exact rounding: bit for bit
            shared_prefix = set(ia[: prefix_length(wa, t)].tolist()) & set(ib[: prefix_length(wb, t)].tolist())
            if shared_prefix:
                assert positional_bound(ia, wa, ib, wb, t) >= value - EPS  # the bound is an upper bound
            if (a, b) in truth:
                assert shared_prefix, (a, b, t)
                assert positional_bound(ia, wa, ib, wb, t) >= t - EPS


@settings(max_examples=300, deadline=None)
@given(weighted_corpus(), st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.75, 0.9, 1.0]), st.integers(1, 6))
def test_ell_prefix_filter_never_drops_a_pair(records, t, ell):
    """Pairs with MWO >= t share min(l_a, l_b) extended-prefix terms, and the bound over
    extended prefixes still bounds MWO; the batch kernel equals ``mwo`` bit for bit."""
    _, canon = canonical(records)
    truth = brute_force_pairs(records, t)
    ids = sorted(records)
    pairs = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1:]]
    for a, b in pairs:
        (ia, wa), (ib, wb) = canon[a], canon[b]
        value = mwo(ia, wa, ib, wb)
        (n_a, _), (n_b, _) = extended_prefix(wa, t, ell), extended_prefix(wb, t, ell)
        if set(ia[:n_a].tolist()) & set(ib[:n_b].tolist()):
            assert positional_bound(ia, wa, ib, wb, t, ell) >= value - EPS
        if (a, b) in truth:
            assert shares_enough(ia, wa, ib, wb, t, ell), (a, b, t, ell)
            assert positional_bound(ia, wa, ib, wb, t, ell) >= t - EPS
    if pairs:
        side = [[canon[a] for a, _ in pairs], [canon[b] for _, b in pairs]]
        offsets = [np.concatenate(([0], np.cumsum([len(i) for i, _ in s]))) for s in side]
        kept, values = mwo_batch(offsets[0], np.concatenate([i for i, _ in side[0]]),
                                 np.concatenate([w for _, w in side[0]]), offsets[1],
                                 np.concatenate([i for i, _ in side[1]]), np.concatenate([w for _, w in side[1]]), t)
        assert {pairs[k]: v for k, v in zip(kept.tolist(), values.tolist(), strict=True)} == truth


@settings(max_examples=200, deadline=None)
@given(weighted_corpus(), st.sampled_from([0.0, 0.3, 0.5, 0.8, 1.0]), st.integers(1, 6), st.integers(1, 4))
def test_block_filters_equal_the_pairwise_ones(records, t, ell, block_size):
    """Blocks of records: the sparse-product l-prefix filter and the vectorised positional bound
    select exactly the pairs ``shares_enough`` and ``positional_bound`` select, pair by pair."""
    order, canon = canonical(records)
    ids = sorted(records)
    blocks = [ids[i:i + block_size] for i in range(0, len(ids), block_size)]
    built = [prefix_block([canon[d][1] for d in blk], [canon[d][0] for d in blk], t, ell) for blk in blocks]
    got, want = set(), set()
    prefix = {d: set(canon[d][0][:extended_prefix(canon[d][1], t, ell)[0]].tolist()) for d in ids}
    any_shared = 0  # pairs sharing an extended-prefix term: what the blocks report as ``sharing``
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            (ia, wa), (ib, wb) = canon[a], canon[b]
            any_shared += bool(prefix[a] & prefix[b])
            if shares_enough(ia, wa, ib, wb, t, ell) and positional_bound(ia, wa, ib, wb, t, ell) >= t - EPS:
                want.add((a, b))
    sharing = 0
    for x, (blk_a, arr_a) in enumerate(zip(blocks, built, strict=True)):
        for blk_b, arr_b in list(zip(blocks, built, strict=True))[x:]:
            same = blk_a is blk_b
            rows_a, rows_b, n_sharing = shared_prefix_candidates(arr_a["offsets"], arr_a["terms"], arr_a["ells"],
                                                                 arr_b["offsets"], arr_b["terms"], arr_b["ells"],
                                                                 len(order), same)
            sharing += n_sharing
            bound = positional_bounds(arr_a["offsets"], arr_a["terms"], arr_a["weights"], arr_a["afters"],
                                      arr_b["offsets"], arr_b["terms"], arr_b["weights"], arr_b["afters"],
                                      rows_a, rows_b)
            for ra, rb, value in zip(rows_a.tolist(), rows_b.tolist(), bound.tolist(), strict=True):
                pa_, pb_ = canon[blk_a[ra]], canon[blk_b[rb]]
                assert value == pytest.approx(positional_bound(*pa_, *pb_, t, ell), abs=1e-12)
                if value >= t - EPS:
                    got.add((blk_a[ra], blk_b[rb]))
    assert got == want
    assert sharing == any_shared
    assert set(brute_force_pairs(records, t)) <= got


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0, 4.5, 0.125]), max_size=12), max_size=12),
       st.sampled_from([0.0, 0.3, 0.5, 0.8, 1.0]), st.integers(1, 6))
def test_batch_prefixes_equal_one_record_at_a_time(raw, t, ell):
    """The CSR kernels (one matrix per record length) give each record's suffix weights and
    extended prefix bit for bit as the per-record definitions do."""
    weights = [normalise({f"x{i}": w for i, w in enumerate(r)})[1] for r in raw]
    ids = [np.arange(len(w), dtype=np.int32) * 3 for w in weights]
    offsets = np.concatenate(([0], np.cumsum([len(w) for w in weights]))).astype(np.int64)
    flat_w = np.concatenate([np.zeros(0), *weights])
    rem = suffix_weights_batch(offsets, flat_w)
    block = prefix_block_csr(offsets, np.concatenate([np.zeros(0, np.int32), *ids]), flat_w, t, ell)
    for r, w in enumerate(weights):
        assert np.array_equal(rem[offsets[r]:offsets[r + 1]], suffix_weights(w))
        n, ell_r = extended_prefix(w, t, ell)
        lo, hi = block["offsets"][r], block["offsets"][r + 1]
        assert (hi - lo, block["ells"][r]) == (n, ell_r)
        assert np.array_equal(block["terms"][lo:hi], ids[r][:n])
        assert np.array_equal(block["weights"][lo:hi], w[:n])
        assert np.array_equal(block["afters"][lo:hi], (suffix_weights(w) - w)[:n])


def test_ell_prefix_lengths():
    w = np.array([0.1, 0.2, 0.3, 0.4])  # rem = 1.0, 0.9, 0.7, 0.4
    assert extended_prefix(w, 0.5, 1) == (prefix_length(w, 0.5), 1) == (3, 1)
    assert extended_prefix(w, 0.5, 2) == (4, 2)  # rem >= 0.5 - 0.4 everywhere
    assert extended_prefix(w, 0.5, 3) == (4, 2)  # 0.4 + 0.3 >= 0.5: such a pair may share only 2 terms
    assert extended_prefix(w, 0.0, 5) == (4, 1)  # t = 0: one shared term suffices


def test_paper_count_prefix_is_lossy_for_mwo():
    """Why the shipped filters bound weights: the paper's count prefix drops a true pair."""
    # r: nine rare light terms and one heavy common term h; s shares only h (last in the order)
    r = {f"a{i}": 0.02 for i in range(9)} | {"h": 0.82}
    records = {"r": r, "s": {"h": 0.9, "z": 0.1}}
    _, canon = canonical(records)
    (ir, wr), (is_, ws) = canon["r"], canon["s"]
    t = 0.5
    assert mwo(ir, wr, is_, ws) >= t
    n_r, n_s = paper_prefix_length(len(ir), t), paper_prefix_length(len(is_), t)
    assert not set(ir[:n_r].tolist()) & set(is_[:n_s].tolist())  # paper: pair lost
    assert set(ir[: prefix_length(wr, t)].tolist()) & set(is_[: prefix_length(ws, t)].tolist())  # ours: kept


def test_conf_file_equals_dataclass_defaults():
    conf = yaml.safe_load((REPO / "conf" / "mwo.yaml").read_text())
    assert conf == dataclasses.asdict(MwoConfig())
    assert conf["spark"]["spark.driver.defaultJavaOptions"] == ""  # both JIT compilers: common/config.py


@pytest.mark.parametrize("key,value", [("t", 1.5), ("t", "x"), ("index_threshold", -0.1),
                                       ("min_weight_ratio", -1), ("top", -1), ("shared_prefix_terms", 0),
                                       ("block_size", 0)])
def test_bad_options_name_themselves(key, value):
    cfg = merge_settings(MwoConfig, {"inputs": ["x"], "output": "y", key: value})
    with pytest.raises(ConfigError, match=key.replace("_", "-") if key != "t" else "-t"):
        cfg.validate()
