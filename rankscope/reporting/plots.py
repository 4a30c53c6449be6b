"""The workflows' plots, each returned as a :class:`~rankscope.reporting.rendering.Plot` that renders to
PNG, SVG or PDF, drawn when first needed (:func:`_later`).

Layout rules for many systems (issue 17): legends sit below the axes, panels
that compare systems share their axes, and a grid of panels never has an empty
slot (a short last row is centred instead). Every title names the dataset. What
every plot is built from (figures on their own Agg canvas, panels, legends, colours):
:mod:`rankscope.reporting.panels`; how a plot is rendered: :mod:`rankscope.reporting.rendering`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, cast

import numpy as np
import pandas as pd

from rankscope.reporting.panels import (
    LOSS,
    TITLE_Y,
    WIN,
    fitted_legend,
    legend_below,
    new_figure,
    panel_grid,
    panel_title,
    plain_log_labels,
    row_starts,
    shown,
    side_by_side,
    system_colours,
    system_lines,
    system_looks,
    titled,
)
from rankscope.reporting.rendering import Plot

if TYPE_CHECKING:  # matplotlib is imported when a plot is drawn, not with rankscope
    from matplotlib.axes import Axes

P = ParamSpec("P")


_DRAWINGS: dict[str, Callable[..., Plot]] = {}
"""Each plot function's drawing by its name (:func:`_later` fills it)."""


def _later(draw: Callable[P, Plot]) -> Callable[P, Plot]:
    """A plot function whose :class:`Plot` is drawn when first needed (its arguments kept until then). The
    undrawn plot pickles as the function's name and its arguments (:func:`_drawn`), so that a report's plots
    are handed to the child drawing them (:mod:`rankscope.reporting.finish`) without the workflow's result."""
    _DRAWINGS[draw.__name__] = draw

    @functools.wraps(draw)
    def plot(*args: P.args, **kwargs: P.kwargs) -> Plot:
        return Plot.later(functools.partial(_drawn, draw.__name__, args, kwargs))

    return plot


