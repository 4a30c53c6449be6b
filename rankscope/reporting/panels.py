"""What every plot is built from: a figure on its own Agg canvas, panels in rows without an empty slot,
a legend below them that fits the canvas, a colour and line style per system, texts as they are shown,
and the title that names the dataset (:func:`titled`, which lays the figure out).

Figures are drawn on matplotlib's Agg canvas made here, never through pyplot's global state, so
importing rankscope does not touch the user's matplotlib backend and plots work on machines without a
display. The panels are placed by :mod:`rankscope.reporting.figure_layout` from the texts around them,
measured once, not by matplotlib's constrained layout.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from rankscope.core.printable import printable
from rankscope.reporting.figure_layout import place
from rankscope.reporting.rendering import Plot
from rankscope.reporting.tables import wrap_cell

if TYPE_CHECKING:  # matplotlib is imported when a plot is drawn, not with rankscope
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure
    from matplotlib.typing import LineStyleType

_DPI = 110
OVERLAY_MAX = 4  # up to this many systems share one panel; more get one panel each (small multiples)
TITLE_Y = 1.0
"""Where a panel has its title: on top of it, where matplotlib's automatic placement puts it when nothing
is drawn above the panel (x ticks below, tick labels without an offset text: :mod:`figure_layout`), so no
draw measures every tick label again to place the titles."""


def new_figure(width: float, height: float) -> Figure:
    """A figure on its own Agg canvas, outside pyplot's global state (see the module doc)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=_DPI)  # laid out by figure_layout.place, in titled
    FigureCanvasAgg(fig)
    return fig


def titled(fig: Figure, title: str, dataset: str) -> Plot:
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


def plain_log_labels(axis: Axis) -> None:
    """A log axis labelled with plain numbers (1,000), on the ticks matplotlib's log formatter labels: its
    own labels are mathtext (10 to the power 3), whose parsing cost a quarter of a second a figure."""
    from matplotlib.ticker import LogFormatter

    class Plain(LogFormatter):
        def __call__(self, x: float, pos: int | None = None) -> str:
            return (f"{x:,.0f}" if x >= 1 else f"{x:g}") if super().__call__(x, pos) else ""

    axis.set_major_formatter(Plain(labelOnlyBase=False))
    axis.set_minor_formatter(Plain(labelOnlyBase=False))


def side_by_side(width: float, height: float, ncols: int = 1) -> tuple[Figure, Sequence[Axes]]:
    """A figure with ``ncols`` panels side by side."""
    fig = new_figure(width, height)
    return fig, fig.subplots(1, ncols, squeeze=False)[0]


def grid_shape(n: int, max_cols: int) -> list[int]:
    """Panels per row for ``n`` panels at most ``max_cols`` wide, rows as even as possible (7 at 4 -> [4, 3])."""
    rows = -(-n // max_cols)
    base, extra = divmod(n, rows)
    return [base + (i < extra) for i in range(rows)]


def panel_grid(
    n: int, width: float, height: float, max_cols: int, sharey: bool = True, sharex: bool = True
) -> tuple[Figure, list[Axes]]:
    """``n`` panels of ``width`` x ``height`` inches in rows of :func:`grid_shape`, a short row centred
    (no empty slot), sharing, with ``sharex`` and ``sharey``, the x and y axes."""
    shape = grid_shape(n, max_cols)
    ncols = shape[0]
    fig = new_figure(width * ncols, height * len(shape))
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


def row_starts(n: int, max_cols: int) -> list[int]:
    """Indices of the first panel of each row in :func:`panel_grid`' order (they carry the y label)."""
    starts = np.cumsum([0, *grid_shape(n, max_cols)])[:-1]
    return [int(i) for i in starts]


def legend_below(fig: Figure, axes: Sequence[Axes], ncol: int) -> None:
    """One legend for the figure, below the panels (outside every axes, so it never covers data)."""
    handles, labels = axes[0].get_legend_handles_labels()
    fitted_legend(fig, handles, labels, ncol)


def fitted_legend(fig: Figure, handles: Sequence[Any], labels: Sequence[str], ncol: int) -> None:
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


def system_colours(names: Sequence[str]) -> dict[str, object]:
    """One colour per system, in order, the same in every panel of a figure (repeats after 10: see
    :func:`system_looks`)."""
    from matplotlib import colormaps

    palette = cast("Sequence[Any]", cast("ListedColormap", colormaps["tab10"]).colors)
    return {name: palette[i % len(palette)] for i, name in enumerate(names)}


def system_looks(names: Sequence[str]) -> dict[str, tuple[object, LineStyleType]]:
    """A colour and line style per system, no two systems alike: ten colours, then the ten again
    dashed, dotted, dash-dotted (one panel can hold 40 systems that can be told apart)."""
    colours = system_colours(names)
    return {name: (colours[name], LINE_STYLES[(i // 10) % len(LINE_STYLES)]) for i, name in enumerate(names)}


def panel_title(text: str, width: int = 28) -> str:
    """A panel's title wrapped to ``width`` characters (after a space, ``,`` or ``/``), so long system
    names in a grid of panels never run into their neighbours."""
    return "\n".join(wrap_cell(text, width))


def system_lines(
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
    colours = system_colours(names)
    if len(names) <= OVERLAY_MAX:
        fig, axes = panel_grid(len(columns), 5.0, 3.6, max_cols=len(columns))
        for ax, (column, label) in zip(axes, columns.items()):
            for name, frame in frames.items():
                ax.plot(frame.index, frame[column], marker="o", color=colours[name], label=name)
            style_axis(ax)
            ax.set_title(label, y=TITLE_Y)
        axes[0].set_ylabel(ylabel)
        legend_below(fig, axes, ncol=4)
        return fig
    styles = LINE_STYLES
    reference = names[0] if reference is None else reference
    fig, axes = panel_grid(len(names), 3.3, 2.6, max_cols=4)
    for ax, name in zip(axes, names):
        for (column, label), style in zip(columns.items(), styles):
            if name != reference:
                ref = frames[reference]
                ax.plot(ref.index, ref[column], style, color="0.65", label=f"{label} {reference}")
            frame = frames[name]
            ax.plot(frame.index, frame[column], style, marker="o", markersize=3, color=colours[name], label=label)
        style_axis(ax)
        ax.set_title(panel_title(name), fontsize="medium", y=TITLE_Y)
    for i in row_starts(len(names), 4):
        axes[i].set_ylabel(ylabel)
    from matplotlib.lines import Line2D

    # the legend explains line styles, so its lines are neutral (each panel has its own colour)
    handles = [
        Line2D([], [], linestyle=style, color=colour, marker=marker, markersize=3)
        for style in styles[: len(columns)]
        for colour, marker in (("black", "o"), ("0.65", ""))
    ]
    labels = [text for label in columns.values() for text in (label, f"{label} {reference}")]
    fitted_legend(fig, handles, labels, ncol=4)
    return fig
