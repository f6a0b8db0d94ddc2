"""The paper's figures as PNG files (matplotlib, Agg backend), from small driver-side tables.

Each function returns the PNG bytes (``common.plots.png_bytes``); the job writes them beside
the tables with ``OutputFolder.write_bytes``, on a local path or any Hadoop file system.
"""

from __future__ import annotations

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from quiltdetect.common.plots import png_bytes  # noqa: E402

DPI = 110


def _plain_log(axis) -> None:
    """Log-scale ticks at 1, 2, 5 per decade, written as plain numbers (no 2x10^1)."""
    axis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    axis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def _png(fig) -> bytes:
    return png_bytes(fig, dpi=DPI, tight=True)


def occurrences_plot(table: pd.DataFrame, threshold: int, title: str) -> bytes:
    """Fig. 1: number of popular shingles per number of documents they occur in, log-log."""
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    if len(table):
        ax.plot(table["n_documents"], table["n_shingles"], "o", ms=3, color="tab:blue", label="popular shingles")
        ax.set_xscale("log")
        ax.set_yscale("log")
        _plain_log(ax.xaxis)
        _plain_log(ax.yaxis)
    ax.axvline(threshold, color="red", linestyle=":", label=f"popular: >= {threshold} documents")
    ax.set_xlabel("documents a popular shingle occurs in")
    ax.set_ylabel("number of popular shingles")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(True, which="major", alpha=0.3)
    return _png(fig)


def per_document_plot(table: pd.DataFrame, m: int, title: str) -> bytes:
    """Fig. 2: fraction of documents per number of popular shingles (0..m), log y."""
    full = np.zeros(m + 1)
    for n, frac in zip(table["n_popular"], table["fraction"], strict=True):
        full[int(n)] = float(frac)
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    xs = np.arange(m + 1)
    shown = full > 0
    ax.vlines(xs[shown], 0, full[shown], color="tab:blue", lw=1)
    ax.plot(xs[shown], full[shown], "o", ms=3, color="tab:blue")
    ax.set_yscale("log")
    ax.set_ylim(bottom=min(full[shown].min() / 2, 0.5) if shown.any() else 1e-3)
    ax.set_xlim(-1, m + 1)
    ax.set_xlabel(f"popular shingles in a document (of {m})")
    ax.set_ylabel("fraction of documents")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    return _png(fig)


def covering_plot(table: pd.DataFrame, m: int, title: str) -> bytes:
    """Figs. 3-7: covering-set size against popular shingles. Outer disc area ∝ documents at
    the point; inner disc (filled) scaled by the mean foreign share of their popular shingles."""
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    if len(table):
        n = table["n_documents"].to_numpy(float)
        scale = 400.0 / max(n.max(), 1.0)  # largest disc: 400 pt^2
        ax.scatter(table["n_popular"], table["cover_size"], s=n * scale, facecolors="0.85", edgecolors="0.4",
                   linewidths=0.8, label="documents (area)")
        share = table["mean_foreign_share"].fillna(0.0).to_numpy(float) if "mean_foreign_share" in table else None
        if share is not None and table["mean_foreign_share"].notna().any():
            ax.scatter(table["n_popular"], table["cover_size"], s=n * scale * np.clip(share, 0, 1),
                       color="tab:red", alpha=0.7, linewidths=0, label="foreign share (inner area)")
        ax.set_ylim(0, max(float(table["cover_size"].max()) * 1.1, 1.0))
    ax.set_xlim(0, m + 1)
    ax.set_xlabel(f"popular shingles in the document (of {m})")
    ax.set_ylabel("covering-set size (donors)")
    ax.set_title(title, fontsize=10)
    if ax.get_legend_handles_labels()[0]:  # no sampled document: nothing to label
        ax.legend(fontsize=8, loc="upper left", markerscale=0.4)
    ax.grid(True, alpha=0.3)
    return _png(fig)


def host_plot(stats: pd.DataFrame, monsters: pd.DataFrame, m: int, min_mean: float, max_std: float, labels: int,
              title: str) -> bytes:
    """Figs. 8-9: per host, mean popular shingles per page (error bars: ± one standard
    deviation) against page count; monster candidates in red with their rank, the first
    ``labels`` named in a box; the candidates' mean threshold dotted."""
    fig, ax = plt.subplots(figsize=(7.2, 5.0))
    chosen = set(monsters["host"]) if len(monsters) else set()
    for is_monster, colour in ((False, "0.45"), (True, "tab:red")):
        part = stats[stats["host"].isin(chosen) == is_monster]
        if len(part):
            ax.errorbar(part["mean_popular"], part["n_pages"], xerr=part["std_popular"], fmt="o", ms=3,
                        color=colour, ecolor=colour, elinewidth=0.7, capsize=2, alpha=0.8,
                        label=f"monster candidates (std < {max_std:g})" if is_monster else "hosts")
    names = []
    for i, row in enumerate(monsters.head(labels).itertuples()):
        ax.annotate(str(row.rank), (row.mean_popular, row.n_pages), fontsize=7, color="tab:red",
                    xytext=(4, 3 if i % 2 == 0 else -9), textcoords="offset points")
        names.append(f"{row.rank}. {row.host} ({row.n_pages} pages)")
    if names:
        ax.text(1.02, 1.0, "monster candidates\n" + "\n".join(names), transform=ax.transAxes, va="top", ha="left",
                fontsize=7,
                color="tab:red", bbox={"boxstyle": "round", "facecolor": "white", "alpha": 0.85, "edgecolor": "0.8"})
    ax.axvline(min_mean, color="tab:red", linestyle=":", lw=0.8, label=f"candidate mean >= {min_mean:g}")
    if len(stats) and stats["n_pages"].max() > 10 * stats["n_pages"].min():
        ax.set_yscale("log")
        _plain_log(ax.yaxis)
    ax.set_xlim(-1, m + 1)
    ax.set_xlabel(f"mean popular shingles per page (of {m}), bars ± 1 std")
    ax.set_ylabel("pages on the host")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, which="major", alpha=0.3)
    return _png(fig)
