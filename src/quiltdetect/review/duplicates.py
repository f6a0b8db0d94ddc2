"""The review tool's pages for a near-duplicate run (``quiltdetect neardup``).

The list holds the dropped pages, each with the kept page it duplicates, the pair's similarity
(resemblance and containment for lsh, B- and C-similarity for Henzinger's algorithms) and the
parts of the run's rule it passed; a dropped page is shown beside its kept page with the shingles
they share marked in both; the summary gives the precision of the run's decisions (the share of
judged dropped pages that are duplicates) at the run's thresholds. Every crawled text, URL and id
goes through ``markup`` (escaped; links for http(s) URLs only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import yaml

from quiltdetect.review.data import ListQuery, Run
from quiltdetect.review.highlight import Highlight
from quiltdetect.review.labels import DuplicateSummary, wilson_interval
from quiltdetect.review.markup import e, link, render_segments, shown_url

MEASURE_NAMES = {"resemblance": "resemblance", "containment": "containment", "b_similarity": "B-similarity",
                 "c_similarity": "C-similarity"}
SORT_NAMES = {**MEASURE_NAMES, "doc_id": "doc_id", "url": "url", "duplicate_of": "kept page", "label": "label"}
LABEL_FILTERS = (("any", "any"), ("none", "unlabelled"), ("duplicate", "duplicate"),
                 ("not_duplicate", "not a duplicate"), ("undecided", "undecided"))
STRICTER = (0.7, 0.8, 0.9, 0.95)  # resemblance thresholds above the run's, in the summary


def rule_text(config: dict[str, Any]) -> str:
    """The run's decision rule as the job applied it, e.g. ``lsh, k=4: resemblance ≥ 0.63 or
    containment ≥ 0.96`` (from its config.yaml; empty when that does not say)."""
    g = config.get
    algorithm = g("algorithm")
    rules = {
        "lsh": f"resemblance ≥ {g('resemblance_threshold')} or containment ≥ {g('containment_threshold')}",
        "b": f"B ≥ {g('b_threshold')}",
        "c": f"C ≥ {g('c_threshold')}",
        "combined": f"B ≥ {g('b_threshold')} and C ≥ {g('combined_c_threshold')}",
        "combined-sites": f"B ≥ {g('b_threshold')} and C ≥ {g('combined_c_threshold')} on one site, "
                          f"C ≥ {g('c_threshold')} across sites",
    }
    if algorithm not in rules:
        return ""
    return f"{algorithm}, k={g('k')}: {rules[algorithm]}"


def measure(value: Any) -> str:
    """A similarity as the list shows it: a fraction to 3 places, a count of agreeing bits whole."""
    if value is None:
        return ""
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def filter_form(run: Run, query: ListQuery) -> str:
    """The list's filters: url, a minimum of each measure, label; sort, order; sample, seed."""
    def sel(value: str, current: str, text: str) -> str:
        chosen = " selected" if value == current else ""
        return f'<option value="{e(value)}"{chosen}>{e(text)}</option>'

    minimums = "".join(
        f'<label>{e(MEASURE_NAMES[m])} ≥<input name="min_{m}" size="5" value="{e(str(getattr(query, f"min_{m}")))}">'
        "</label>" for m in run.measures)
    sort = run.sort_key(query)
    return (
        '<form class="filters" method="get" action="/">'
        f'<label>url contains (either page)<input name="q" value="{e(query.q)}"></label>{minimums}'
        '<label>label<select name="label">' + "".join(sel(v, query.label, t) for v, t in LABEL_FILTERS)
        + '</select></label><label>sort<select name="sort">'
        + "".join(sel(v, sort, SORT_NAMES[v]) for v in run.sort_keys)
        + '</select></label><label>order<select name="order">'
        + sel("desc", query.order, "descending") + sel("asc", query.order, "ascending")
        + "</select></label>"
        f'<label>sample N<input name="sample" size="5" value="{e(str(query.sample or ""))}"></label>'
        f'<label>seed<input name="seed" size="6" value="{e(str(query.seed))}"></label>'
        '<button type="submit">apply</button><a href="/">reset</a></form>'
    )


