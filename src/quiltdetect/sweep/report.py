"""Fig. 3's four plots (PNG, pivot highlighted) and a static HTML report of a sweep."""

from __future__ import annotations

import base64
import html
from typing import Any

from quiltdetect.common.folder import OutputFolder
from quiltdetect.common.plots import png_bytes
from quiltdetect.sweep.config import SweepConfig

LABELS = {"k": "k (gram length)", "m": "m (max documents per patch gram)", "c": "c (min sources)",
          "theta": "θ (min patch fraction)"}


def plot_line(name: str, line: list[dict[str, Any]], pivot_value: float) -> bytes:
    """One panel of Fig. 3: quilted pages against one parameter, the pivot in red."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    xs = [r[name] for r in line]
    ys = [r["quilted"] for r in line]
    fig, ax = plt.subplots(figsize=(4.2, 3.2), dpi=110)
    ax.plot(xs, ys, "o-", color="#1f4e79", markersize=4)
    for x, y in zip(xs, ys, strict=True):
        if x == pivot_value:
            ax.plot([x], [y], "o", color="#c0392b", markersize=9, zorder=3, label="pivot")
    ax.set_xlabel(LABELS[name])
    ax.set_ylabel("quilted pages")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    return png_bytes(fig)


def _table_html(rows: list[dict[str, Any]], pivot: tuple, columns: list[str]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = []
    for r in rows:
        cls = ' class="pivot"' if (r["k"], r["m"], r["c"], r["theta"]) == pivot else ""
        cells = "".join(f"<td>{'' if r.get(c) is None else html.escape(str(r[c]))}</td>" for c in columns)
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def report_html(cfg: SweepConfig, lines: dict[str, list[dict[str, Any]]], plots: dict[str, bytes],
                checks: dict[str, int]) -> str:
    """The report: the four plots (embedded as data URIs) and Table 1, as one static file."""
    pivot = tuple(cfg.pivot)
    figs = "".join(
        f'<figure><img alt="quilted pages against {html.escape(n)}" src="data:image/png;base64,'
        f'{base64.b64encode(png).decode()}"><figcaption>{html.escape(LABELS[n])}</figcaption></figure>'
        for n, png in plots.items()
    )
    rows = [dict(r, vary=name) for name, line in lines.items() for r in line]
    cols = ["vary", "k", "m", "c", "theta", "phi", "quilted", "avg_sources", "attributed", "m_breaks"]
    check_items = "".join(f"<li>{html.escape(k)}: {v}</li>" for k, v in checks.items())
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>quiltdetect sweep</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
figure {{ display: inline-block; margin: 0 1em 1em 0; }}
table {{ border-collapse: collapse; font-size: 14px; }}
td, th {{ border: 1px solid #ccc; padding: 2px 8px; text-align: right; }}
tr.pivot td {{ background: #fde2e0; font-weight: bold; }}
</style></head><body>
<h1>Parameter sweep (Najork 2012, Table 1 and Fig. 3)</h1>
<p>Pivot (k, m, c, θ) = {html.escape(str(pivot))}; foreign = {html.escape(cfg.foreign)};
φ = {html.escape(str(cfg.phis[0]))}; exclude attributed = {cfg.exclude_attributed};
{len(cfg.passes())} Spark passes over (k, m); every (θ, c) follows from them (Theorems 1–2).
The full grid is in <code>sweep.csv</code>.</p>
{figs}
<h2>Table 1: one parameter varied around the pivot</h2>
<p><code>m_breaks</code>: pages quilted at the previous m of this k but not at this one
(Theorem 3 holds for minimal covers, not always for the greedy one).</p>
{_table_html(rows, pivot, cols)}
<h2>Monotonicity checks over the whole grid</h2><ul>{check_items}</ul>
</body></html>
"""


def write_report(out: OutputFolder, cfg: SweepConfig, lines: dict[str, list[dict[str, Any]]],
                 checks: dict[str, int]) -> int:
    """Write plots/fig3_{k,m,c,theta}.png and report.html; returns the number of files."""
    pivot = dict(zip(("k", "m", "c", "theta"), cfg.pivot, strict=True))
    plots = {name: plot_line(name, line, pivot[name]) for name, line in lines.items() if line}
    for name, png in plots.items():
        out.write_bytes(f"plots/fig3_{name}.png", png)
    out.write_text("report.html", report_html(cfg, lines, plots, checks))
    return len(plots) + 1
