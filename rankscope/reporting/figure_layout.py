"""Where a figure's panels go: margins and gaps from the texts drawn around each panel, measured on the
figure's own canvas, instead of matplotlib's constrained layout.

The constrained layout measured every artist of every panel twice and solved a system of constraints,
the largest part left of drawing a figure (docs/speed.md). Every plot of :mod:`rankscope.reporting.plots`
is a grid of panels (gridspec cells; a short last row centred on half-columns) with the figure's title
above and its legend below, so uniform gaps are enough: each gap is the widest text that must fit in it.
:func:`place` measures the texts around each panel (title, tick labels, axis labels) relative to the
panel, puts the axis labels beside the tick labels itself (matplotlib would measure the tick labels of
every panel sharing the axis again to place them, at each draw), sets every panel's position, and
measures once more with the tick labels of the final sizes. The legend below the panels adds its own
height to the figure's, so a legend of many rows never squeezes the panels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple, dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.backend_bases import RendererBase
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

PAD = 5.0
"""Points between a panel's texts and whatever is beside them, and from the canvas' edges."""


@dataclass(frozen=True)
class Sides:
    """How far, in pixels, a panel's texts reach beyond its box on each side."""

    left: float = 0.0
    right: float = 0.0
    bottom: float = 0.0
    top: float = 0.0

    def within(self, other: Sides) -> bool:
        """True when these reach no further than ``other`` (to half a pixel)."""
        return all(mine <= theirs + 0.5 for mine, theirs in zip(astuple(self), astuple(other)))


def place(fig: Figure, title: Text | None) -> None:
    """Lay ``fig`` out: ``title`` (the figure's, wrapped if wider than the canvas) at the top, the figure's
    legend at the bottom (the figure made taller by it), the panels in their grid cells between, each gap
    as wide as the texts that must fit in it."""
    renderer = cast("FigureCanvasAgg", fig.canvas).get_renderer()  # the canvas panels.new_figure gives it
    _plain_numbers(fig)
    legend_top = 0.0
    if fig.legends:  # one, below the panels ("lower center"): the canvas grown by its height
        (legend,) = fig.legends
        width_in, height_in = fig.get_size_inches()
        fig.set_size_inches(width_in, height_in + legend.get_window_extent(renderer).height / fig.dpi)
        legend_top = legend.get_window_extent(renderer).y1
    pad = PAD * fig.dpi / 72
    top = pad
    if title is not None:
        _fit_width(title, fig.bbox.width - 2 * pad, renderer)
        title.set_y(1 - pad / fig.bbox.height)
        title.set_verticalalignment("top")
        top += title.get_window_extent(renderer).height + pad
    ticks = {ax: _shown_ticks(ax) for ax in fig.axes}
    reserved = {ax: _measure(ax, renderer) for ax in fig.axes}
    _position(fig, reserved, top, legend_top + pad, pad)
    # a panel's size picks its ticks (so many labels per inch): those whose ticks changed are measured again
    changed = [ax for ax in fig.axes if _shown_ticks(ax) != ticks[ax]]
    again = {ax: _measure(ax, renderer) for ax in changed}
    if not all(again[ax].within(reserved[ax]) for ax in changed):
        reserved.update({ax: _widest(reserved[ax], again[ax]) for ax in changed})
        _position(fig, reserved, top, legend_top + pad, pad)
        for ax in fig.axes:
            _measure(ax, renderer)  # the axis labels beside this size's tick labels


def _plain_numbers(fig: Figure) -> None:
    """Tick labels as plain numbers, no offset or power of ten drawn apart from them at the axis' end
    (a text no margin here makes room for)."""
    from matplotlib.ticker import ScalarFormatter

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            formatter = axis.get_major_formatter()
            if isinstance(formatter, ScalarFormatter):
                formatter.set_useOffset(False)
                formatter.set_scientific(False)


def _fit_width(text: Text, width: float, renderer: RendererBase) -> None:
    """``text`` wrapped at spaces, each line as long as fits in ``width`` pixels (a word longer stays whole)."""
    words = text.get_text().split(" ")
    if text.get_window_extent(renderer).width <= width or len(words) == 1:
        return
    lines: list[str] = []
    for word in words:
        if lines:
            text.set_text(f"{lines[-1]} {word}")
            if text.get_window_extent(renderer).width <= width:
                lines[-1] = text.get_text()
                continue
        lines.append(word)
    text.set_text("\n".join(lines))


def _measure(ax: Axes, renderer: RendererBase) -> Sides:
    """How far the texts of ``ax`` reach beyond its box, its axis labels first put beside its tick labels."""
    box = ax.get_window_extent(renderer)
    ticks = _reach(box, [*_tick_labels(ax.xaxis), *_tick_labels(ax.yaxis)], renderer)
    labels = []
    for axis in (ax.xaxis, ax.yaxis):
        if axis.label.get_visible() and axis.label.get_text():
            _beside_ticks(ax, axis, ticks)
            labels.append(axis.label)
    titles = [ax.title] if ax.title.get_visible() and ax.title.get_text() else []
    return _widest(ticks, _reach(box, [*labels, *titles], renderer))


def _shown_ticks(ax: Axes) -> list[tuple[str, float, float]]:
    """The tick labels ``ax`` draws at its present size: their texts and where they go."""
    return [(label.get_text(), *label.get_position()) for axis in (ax.xaxis, ax.yaxis) for label in _tick_labels(axis)]


