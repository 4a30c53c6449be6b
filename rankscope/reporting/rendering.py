"""A plot as the workflows hand it around: drawn when first needed, rendered to PNG, SVG or PDF once per
format, with reproducible bytes (no dates or versions in the metadata, fixed SVG ids). The plots
themselves are drawn by :mod:`rankscope.reporting.plots`."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from rankscope.core.errors import RankscopeError
from rankscope.core.phases import phase

if TYPE_CHECKING:  # matplotlib is imported when a plot is drawn, not with rankscope
    from matplotlib.figure import Figure

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


def prefixed_ids(svg: str, prefix: str) -> str:
    """``svg`` with ``prefix`` before every ``id="..."`` and every ``url(#...)`` / ``href="#..."``
    naming one of them (references to anything else are left as they are)."""
    if not prefix:
        return svg
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m[1]}"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m[1]})" if m[1] in ids else m[0], svg)
    return re.sub(r'((?:xlink:)?href)="#([^"]+)"', lambda m: f'{m[1]}="#{prefix}{m[2]}"' if m[2] in ids else m[0], svg)
