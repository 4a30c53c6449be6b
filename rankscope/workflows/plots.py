"""The workflows' plots, each returned as PNG bytes ready for a file or an HTML data URI.

Figures are drawn on matplotlib's Agg canvas chosen inside each function, never
through pyplot's global state, so importing rankscope does not touch the
user's matplotlib backend and plots work on machines without a display.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # matplotlib is imported when a plot is drawn, not with rankscope
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_DPI = 110


def _new_figure(width: float, height: float) -> Figure:
    """A figure on its own Agg canvas, outside pyplot's global state (see the module doc)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _figure(width: float, height: float, ncols: int = 1) -> tuple[Figure, Sequence[Axes]]:
    """A figure with ``ncols`` panels side by side."""
    fig = _new_figure(width, height)
    return fig, fig.subplots(1, ncols, squeeze=False)[0]


def _panels(n: int, width: float, height: float) -> tuple[Figure, Sequence[Axes]]:
    """A figure with ``n`` panels, two per row, each ``width`` x ``height`` inches; unused panels hidden."""
    ncols = min(n, 2)
    nrows = -(-n // ncols)
    fig = _new_figure(width * ncols, height * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def _png(fig: Figure) -> bytes:
    """PNG bytes without the matplotlib version in the metadata, so the same plot gives the same bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def cutoff_curves(
    curves: Mapping[str, pd.DataFrame],
    columns: Sequence[str] = ("hit", "recall"),
    axis: str = "K",
    xlabel: str | None = None,
) -> bytes:
    """One panel per measure (Hit@K, Recall@K) against K (log axis), one line per retriever.

    ``curves`` maps a retriever to a frame indexed by K with the ``columns``; ``axis`` names
    the cutoff in the labels (``B`` for a token budget), ``xlabel`` the x axis (default ``axis``).
    """
    fig, axes = _figure(5.0 * len(columns), 3.8, ncols=len(columns))
    for ax, column in zip(axes, columns):
        for name, frame in curves.items():
            ax.plot(frame.index, frame[column], marker="o", label=name)
        ax.set_xscale("log")
        ks = sorted({int(k) for frame in curves.values() for k in frame.index})
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
        ax.set_ylim(0, 1)
        ax.set_xlabel(xlabel or axis)
        ax.set_ylabel(f"{column.capitalize()}@{axis}")
        ax.set_title(f"{column.capitalize()}@{axis}")
        ax.grid(alpha=0.3)
    axes[0].legend(loc="lower right")
    return _png(fig)


def precision_recall(curves: Mapping[str, pd.Series]) -> bytes:
    """Interpolated precision against recall (the 11 standard points), one line per system.

    ``curves`` maps a system to a series indexed by recall level.
    """
    fig, axes = _figure(5.0, 3.8)
    ax = axes[0]
    for name, series in curves.items():
        ax.plot(series.index, series.to_numpy(), marker="o", label=name)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision")
    ax.set_title("Precision-recall (trec_eval iprec_at_recall)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right")
    return _png(fig)


def per_query_difference(differences: Mapping[str, pd.Series], metric: str, baseline: str) -> bytes:
    """Per-query difference to the baseline, sorted, one panel per retriever: wins above zero, losses below."""
    fig, axes = _panels(len(differences), 5.0, 3.6)
    for ax, (name, diff) in zip(axes, differences.items()):
        values = np.sort(diff.to_numpy(dtype=np.float64))[::-1]
        colours = np.where(values > 0, "#2a9d4b", np.where(values < 0, "#c0392b", "#999999"))
        ax.bar(np.arange(len(values)), values, width=1.0, color=colours)
        ax.axhline(0, color="black", linewidth=0.8)
        wins, losses = int((values > 0).sum()), int((values < 0).sum())
        ax.set_title(f"{name} - {baseline}: {wins} better, {losses} worse")
        ax.set_xlabel("queries (sorted)")
        ax.set_ylabel(f"difference in {metric}")
        ax.grid(alpha=0.3, axis="y")
    return _png(fig)


def heatmap(
    values: np.ndarray,
    rows: Sequence[float],
    cols: Sequence[float],
    best: tuple[float, float],
    default: tuple[float, float] | None,
    metric: str,
) -> bytes:
    """Metric over the (k1 rows x b columns) grid, best point marked with a star, defaults with a cross."""
    fig, axes = _figure(7.5, 5.5)
    ax = axes[0]
    extent_x = _edges(cols)
    extent_y = _edges(rows)
    image = ax.pcolormesh(extent_x, extent_y, values, cmap="viridis", shading="flat")
    fig.colorbar(image, ax=ax, label=metric)
    ax.plot(
        [best[1]],
        [best[0]],
        marker="*",
        markersize=16,
        color="red",
        markeredgecolor="white",
        linestyle="none",
        label=f"best k1={best[0]:g}, b={best[1]:g}",
    )
    if default is not None:
        ax.plot(
            [default[1]],
            [default[0]],
            marker="X",
            markersize=10,
            color="white",
            markeredgecolor="black",
            linestyle="none",
            label=f"default k1={default[0]:g}, b={default[1]:g}",
        )
    ax.set_xlabel("b")
    ax.set_ylabel("k1")
    ax.set_title(f"{metric} over the grid")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize="small")
    return _png(fig)


def _edges(centres: Sequence[float]) -> np.ndarray:
    """Cell edges around grid values so each value sits in the middle of its cell."""
    c = np.asarray(centres, dtype=np.float64)
    if len(c) == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = (c[1:] + c[:-1]) / 2
    return np.concatenate([[c[0] - (mid[0] - c[0])], mid, [c[-1] + (c[-1] - mid[-1])]])


def rank_histogram(distributions: Mapping[str, pd.Series]) -> bytes:
    """Queries per first-relevant-rank bucket (see ``misses.rank_distribution``), bars side by side."""
    fig, axes = _figure(8.0, 3.8)
    ax = axes[0]
    labels = list(next(iter(distributions.values())).index)
    width = 0.8 / len(distributions)
    x = np.arange(len(labels))
    for i, (name, counts) in enumerate(distributions.items()):
        ax.bar(x + (i - (len(distributions) - 1) / 2) * width, counts.reindex(labels).to_numpy(), width, label=name)
    ax.set_xticks(x, labels, rotation=30, ha="right")
    ax.set_xlabel("rank of the first relevant document")
    ax.set_ylabel("queries")
    ax.set_title("Where the first relevant document lands")
    ax.legend()
    ax.grid(alpha=0.3, axis="y")
    return _png(fig)


def miss_bars(breakdowns: Mapping[str, pd.DataFrame]) -> bytes:
    """Stacked shares per K: hit, ranking miss (reranker can fix), recall miss (first stage must fix)."""
    fig, axes = _panels(len(breakdowns), 5.0, 3.8)
    parts = (
        ("hit_share", "hit", "#2a9d4b"),
        ("ranking_miss_share", "ranking miss", "#f0a030"),
        ("recall_miss_share", "recall miss", "#c0392b"),
    )
    for ax, (name, frame) in zip(axes, breakdowns.items()):
        x = np.arange(len(frame))
        bottom = np.zeros(len(frame))
        for column, label, colour in parts:
            values = frame[column].to_numpy(dtype=np.float64)
            ax.bar(x, values, 0.7, bottom=bottom, label=label, color=colour)
            bottom += values
        ax.set_xticks(x, [str(k) for k in frame.index])
        ax.set_ylim(0, 1)
        ax.set_xlabel("K")
        ax.set_ylabel("share of queries")
        ax.set_title(name)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=3, fontsize="small")
    return _png(fig)


def tokens_to_first(distributions: Mapping[str, np.ndarray], budgets: Sequence[int]) -> bytes:
    """Share of queries whose first evidence lies within T tokens of context, against T (log axis),
    one step line per system; NaN (no evidence retrieved) never counts. Budgets as dashed lines."""
    fig, axes = _figure(8.0, 4.2)
    ax = axes[0]
    for name, values in distributions.items():
        found = np.sort(values[~np.isnan(values)])
        shares = np.arange(1, len(found) + 1) / len(values)
        ax.step(
            np.concatenate([[found[0] if len(found) else 1], found]),
            np.concatenate([[0], shares]),
            where="post",
            label=name,
        )
    for budget in budgets:
        ax.axvline(budget, color="grey", linestyle="--", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_ylim(0, 1)
    ax.set_xlabel("tokens of context T")
    ax.set_ylabel("share of queries with evidence within T")
    ax.set_title("Tokens needed to reach the first evidence")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    return _png(fig)