def _tick_labels(axis: Axis) -> list[Text]:
    """The tick labels drawn (the ticks in view, their texts set as a draw sets them)."""
    ticks = cast(Any, axis)._update_ticks()  # the ticks a draw draws (get_ticklabels: also those out of view)
    labels = [label for tick in ticks for label in (tick.label1, tick.label2)]
    return [label for label in labels if label.get_visible() and label.get_text()]


def _beside_ticks(ax: Axes, axis: Axis, ticks: Sides) -> None:
    """``axis``' label ``labelpad`` points beyond the tick labels, centred on the panel, fixed there: no draw
    measures the tick labels again to place it."""
    from matplotlib.transforms import ScaledTranslation

    figure = cast("Figure", ax.get_figure())
    side = axis.get_label_position()
    inches = getattr(ticks, side) / figure.dpi + axis.labelpad / 72
    shift = {"left": (-inches, 0.0), "right": (inches, 0.0), "bottom": (0.0, -inches), "top": (0.0, inches)}[side]
    anchor = {"left": (0.0, 0.5), "right": (1.0, 0.5), "bottom": (0.5, 0.0), "top": (0.5, 1.0)}[side]
    axis.set_label_coords(*anchor, transform=ax.transAxes + ScaledTranslation(*shift, figure.dpi_scale_trans))


def _reach(box: Bbox, texts: Sequence[Text], renderer: RendererBase) -> Sides:
    """How far ``texts`` reach beyond ``box`` (in pixels) on each side."""
    left = right = bottom = top = 0.0
    for text in texts:
        extent = text.get_window_extent(renderer)
        left, right = max(left, box.x0 - extent.x0), max(right, extent.x1 - box.x1)
        bottom, top = max(bottom, box.y0 - extent.y0), max(top, extent.y1 - box.y1)
    return Sides(left, right, bottom, top)


def _widest(one: Sides, other: Sides) -> Sides:
    return Sides(*(max(a, b) for a, b in zip(astuple(one), astuple(other))))


def _position(fig: Figure, reach: dict[Axes, Sides], top: float, bottom: float, pad: float) -> None:
    """Every panel in its grid cells: margins and uniform gaps as wide as the texts reaching into them."""
    specs = {ax: ax.get_subplotspec() for ax in reach}
    grid = next(iter(specs.values())).get_gridspec()  # type: ignore[union-attr]
    rows, cols = grid.get_geometry()
    wide = [0.0] * (cols + 1)  # what must fit left of each column (0: the margin) and right of the last
    tall = [0.0] * (rows + 1)  # above each row (0: the top margin) and below the last
    first_left = []  # panels whose left has no panel beside it: its text must fit in what lies left of it
    for ax, sides in reach.items():
        spec = specs[ax]
        assert spec is not None
        c0, c1, r0, r1 = spec.colspan.start, spec.colspan.stop, spec.rowspan.start, spec.rowspan.stop
        beside = [
            other
            for other, s in specs.items()
            if s is not None and s.colspan.stop == c0 and set(s.rowspan) & set(spec.rowspan)
        ]
        if c0 == 0 or beside:
            wide[c0] = max(wide[c0], sides.left + max((reach[o].right for o in beside), default=0.0))
        else:
            first_left.append((c0, sides.left))
        if c1 == cols:
            wide[cols] = max(wide[cols], sides.right)
        above = [
            o for o, s in specs.items() if s is not None and s.rowspan.stop == r0 and set(s.colspan) & set(spec.colspan)
        ]
        tall[r0] = max(tall[r0], sides.top + max((reach[o].bottom for o in above), default=0.0))
        if r1 == rows:
            tall[rows] = max(tall[rows], sides.bottom)
    width, height = fig.bbox.width, fig.bbox.height
    left, right = wide[0] + pad, wide[cols] + pad
    gap_w = max(wide[1:cols], default=0.0) + pad
    gap_h = max(tall[1:rows], default=0.0) + pad
    top_margin, bottom_margin = top + tall[0], bottom + tall[rows]
    ratios_w = [float(r) for r in cast("Sequence[float] | None", grid.get_width_ratios()) or [1.0] * cols]
    ratios_h = [float(r) for r in cast("Sequence[float] | None", grid.get_height_ratios()) or [1.0] * rows]

    def columns(left: float) -> list[float]:
        free = max(width - left - right - (cols - 1) * gap_w, 1.0)
        return [free * r / sum(ratios_w) for r in ratios_w]

    widths = columns(left)
    for c0, needed in first_left:  # a centred short row: its first panel's labels in the space left of it
        room = left + sum(widths[:c0]) + c0 * gap_w
        if room < needed + pad:
            left += needed + pad - room
            widths = columns(left)
    free_h = max(height - top_margin - bottom_margin - (rows - 1) * gap_h, 1.0)
    heights = [free_h * r / sum(ratios_h) for r in ratios_h]
    for ax, spec in specs.items():
        assert spec is not None
        c0, c1, r0, r1 = spec.colspan.start, spec.colspan.stop, spec.rowspan.start, spec.rowspan.stop
        x = left + sum(widths[:c0]) + c0 * gap_w
        w = sum(widths[c0:c1]) + (c1 - c0 - 1) * gap_w
        y_top = height - top_margin - sum(heights[:r0]) - r0 * gap_h
        h = sum(heights[r0:r1]) + (r1 - r0 - 1) * gap_h
        ax.set_position((x / width, (y_top - h) / height, w / width, h / height))
