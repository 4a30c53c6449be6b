"""The workflows' plots, each returned as a :class:`Plot` that renders to PNG, SVG or PDF.

Figures are drawn on matplotlib's Agg canvas chosen inside each function, never
through pyplot's global state, so importing rankscope does not touch the
user's matplotlib backend and plots work on machines without a display. A figure
is drawn once and saved to every format asked for (each format rendered at most
once); the bytes are reproducible (no dates or versions in the metadata, fixed
SVG ids).

Layout rules for many systems (issue 17): legends sit below the axes, panels
that compare systems share their axes, and a grid of panels never has an empty
slot (a short last row is centred instead). Every title names the dataset. The
panels are placed by :mod:`rankscope.reporting.figure_layout` from the texts
around them, measured once, not by matplotlib's constrained layout.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, cast

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.phases import phase
from rankscope.core.printable import printable
from rankscope.reporting.figure_layout import place
from rankscope.reporting.tables import wrap_cell

if TYPE_CHECKING:  # matplotlib is imported when a plot is drawn, not with rankscope
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure
    from matplotlib.typing import LineStyleType

_DPI = 110
FIGURE_FORMATS = ("png", "svg", "pdf")
"""Every format a plot renders to (``--figure-format`` accepts these)."""
DEFAULT_FIGURES = ("svg",)
"""What a report folder holds by default: each plot as SVG, vector, drawn once (report.md shows it,
report.html inlines it). PNG and PDF only on request (``--figure-format svg png pdf``): a PNG is a second
render of every plot, and the PDF's TrueType subsetting (fontTools, journals' requirement) cost more than
the PNG and SVG together, its import alone about a second (docs/speed.md)."""
FIGURE_MODULES = ("matplotlib.figure", "matplotlib.backends.backend_agg", "matplotlib.backends.backend_svg")
"""What drawing and saving a figure imports (about 0.6 s): a command writing a folder has a child import
them while it computes (:func:`rankscope.core.forked.warm`)."""
OVERLAY_MAX = 4  # up to this many systems share one panel; more get one panel each (small multiples)
TITLE_Y = 1.0
"""Where a panel has its title: on top of it, where matplotlib's automatic placement puts it when nothing
is drawn above the panel (x ticks below, tick labels without an offset text: :mod:`figure_layout`), so no
draw measures every tick label again to place the titles."""
_SAVE: dict[str, dict[str, Any]] = {
    "png": {"metadata": {"Software": None}},
    "svg": {"metadata": {"Date": None, "Creator": None}},
    "pdf": {"metadata": {"CreationDate": None, "Creator": None, "Producer": None}},
}
_RC: dict[Any, Any] = {
    "svg.fonttype": "none",
    "pdf.fonttype": 42,
}  # SVG text stays text; PDF embeds TrueType (journals refuse Type 3)


def check_formats(formats: Sequence[str]) -> tuple[str, ...]:
    """The figure formats asked for, refused when empty, repeated or unknown (before any computing)."""
    formats = tuple(formats)
    unknown = [f for f in formats if f not in FIGURE_FORMATS]
    if unknown or not formats or len(set(formats)) < len(formats):
        raise RankscopeError(
            f"figure formats: expected one or more of {', '.join(FIGURE_FORMATS)} (each once), got {list(formats)}"
        )
    return formats


class Plot:
    """A figure, drawn when first needed (:attr:`figure`, :meth:`render`): the plot functions of this module
    return it undrawn, so a process that builds a report and never shows its plots (the parent writing
    report.md and report.html while its forked child draws, :mod:`rankscope.reporting.finish`) never
    imports matplotlib. :meth:`render` gives its bytes in one format, each format rendered once."""

    def __init__(self, figure: Figure, title: str) -> None:
        self._figure: Figure | None = figure
        self._title = title
        self._draw: Callable[[], Plot] | None = None
        self._rendered: dict[str, bytes] = {}

    @classmethod
    def later(cls, draw: Callable[[], Plot]) -> Plot:
        """The plot ``draw()`` gives, drawn when first needed."""
        plot = cls.__new__(cls)
        plot._figure, plot._title, plot._draw, plot._rendered = None, "", draw, {}
        return plot

    @property
    def figure(self) -> Figure:
        """The matplotlib figure (drawn now if it was not)."""
        if self._figure is None:
            drawn = cast("Callable[[], Plot]", self._draw)()
            self._figure, self._title, self._draw = drawn.figure, drawn.title, None
        return self._figure

    @property
    def title(self) -> str:
        """The figure's title, which names the dataset (the figure drawn now if it was not)."""
        return self._title if self.figure is not None else ""

    def __repr__(self) -> str:
        if self._figure is None:
            return "Plot(not drawn yet)"
        return f"Plot({self._title!r}, {len(self._figure.axes)} axes)"

    def render(self, fmt: str) -> bytes:
        """The figure as ``png``, ``svg`` or ``pdf`` bytes."""
        import matplotlib

        if fmt in self._rendered:
            return self._rendered[fmt]
        with phase("figures"):
            check_formats([fmt])
            buffer = io.BytesIO()
            # the SVG ids are hashes salted with the title: fixed bytes, and unique per figure when
            # several SVGs are inlined in one HTML page (clip paths are referenced by id)
            with matplotlib.rc_context({**_RC, "svg.hashsalt": self.title}):
                self.figure.savefig(buffer, format=fmt, **_SAVE[fmt])
            self._rendered[fmt] = buffer.getvalue()
        return self._rendered[fmt]

    def svg_inline(self, prefix: str = "") -> str:
        """The SVG element alone (no XML prolog or DOCTYPE), to place inside an HTML page; every element
        id (matplotlib numbers them ``patch_1``, ``line2d_1``... in each figure) and each reference to
        one starts with ``prefix``, so several figures on one page keep their ids unique."""
        text = self.render("svg").decode("utf-8")
        return prefixed_ids(text[text.index("<svg") :].strip(), prefix)


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