def list_table(run: Run, rows: list[dict[str, Any]], first: int, labels: dict[str, tuple[str, str, str]],
               ctx: str, label_names: dict[str, str]) -> str:
    """The dropped pages shown: each with its kept page, similarity, the rules passed and label."""
    body = []
    for i, r in enumerate(rows, first):
        label = labels.get(r["doc_id"], ("", "", ""))[0]
        href = "/quilt?" + urlencode({"id": r["doc_id"], "ctx": ctx})
        body.append(
            f'<tr><td class="num">{i}</td>'
            f'<td><a class="open-quilt" href="{e(href)}">{e(r["doc_id"])}</a>'
            f'<div class="url meta">{shown_url(r["url"] or "")}</div></td>'
            f'<td>{e(r["duplicate_of"] or "")}<div class="url meta">{shown_url(r["kept_url"] or "")}</div></td>'
            + "".join(f'<td class="num">{measure(r[m])}</td>' for m in run.measures)
            + f'<td class="meta">{e(" · ".join(r["passed"]))}</td>'
            f'<td class="label-{e(label)}">{e(label_names.get(label, ""))}</td></tr>'
        )
    head = "".join(f"<th>{e(MEASURE_NAMES[m])}</th>" for m in run.measures)
    return ('<table class="list" id="dropped"><thead><tr><th>#</th><th>dropped page</th>'
            f"<th>kept page (it duplicates)</th>{head}<th>dropped by</th><th>label</th></tr></thead><tbody>"
            + "".join(body) + "</tbody></table>")


def page_body(run: Run, page: dict[str, Any], marked: Highlight, kept_text: str | None) -> str:
    """A dropped page beside the kept page it near-duplicates, the shingles they share marked in
    both, and the reason above: the pair's similarity and the parts of the run's rule it passed."""
    values = " · ".join(f"{MEASURE_NAMES[m]} <b>{page[m]:.4g}</b>" for m in run.measures if page[m] is not None)
    passed = " and ".join(page["passed"]) or "the run's rule"
    rule = rule_text(run.config)
    match = marked.sources[0]
    missing = ("" if kept_text is not None else
               '<p class="meta">The kept page\'s text is not in this run\'s docs/.</p>')
    return (
        f'<h2 class="url">{link(page["url"])}</h2>'
        f'<p class="reason" id="reason">dropped as a near-duplicate of the kept page {e(page["duplicate_of"])} '
        f'(kept in run {e(str(page["kept_run"] or ""))}) · {values} · passed {e(passed)}'
        + (f' <span class="meta">(rule: {e(rule)})</span>' if rule else "") + "</p>"
        '<div class="pair"><section><h3>dropped page</h3>'
        f'<p class="meta">doc_id {e(page["doc_id"])} · {marked.covered_words} of {marked.n_words} words in '
        'shingles it shares with the kept page</p>'
        f'<div class="text" id="dropped-text">{render_segments(marked.segments, "shared with the kept page")}</div>'
        f'</section><section><h3>kept page</h3><p class="meta">{link(page["kept_url"])}<br>doc_id '
        f'{e(page["duplicate_of"])} · {match.covered_words} of {match.n_words} words in shared shingles</p>{missing}'
        f'<div class="text" id="kept-text">{render_segments(match.segments, "shared with the dropped page")}</div>'
        "</section></div>"
        f'<p class="meta">Marked: the runs of words in k-word shingles (k={run.k}) both pages hold, recomputed '
        "from the two texts. The run's shingles also hold the parts of URLs written in a page and its image "
        "names, so its measures can differ slightly from what the marks suggest.</p>"
    )


def _rule_of(run: Run, key: str) -> str:
    """The decision rule of the run named ``key`` in the labels database (its config.yaml)."""
    if key == run.key:
        return rule_text(run.config)
    try:
        config = yaml.safe_load((Path(key) / "config.yaml").read_text(encoding="utf-8"))
    except (OSError, ValueError, yaml.YAMLError):
        return ""
    return rule_text(config) if isinstance(config, dict) else ""