def _drawn(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Plot:
    """The plot ``name(*args, **kwargs)`` draws (a module-level function: a partial of it pickles)."""
    return _DRAWINGS[name](*args, **kwargs)


@_later
def cutoff_curves(
    curves: Mapping[str, pd.DataFrame],
    columns: Sequence[str] = ("hit", "recall"),
    axis: str = "K",
    xlabel: str | None = None,
    *,
    dataset: str,
    reference: str | None = None,
) -> Plot:
    """Hit@K and Recall@K (the ``columns``) against K on a log axis, laid out by :func:`system_lines`.

    ``curves`` maps a system to a frame indexed by K with the ``columns``; ``axis`` names the
    cutoff (``B`` for a token budget), ``xlabel`` the x axis (default ``axis``).
    """
    ks = sorted({int(k) for frame in curves.values() for k in frame.index})

    def style(ax: Axes) -> None:
        ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
        ax.set_ylim(0, 1)
        ax.set_xlabel(xlabel or axis)
        ax.grid(alpha=0.3)

    labels = {c: f"{c.capitalize()}@{axis}" for c in columns}
    fig = system_lines(curves, labels, reference, style, "share")
    return titled(fig, " and ".join(labels.values()), dataset)


@_later
def precision_recall(curves: Mapping[str, pd.Series], *, dataset: str, reference: str | None = None) -> Plot:
    """Interpolated precision against recall (the 11 standard points), laid out by :func:`system_lines`.

    ``curves`` maps a system to a series indexed by recall level.
    """

    def style(ax: Axes) -> None:
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("recall")
        ax.grid(alpha=0.3)

    frames = {name: series.rename("precision").to_frame() for name, series in curves.items()}
    fig = system_lines(frames, {"precision": "interpolated precision"}, reference, style, "precision")
    return titled(fig, "Precision-recall (trec_eval iprec_at_recall)", dataset)


@_later
def per_query_difference(differences: Mapping[str, pd.Series], metric: str, baseline: str, *, dataset: str) -> Plot:
    """Per-query difference to the baseline, sorted, one panel per system (shared axes, no empty
    slot): wins above zero, losses below.

    Each query is a bar one unit wide centred on its position, drawn as two filled outlines, the wins and
    the losses (a tie, or a NaN, has no height): one path each instead of a patch per query, whose
    drawing and saving cost 0.2 s of CPU for Cranfield's 225 queries."""
    n = len(differences)
    width = max(3.6, 9.0 / min(n, 3))
    fig, axes = panel_grid(n, width, 2.8, max_cols=3)
    for ax, (name, diff) in zip(axes, differences.items()):
        values = np.sort(diff.to_numpy(dtype=np.float64))[::-1]
        edges = np.arange(len(values) + 1) - 0.5
        for heights, colour in ((np.where(values > 0, values, 0.0), WIN), (np.where(values < 0, values, 0.0), LOSS)):
            ax.stairs(heights, edges, baseline=0.0, fill=True, facecolor=colour, linewidth=0)
        ax.axhline(0, color="black", linewidth=0.8)
        wins, losses = int((values > 0).sum()), int((values < 0).sum())
        ax.set_title(
            panel_title(f"{name}: {wins} better, {losses} worse", int(width * 11)), fontsize="medium", y=TITLE_Y
        )
        ax.set_xlabel("queries (sorted)")
        ax.grid(alpha=0.3, axis="y")
    for i in row_starts(n, 3):
        axes[i].set_ylabel(panel_title(f"{metric} - {baseline}", 32))
    return titled(fig, f"Per-query {metric} difference to {baseline}", dataset)


@_later
def heatmap(
    values: np.ndarray,
    rows: Sequence[float],
    cols: Sequence[float],
    best: tuple[float, float],
    default: tuple[float, float] | None,
    metric: str,
    *,
    dataset: str,
    names: tuple[str, str] = ("k1", "b"),
) -> Plot:
    """Metric over the (rows x columns) grid, best point marked with a star, defaults with a cross."""
    fig = new_figure(7.5, 5.5)
    ax, bar = fig.subplots(1, 2, width_ratios=[24, 1])  # the colour bar a cell of the grid, laid out with it
    row_name, column_name = names
    image = ax.pcolormesh(_edges(cols), _edges(rows), values, cmap="viridis", shading="flat")
    fig.colorbar(image, cax=bar, label=metric)
    _mark(ax, best, "best", names, marker="*", markersize=16, color="red", markeredgecolor="white")
    if default is not None:
        _mark(ax, default, "default", names, marker="X", markersize=10, color="white", markeredgecolor="black")
    ax.set_xlabel(column_name)
    ax.set_ylabel(row_name)
    legend_below(fig, [ax], ncol=2)
    return titled(fig, f"{metric} over the grid", dataset)


def _mark(ax: Axes, point: tuple[float, float], what: str, names: tuple[str, str], **style: Any) -> None:
    """One grid point (row value, column value) on the heat map, labelled with both parameters' values."""
    row_name, column_name = names
    label = f"{what} {row_name}={point[0]:g}, {column_name}={point[1]:g}"
    ax.plot([point[1]], [point[0]], linestyle="none", label=label, **style)


def _edges(centres: Sequence[float]) -> np.ndarray:
    """Cell edges around grid values so each value sits in the middle of its cell."""
    c = np.asarray(centres, dtype=np.float64)
    if len(c) == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = (c[1:] + c[:-1]) / 2
    return np.concatenate([[c[0] - (mid[0] - c[0])], mid, [c[-1] + (c[-1] - mid[-1])]])


@_later
def rank_histogram(distributions: Mapping[str, pd.Series], *, dataset: str) -> Plot:
    """Queries per first-relevant-rank bucket (see ``misses.rank_distribution``), bars side by side."""
    fig, axes = side_by_side(6.0, 3.6)
    ax = axes[0]
    colours = system_colours(list(distributions))
    labels = list(next(iter(distributions.values())).index)
    width = 0.8 / len(distributions)
    x = np.arange(len(labels))
    for i, (name, counts) in enumerate(distributions.items()):
        offset = (i - (len(distributions) - 1) / 2) * width
        ax.bar(x + offset, counts.reindex(labels).to_numpy(), width, label=name, color=colours[name])
    ax.set_xticks(x, labels, rotation=30, ha="right")
    ax.set_xlabel("rank of the first relevant document")
    ax.set_ylabel("queries")
    ax.grid(alpha=0.3, axis="y")
    legend_below(fig, axes, ncol=4)
    return titled(fig, "Where the first relevant document lands", dataset)


@_later
def miss_bars(breakdowns: Mapping[str, pd.DataFrame], *, dataset: str) -> Plot:
    """Stacked shares per K: hit, ranking miss (reranker can fix), recall miss (first stage must fix);
    one panel per system, shared axes."""
    fig, axes = panel_grid(len(breakdowns), 4.2, 3.2, max_cols=2)
    parts = (
        ("hit_share", "hit", WIN),
        ("ranking_miss_share", "ranking miss", "#f0a030"),
        ("recall_miss_share", "recall miss", LOSS),
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
        ax.set_title(name, fontsize="medium", y=TITLE_Y)
    for i in row_starts(len(breakdowns), 2):
        axes[i].set_ylabel("share of queries")
    legend_below(fig, axes, ncol=3)
    return titled(fig, "Hits, ranking misses and recall misses", dataset)


@_later
def tokens_to_first(distributions: Mapping[str, np.ndarray], budgets: Sequence[int], *, dataset: str) -> Plot:
    """Share of queries whose first evidence lies within T tokens of context, against T (log axis),
    one step line per system; NaN (no evidence retrieved) never counts. Budgets as dashed lines."""
    fig, axes = side_by_side(8.0, 4.2)
    ax = axes[0]
    looks = system_looks(list(distributions))
    for name, values in distributions.items():
        found = np.sort(values[~np.isnan(values)])
        shares = np.arange(1, len(found) + 1) / len(values)
        ax.step(
            np.concatenate([[found[0] if len(found) else 1], found]),
            np.concatenate([[0], shares]),
            where="post",
            label=name,
            color=looks[name][0],
            linestyle=looks[name][1],
        )
    for budget in budgets:
        ax.axvline(budget, color="grey", linestyle="--", linewidth=0.8)
    ax.set_xscale("log")
    plain_log_labels(ax.xaxis)
    ax.set_ylim(0, 1)
    ax.set_xlabel("tokens of context T")
    ax.set_ylabel("share of queries with evidence within T")
    ax.grid(alpha=0.3)
    legend_below(fig, axes, ncol=4)
    return titled(fig, "Tokens needed to reach the first evidence", dataset)


@_later
def marginals(
    grid: pd.DataFrame, params: Sequence[str], metric: str, best: Mapping[str, object], *, dataset: str
) -> Plot:
    """Each tuned parameter's marginal, one panel per parameter (a grid of three or more parameters
    has no heat map): for every value, the best ``mean`` over the other parameters' values (solid) and
    their average (dashed); the best point's value marked. ``grid`` has the parameters and ``mean``."""
    fig, axes = panel_grid(len(params), 3.6, 2.8, max_cols=3, sharex=False)  # each parameter its own x axis
    for ax, name in zip(axes, params):
        by = grid.groupby(name, sort=True, dropna=True)["mean"]
        values = by.max().index
        numeric = pd.api.types.is_numeric_dtype(grid[name])
        x = np.asarray(values, dtype=np.float64) if numeric else np.arange(len(values))
        ax.plot(x, by.max().to_numpy(), marker="o", markersize=3, label="best over the others")
        ax.plot(x, by.mean().to_numpy(), "--", label="average over the others")
        chosen = best[name]
        if chosen is not None:
            position = float(cast(float, chosen)) if numeric else list(values).index(chosen)
            ax.axvline(position, color="red", linewidth=0.8, label="best point")
        if not numeric:
            ax.set_xticks(x, [shown(str(v)) for v in values], rotation=30, ha="right")
        ax.set_xlabel(name)
        ax.grid(alpha=0.3)
    for i in row_starts(len(params), 3):
        axes[i].set_ylabel(metric)
    legend_below(fig, axes, ncol=3)
    return titled(fig, f"{metric} by each parameter", dataset)


LABELLED_MAX = 60  # up to this many systems the interval plot names each one on its y axis


@_later
def rank_intervals(table: pd.DataFrame, metric: str, *, dataset: str) -> Plot:
    """Each system's mean interval (left) and rank interval (right), one row per system sorted by
    mean (best on top), coloured by tier. ``table`` is :class:`rankscope.evaluation.tiers.Tiers`'
    ``table`` (index system; ``tier``, ``mean``, ``mean_low``, ``mean_high``, ``rank``, ``rank_low``,
    ``rank_high``). Beyond :data:`LABELLED_MAX` systems the rows are drawn unnamed (the table names them)."""
    count = len(table)
    fig, axes = side_by_side(9.0, min(2.2 + 0.22 * min(count, LABELLED_MAX), 16.0), ncols=2)
    y = np.arange(count)[::-1]
    tiers = table["tier"].to_numpy()
    from matplotlib.colors import to_hex

    palette = {
        name: to_hex(cast(Any, colour))
        for name, colour in system_colours([f"tier {t}" for t in sorted(set(tiers))]).items()
    }
    colours = [palette[f"tier {t}"] for t in tiers]
    panels = (("mean", "mean_low", "mean_high", metric), ("rank", "rank_low", "rank_high", "rank"))
    for ax, (centre, low, high, label) in zip(axes, panels):
        middle = table[centre].to_numpy(dtype=np.float64)
        ax.hlines(y, table[low], table[high], colors=colours, linewidth=2 if count <= LABELLED_MAX else 1)
        ax.scatter(middle, y, c=colours, s=12 if count <= LABELLED_MAX else 3, zorder=3)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3, axis="x")
    if count <= LABELLED_MAX:
        axes[0].set_yticks(y, [shown(str(name)) for name in table.index], fontsize="small")
        axes[1].set_yticks(y, ["" for _ in y])
    else:
        for ax in axes:
            ax.set_yticks([])
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=palette[name], linewidth=2) for name in palette]
    fitted_legend(fig, handles, list(palette), ncol=6)
    return titled(fig, f"{metric}: mean and rank intervals, tiers", dataset)


@_later
def group_means(means: pd.DataFrame, metric: str, *, dataset: str) -> Plot:
    """Each system's mean per query group, bars side by side (``means``: index group, a column per
    system), the groups' query counts under their names when ``means`` has ``n_queries``."""
    counts = means["n_queries"] if "n_queries" in means.columns else None
    systems = [c for c in means.columns if c != "n_queries"]
    fig, axes = side_by_side(max(6.0, 1.2 * len(means) * max(1, len(systems)) / 3), 3.8)
    ax = axes[0]
    colours = system_colours(systems)
    width = 0.8 / len(systems)
    x = np.arange(len(means))
    for i, name in enumerate(systems):
        offset = (i - (len(systems) - 1) / 2) * width
        ax.bar(x + offset, means[name].to_numpy(dtype=np.float64), width, label=name, color=colours[name])
    labels = [
        shown(str(group)) + (f"\n({int(counts[group])} queries)" if counts is not None else "") for group in means.index
    ]
    ax.set_xticks(x, labels)
    ax.set_ylabel(metric)
    ax.grid(alpha=0.3, axis="y")
    legend_below(fig, axes, ncol=4)
    return titled(fig, f"{metric} by query group", dataset)
