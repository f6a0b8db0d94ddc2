"""The paper's figures as PNG bytes (matplotlib, Agg backend) from small driver-side tables; the
job writes them with ``OutputFolder.write_bytes``, so they reach remote outputs too."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from quiltdetect.common.plots import png_bytes  # noqa: E402

COLOURS = {"expert": "tab:green", "blind": "tab:blue", "labeled": "tab:purple"}


def frequency_plot(occurrences: Sequence[int], n_objects: Sequence[int], threshold: int, kind: str,
                   title: str) -> bytes:
    """Figs. 1, 2, 11: distinct objects per number of occurrences, log-log, threshold dotted red."""
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    ax.scatter(occurrences, n_objects, s=10, c="0.45", label=f"distinct {kind}s")
    ax.axvline(threshold, color="red", linestyle=":", label=f"discovery threshold ({threshold})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(f"occurrences of a {kind} (duplicates)")
    ax.set_ylabel(f"number of distinct {kind}s")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(True, which="major", alpha=0.3)
    return png_bytes(fig, dpi=110)


def badness_plot(bins: Sequence[int], counts: Sequence[int], n_bins: int, threshold: float,
                 title: str) -> bytes:
    """Figs. 12-13: neighborhoods per badness bin (bars) and their CDF (line), threshold dotted."""
    full = np.zeros(n_bins, dtype=np.int64)
    for b, c in zip(bins, counts, strict=True):
        full[int(b)] = int(c)
    total = max(int(full.sum()), 1)
    left = np.arange(n_bins) / n_bins
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    ax.bar(left, full / total, width=1.0 / n_bins, align="edge", color="0.6", edgecolor="0.3",
           label="fraction of neighborhoods")
    ax.set_xlabel("badness (mean contains over the neighborhood's pages)")
    ax.set_ylabel("fraction of neighborhoods (log scale)")
    ax.set_yscale("log")  # most neighborhoods sit in the first bin; the tail is what matters
    ax.set_xlim(0, 1)
    cdf_ax = ax.twinx()
    cdf_ax.plot(np.r_[0.0, left + 1.0 / n_bins], np.r_[0.0, np.cumsum(full) / total], color="black", label="CDF")
    cdf_ax.set_ylim(0, 1.02)
    cdf_ax.set_ylabel("CDF")
    ax.axvline(threshold, color="red", linestyle=":", label=f"threshold {threshold:.3f}")
    cdf_ax.set_zorder(ax.get_zorder() + 1)
    cdf_ax.patch.set_visible(False)
    handles = ax.get_legend_handles_labels()
    handles2 = cdf_ax.get_legend_handles_labels()
    ax.legend(handles[0] + handles2[0], handles[1] + handles2[1], fontsize=8, loc="center right")
    ax.set_title(title, fontsize=10)
    return png_bytes(fig, dpi=110)


def mutation_plot(results: pd.DataFrame, op: str, thresholds: dict[str, tuple[float, float]],
                  cpp: float, site: str) -> bytes:
    """Figs. 4-10 for one mutation: page badness, pages detected, neighborhood badness vs mutations/cpp.

    ``thresholds``: labeled-set name -> (page threshold, neighborhood threshold), drawn dotted.
    """
    verb = {"add": "adding", "delete": "deleting", "modify": "changing"}[op]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    rows = results[results["mutation"] == op]
    for name, group in rows.groupby("labeled_set", sort=True):
        colour = COLOURS.get(str(name), None)
        x = group["mutations_per_cpp"].to_numpy()
        page_thr, nb_thr = thresholds[str(name)]
        axes[0].errorbar(x, group["page_badness"], yerr=group["page_badness_se"], color=colour, marker="o",
                         ms=3, capsize=2, label=f"L_{name}")
        axes[0].axhline(page_thr, color=colour, linestyle=":", label=f"threshold L_{name} {page_thr:.3f}")
        axes[1].errorbar(x, group["pages_detected"], yerr=group["pages_detected_se"], color=colour, marker="o",
                         ms=3, capsize=2, label=f"L_{name}")
        axes[2].errorbar(x, group["neighborhood_badness"], yerr=group["neighborhood_badness_se"], color=colour,
                         marker="o", ms=3, capsize=2, label=f"L_{name}")
        axes[2].axhline(nb_thr, color=colour, linestyle=":", label=f"threshold L_{name} {nb_thr:.3f}")
    if op == "delete" and len(rows):
        first = rows[rows["labeled_set"] == rows["labeled_set"].iloc[0]]
        twin = axes[0].twinx()
        twin.plot(first["mutations_per_cpp"], first["chunks_per_page"], color="tab:orange", label="chunks per page")
        twin.set_ylabel("average chunks per page", color="tab:orange")
    axes[0].set_title(f"{verb} chunks: average badness (contains) per page", fontsize=10)
    axes[0].set_ylabel("average contains per page")
    axes[1].set_title(f"{verb} chunks: pages detected (partial targets)", fontsize=10)
    axes[1].set_ylabel("pages detected")
    axes[2].set_title(f"{verb} chunks: badness of {site}", fontsize=10)
    axes[2].set_ylabel("neighborhood badness")
    for ax in axes:
        ax.set_xlabel(f"mutations per page / average chunks per page (cpp = {cpp:.1f})")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylim(-0.02, 1.05)
    axes[2].set_ylim(-0.02, 1.05)
    return png_bytes(fig, dpi=100)