def _share(duplicates: int, judged: int) -> tuple[str, str]:
    if not judged:
        return "", ""
    low, high = wilson_interval(duplicates, judged)
    return f"{100 * duplicates / judged:.1f}%", f"{100 * low:.1f}% – {100 * high:.1f}%"


def _by_threshold(run: Run, labels: dict[str, tuple[str, str, str]]) -> str:
    """This lsh run's precision among the dropped pages with resemblance ≥ t (its threshold and
    stricter ones), and among those dropped by containment alone."""
    low = run.config.get("resemblance_threshold")
    if run.config.get("algorithm") != "lsh" or low is None or "resemblance" not in run.measures:
        return ""
    groups = [(f"resemblance ≥ {t}", [p for p in run.quilts if p["resemblance"] >= t])
              for t in [low, *(t for t in STRICTER if t > low)]]
    groups.append((f"containment ≥ {run.config.get('containment_threshold')}, resemblance < {low} "
                   "(containment only)", [p for p in run.quilts if p["resemblance"] < low]))
    rows = []
    for name, pages in groups:
        got = [labels[p["doc_id"]][0] for p in pages if p["doc_id"] in labels]
        dup, not_dup = got.count("duplicate"), got.count("not_duplicate")
        share, ci = _share(dup, dup + not_dup)
        rows.append(f"<tr><td>{e(name)}</td><td>{len(pages)}</td><td>{dup + not_dup}</td><td>{dup}</td>"
                    f"<td>{not_dup}</td><td>{share}</td><td>{ci}</td></tr>")
    return ("<h3>This run by similarity</h3><p>The same, among this run's dropped pages with resemblance at "
            "or above a threshold (what a stricter threshold would have dropped), and among those dropped by "
            "containment alone.</p>"
            '<table class="summary" id="by-threshold"><thead><tr><th>dropped pages with</th><th>pages</th>'
            "<th>judged</th><th>duplicate</th><th>not a duplicate</th><th>precision</th>"
            f"<th>95% interval (Wilson)</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


def summary_section(run: Run, summaries: list[DuplicateSummary], labels: dict[str, tuple[str, str, str]]) -> str:
    """The precision of every near-duplicate run's decisions in the database, at its thresholds;
    and, for the run open (lsh), the precision by resemblance and of containment alone."""
    rows = []
    for s in summaries:
        share, ci = _share(s.duplicate, s.judged)
        mine = ' class="current"' if s.run == run.key else ""
        rows.append(f"<tr{mine}><td>{e(s.run)}</td><td>{e(_rule_of(run, s.run))}</td><td>{s.judged}</td>"
                    f"<td>{s.duplicate}</td><td>{s.not_duplicate}</td><td>{s.undecided}</td><td>{share}</td>"
                    f"<td>{ci}</td></tr>")
    table = ('<table class="summary" id="precision"><thead><tr><th>run</th><th>rule (thresholds)</th>'
             "<th>judged</th><th>duplicate</th><th>not a duplicate</th><th>undecided</th><th>precision</th>"
             f"<th>95% interval (Wilson)</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")
    note = ("<p>The precision of a near-duplicate run's decisions at its thresholds: the share of judged "
            "dropped pages (duplicate or not a duplicate; undecided ones left out) that are duplicates of the "
            "page kept in their place, with a Wilson score 95% confidence interval. Judge a uniform sample "
            "(list page: sample N, seed) for an unbiased estimate.</p>")
    detail = _by_threshold(run, labels) if run.kind == "neardup" else ""
    return f"<h2>Near-duplicate decisions judged</h2>{note}{table}{detail}"


def export_fields(run: Run) -> list[str]:
    """The columns of a near-duplicate run's label export."""
    return ["run", "doc_id", "url", "label", "note", "judged_at", "duplicate_of", "kept_url", *run.measures]