def prefixed_ids(svg: str, prefix: str) -> str:
    """``svg`` with ``prefix`` before every ``id="..."`` and every ``url(#...)`` / ``href="#..."``
    naming one of them (references to anything else are left as they are)."""
    if not prefix:
        return svg
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m[1]}"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m[1]})" if m[1] in ids else m[0], svg)
    return re.sub(r'((?:xlink:)?href)="#([^"]+)"', lambda m: f'{m[1]}="#{prefix}{m[2]}"' if m[2] in ids else m[0], svg)


def _new_figure(width: float, height: float) -> Figure:
    """A figure on its own Agg canvas, outside pyplot's global state (see the module doc)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=_DPI)  # laid out by figure_layout.place, in _done
    FigureCanvasAgg(fig)
    return fig


def _done(fig: Figure, title: str, dataset: str) -> Plot:
    """The figure titled ``<title> - <dataset>`` (the dataset on every figure, for a paper's reader), every
    text of it shown as :func:`shown` gives it, laid out (:func:`~rankscope.reporting.figure_layout.place`)."""
    full = shown(f"{title} - {dataset}" if dataset else title)
    text = fig.suptitle(full, fontweight="bold")
    _shown_texts(fig)
    place(fig, text)
    return Plot(fig, full)


def shown(text: str) -> str:
    """``text`` as a figure draws it: each line through :func:`rankscope.core.printable.printable` (the
    figure's own line breaks, a wrapped title's, stay). A control character of a user's name (a run's,
    a dataset's) is no glyph of any font (matplotlib warned "Glyph missing") and, in an SVG, no
    character XML allows; it is drawn as U+FFFD, as the terminal shows it."""
    return "\n".join(printable(line) for line in text.split("\n"))


def _shown_texts(fig: Figure) -> None:
    """The texts the plots set (panel titles, axis labels, legends; the colorbar's label is its axis's) as
    :func:`shown`: named, since walking every artist (``findobj``) made every tick, 0.03-0.07 s a report.
    Tick labels are made at drawing time from what ``set_xticks(x, labels)`` was given, so each plot
    gives it :func:`shown` labels."""
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes)]
    texts = [text for ax in fig.axes for text in (ax.title, ax.xaxis.label, ax.yaxis.label)]
    for text in [*texts, *(text for legend in legends if legend is not None for text in legend.get_texts())]:
        if (clean := shown(text.get_text())) != text.get_text():
            text.set_text(clean)


def _plain_log_labels(axis: Axis) -> None:
    """A log axis labelled with plain numbers (1,000), on the ticks matplotlib's log formatter labels: its
    own labels are mathtext (10 to the power 3), whose parsing cost a quarter of a second a figure."""
    from matplotlib.ticker import LogFormatter

    class Plain(LogFormatter):
        def __call__(self, x: float, pos: int | None = None) -> str:
            return (f"{x:,.0f}" if x >= 1 else f"{x:g}") if super().__call__(x, pos) else ""

    axis.set_major_formatter(Plain(labelOnlyBase=False))
    axis.set_minor_formatter(Plain(labelOnlyBase=False))


def _figure(width: float, height: float, ncols: int = 1) -> tuple[Figure, Sequence[Axes]]:
    """A figure with ``ncols`` panels side by side."""
    fig = _new_figure(width, height)
    return fig, fig.subplots(1, ncols, squeeze=False)[0]


def grid_shape(n: int, max_cols: int) -> list[int]:
    """Panels per row for ``n`` panels at most ``max_cols`` wide, rows as even as possible (7 at 4 -> [4, 3])."""
    rows = -(-n // max_cols)
    base, extra = divmod(n, rows)
    return [base + (i < extra) for i in range(rows)]


def _panels(
    n: int, width: float, height: float, max_cols: int, sharey: bool = True, sharex: bool = True
) -> tuple[Figure, list[Axes]]:
    """``n`` panels of ``width`` x ``height`` inches in rows of :func:`grid_shape`, a short row centred
    (no empty slot), sharing, with ``sharex`` and ``sharey``, the x and y axes."""
    shape = grid_shape(n, max_cols)
    ncols = shape[0]
    fig = _new_figure(width * ncols, height * len(shape))
    grid = fig.add_gridspec(len(shape), 2 * ncols)  # half-columns, so a short row can be centred
    axes: list[Axes] = []
    for row, count in enumerate(shape):
        offset = ncols - count  # in half-columns
        for col in range(count):
            first = axes[0] if axes else None
            axes.append(
                fig.add_subplot(
                    grid[row, offset + 2 * col : offset + 2 * col + 2],
                    sharex=first if sharex else None,
                    sharey=first if sharey else None,
                )
            )
    return fig, axes


def _row_starts(n: int, max_cols: int) -> list[int]:
    """Indices of the first panel of each row in :func:`_panels`' order (they carry the y label)."""
    starts = np.cumsum([0, *grid_shape(n, max_cols)])[:-1]
    return [int(i) for i in starts]


def _legend_below(fig: Figure, axes: Sequence[Axes], ncol: int) -> None:
    """One legend for the figure, below the panels (outside every axes, so it never covers data)."""
    handles, labels = axes[0].get_legend_handles_labels()
    _fitted_legend(fig, handles, labels, ncol)


def _fitted_legend(fig: Figure, handles: Sequence[Any], labels: Sequence[str], ncol: int) -> None:
    """A legend below the panels in at most ``ncol`` columns, fewer when its rows would be wider than
    the figure (long system names): the legend stays inside the canvas."""
    ncol = max(1, min(ncol, len(labels)))
    labels = [shown(label) for label in labels]  # measured as drawn
    while True:
        legend = fig.legend(handles, labels, loc="outside lower center", ncol=ncol, fontsize="small")
        if ncol == 1:
            return
        # the legend's width is its texts' and handles' alone: measured on the canvas's renderer without
        # drawing (and laying out) the whole figure, which cost as much as saving it (docs/speed.md)
        if legend.get_window_extent().width <= fig.bbox.width * 0.98:
            return
        legend.remove()
        ncol -= 1


LINE_STYLES: tuple[LineStyleType, ...] = ("-", "--", ":", "-.")
WIN, LOSS = "#2a9d4b", "#c0392b"  # what went well (a win, a hit) and badly (a loss, a recall miss)


def _colours(names: Sequence[str]) -> dict[str, object]:
    """One colour per system, in order, the same in every panel of a figure (repeats after 10: see
    :func:`_looks`)."""
    from matplotlib import colormaps

    palette = cast("Sequence[Any]", cast("ListedColormap", colormaps["tab10"]).colors)
    return {name: palette[i % len(palette)] for i, name in enumerate(names)}


def _looks(names: Sequence[str]) -> dict[str, tuple[object, LineStyleType]]:
    """A colour and line style per system, no two systems alike: ten colours, then the ten again
    dashed, dotted, dash-dotted (one panel can hold 40 systems that can be told apart)."""
    colours = _colours(names)
    return {name: (colours[name], LINE_STYLES[(i // 10) % len(LINE_STYLES)]) for i, name in enumerate(names)}


def panel_title(text: str, width: int = 28) -> str:
    """A panel's title wrapped to ``width`` characters (after a space, ``,`` or ``/``), so long system
    names in a grid of panels never run into their neighbours."""
    return "\n".join(wrap_cell(text, width))


def _system_lines(
    frames: Mapping[str, pd.DataFrame],
    columns: Mapping[str, str],
    reference: str | None,
    style_axis: Callable[[Axes], None],
    ylabel: str,
) -> Figure:
    """Each system's ``columns`` (column -> label) against the frames' index.

    Up to :data:`OVERLAY_MAX` systems: one panel per column, one line per system. More: one panel
    per system (small multiples, shared axes), the columns as line styles and ``reference``
    (default: the first system) in grey in every other panel, so every line can be told apart
    and compared with the reference. The legend sits below the panels.
    """
    names = list(frames)
    colours = _colours(names)
    if len(names) <= OVERLAY_MAX:
        fig, axes = _panels(len(columns), 5.0, 3.6, max_cols=len(columns))
        for ax, (column, label) in zip(axes, columns.items()):
            for name, frame in frames.items():
                ax.plot(frame.index, frame[column], marker="o", color=colours[name], label=name)
            style_axis(ax)
            ax.set_title(label, y=TITLE_Y)
        axes[0].set_ylabel(ylabel)
        _legend_below(fig, axes, ncol=4)
        return fig
    styles = LINE_STYLES
    reference = names[0] if reference is None else reference
    fig, axes = _panels(len(names), 3.3, 2.6, max_cols=4)
    for ax, name in zip(axes, names):
        for (column, label), style in zip(columns.items(), styles):
            if name != reference:
                ref = frames[reference]
                ax.plot(ref.index, ref[column], style, color="0.65", label=f"{label} {reference}")
            frame = frames[name]
            ax.plot(frame.index, frame[column], style, marker="o", markersize=3, color=colours[name], label=label)
        style_axis(ax)
        ax.set_title(panel_title(name), fontsize="medium", y=TITLE_Y)
    for i in _row_starts(len(names), 4):
        axes[i].set_ylabel(ylabel)
    from matplotlib.lines import Line2D

    # the legend explains line styles, so its lines are neutral (each panel has its own colour)
    handles = [
        Line2D([], [], linestyle=style, color=colour, marker=marker, markersize=3)
        for style in styles[: len(columns)]
        for colour, marker in (("black", "o"), ("0.65", ""))
    ]
    labels = [text for label in columns.values() for text in (label, f"{label} {reference}")]
    _fitted_legend(fig, handles, labels, ncol=4)
    return fig


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
    """Hit@K and Recall@K (the ``columns``) against K on a log axis, laid out by :func:`_system_lines`.

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
    fig = _system_lines(curves, labels, reference, style, "share")
    return _done(fig, " and ".join(labels.values()), dataset)


@_later
def precision_recall(curves: Mapping[str, pd.Series], *, dataset: str, reference: str | None = None) -> Plot:
    """Interpolated precision against recall (the 11 standard points), laid out by :func:`_system_lines`.

    ``curves`` maps a system to a series indexed by recall level.
    """

    def style(ax: Axes) -> None:
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("recall")
        ax.grid(alpha=0.3)

    frames = {name: series.rename("precision").to_frame() for name, series in curves.items()}
    fig = _system_lines(frames, {"precision": "interpolated precision"}, reference, style, "precision")
    return _done(fig, "Precision-recall (trec_eval iprec_at_recall)", dataset)


@_later
def per_query_difference(differences: Mapping[str, pd.Series], metric: str, baseline: str, *, dataset: str) -> Plot:
    """Per-query difference to the baseline, sorted, one panel per system (shared axes, no empty
    slot): wins above zero, losses below.

    Each query is a bar one unit wide centred on its position, drawn as two filled outlines, the wins and
    the losses (a tie, or a NaN, has no height): one path each instead of a patch per query, whose
    drawing and saving cost 0.2 s of CPU for Cranfield's 225 queries."""
    n = len(differences)
    width = max(3.6, 9.0 / min(n, 3))
    fig, axes = _panels(n, width, 2.8, max_cols=3)
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
    for i in _row_starts(n, 3):
        axes[i].set_ylabel(panel_title(f"{metric} - {baseline}", 32))
    return _done(fig, f"Per-query {metric} difference to {baseline}", dataset)


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
    fig = _new_figure(7.5, 5.5)
    ax, bar = fig.subplots(1, 2, width_ratios=[24, 1])  # the colour bar a cell of the grid, laid out with it
    row_name, column_name = names
    image = ax.pcolormesh(_edges(cols), _edges(rows), values, cmap="viridis", shading="flat")
    fig.colorbar(image, cax=bar, label=metric)
    _mark(ax, best, "best", names, marker="*", markersize=16, color="red", markeredgecolor="white")
    if default is not None:
        _mark(ax, default, "default", names, marker="X", markersize=10, color="white", markeredgecolor="black")
    ax.set_xlabel(column_name)
    ax.set_ylabel(row_name)
    _legend_below(fig, [ax], ncol=2)
    return _done(fig, f"{metric} over the grid", dataset)


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
    fig, axes = _figure(6.0, 3.6)
    ax = axes[0]
    colours = _colours(list(distributions))
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
    _legend_below(fig, axes, ncol=4)
    return _done(fig, "Where the first relevant document lands", dataset)


@_later
def miss_bars(breakdowns: Mapping[str, pd.DataFrame], *, dataset: str) -> Plot:
    """Stacked shares per K: hit, ranking miss (reranker can fix), recall miss (first stage must fix);
    one panel per system, shared axes."""
    fig, axes = _panels(len(breakdowns), 4.2, 3.2, max_cols=2)
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
    for i in _row_starts(len(breakdowns), 2):
        axes[i].set_ylabel("share of queries")
    _legend_below(fig, axes, ncol=3)
    return _done(fig, "Hits, ranking misses and recall misses", dataset)


@_later
def tokens_to_first(distributions: Mapping[str, np.ndarray], budgets: Sequence[int], *, dataset: str) -> Plot:
    """Share of queries whose first evidence lies within T tokens of context, against T (log axis),
    one step line per system; NaN (no evidence retrieved) never counts. Budgets as dashed lines."""
    fig, axes = _figure(8.0, 4.2)
    ax = axes[0]
    looks = _looks(list(distributions))
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
    _plain_log_labels(ax.xaxis)
    ax.set_ylim(0, 1)
    ax.set_xlabel("tokens of context T")
    ax.set_ylabel("share of queries with evidence within T")
    ax.grid(alpha=0.3)
    _legend_below(fig, axes, ncol=4)
    return _done(fig, "Tokens needed to reach the first evidence", dataset)


@_later
def marginals(
    grid: pd.DataFrame, params: Sequence[str], metric: str, best: Mapping[str, object], *, dataset: str
) -> Plot:
    """Each tuned parameter's marginal, one panel per parameter (a grid of three or more parameters
    has no heat map): for every value, the best ``mean`` over the other parameters' values (solid) and
    their average (dashed); the best point's value marked. ``grid`` has the parameters and ``mean``."""
    fig, axes = _panels(len(params), 3.6, 2.8, max_cols=3, sharex=False)  # each parameter its own x axis
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
    for i in _row_starts(len(params), 3):
        axes[i].set_ylabel(metric)
    _legend_below(fig, axes, ncol=3)
    return _done(fig, f"{metric} by each parameter", dataset)


LABELLED_MAX = 60  # up to this many systems the interval plot names each one on its y axis


@_later
def rank_intervals(table: pd.DataFrame, metric: str, *, dataset: str) -> Plot:
    """Each system's mean interval (left) and rank interval (right), one row per system sorted by
    mean (best on top), coloured by tier. ``table`` is :class:`rankscope.evaluation.tiers.Tiers`'
    ``table`` (index system; ``tier``, ``mean``, ``mean_low``, ``mean_high``, ``rank``, ``rank_low``,
    ``rank_high``). Beyond :data:`LABELLED_MAX` systems the rows are drawn unnamed (the table names them)."""
    count = len(table)
    fig, axes = _figure(9.0, min(2.2 + 0.22 * min(count, LABELLED_MAX), 16.0), ncols=2)
    y = np.arange(count)[::-1]
    tiers = table["tier"].to_numpy()
    from matplotlib.colors import to_hex

    palette = {
        name: to_hex(cast(Any, colour)) for name, colour in _colours([f"tier {t}" for t in sorted(set(tiers))]).items()
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
    _fitted_legend(fig, handles, list(palette), ncol=6)
    return _done(fig, f"{metric}: mean and rank intervals, tiers", dataset)


@_later
def group_means(means: pd.DataFrame, metric: str, *, dataset: str) -> Plot:
    """Each system's mean per query group, bars side by side (``means``: index group, a column per
    system), the groups' query counts under their names when ``means`` has ``n_queries``."""
    counts = means["n_queries"] if "n_queries" in means.columns else None
    systems = [c for c in means.columns if c != "n_queries"]
    fig, axes = _figure(max(6.0, 1.2 * len(means) * max(1, len(systems)) / 3), 3.8)
    ax = axes[0]
    colours = _colours(systems)
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
    _legend_below(fig, axes, ncol=4)
    return _done(fig, f"{metric} by query group", dataset)
