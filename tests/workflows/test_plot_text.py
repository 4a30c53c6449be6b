"""What figures draw as text: users' names through the one rule of the terminal (``printable``, line by
line), so no control character reaches a font (matplotlib's "Glyph missing") or an SVG (XML refuses
most of them); log axes labelled with plain numbers, never mathtext. Facts read off the drawn figures."""

from __future__ import annotations

import warnings
import xml.dom.minidom

import numpy as np
import pandas as pd
import pytest

from rankscope.core.printable import printable
from rankscope.reporting import panels, plots, rendering

HOSTILE = ["a\x1b[31mred\x07", "b\u202eevil", "c\x00d\te", "plain"]


def texts(plot: rendering.Plot) -> list[str]:
    """Every text of the drawn figure, tick labels included."""
    from matplotlib.text import Text

    plot.render("svg")
    return [t.get_text() for t in plot.figure.findobj(Text) if t.get_text()]


def drawn_without_warnings(make):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" is a UserWarning
        plot = make()
        svg = plot.render("svg").decode("utf-8")
    xml.dom.minidom.parseString(svg)  # well-formed: no character XML refuses
    return plot


def test_shown_is_printable_per_line() -> None:
    assert panels.shown("sys\x1b[1mbold\nsecond\x07 line") == "sysbold\nsecond\ufffd line"
    assert panels.shown("tab\there") == printable("tab\there") == "tab here"
    assert panels.shown("plain\ntwo lines") == "plain\ntwo lines"


@pytest.mark.parametrize("count", [3, 6])  # one panel per measure; small multiples with wrapped titles
def test_system_names_with_control_characters_are_drawn_as_the_terminal_shows_them(count: int) -> None:
    ks = [1, 10, 100]
    names = (HOSTILE + [f"extra {i}" for i in range(count)])[:count]
    frames = {n: pd.DataFrame({"hit": [0.2, 0.5, 0.9], "recall": [0.1, 0.3, 0.6]}, index=ks) for n in names}
    plot = drawn_without_warnings(lambda: plots.cutoff_curves(frames, dataset="cran\x1b]0;x\x07field"))
    drawn = texts(plot)
    assert plot.title == "Hit@K and Recall@K - cranfield" and plot.title in drawn
    legend = [t.get_text() for t in plot.figure.legends[0].get_texts()]
    if count <= panels.OVERLAY_MAX:
        assert legend == [printable(n) for n in names]
    else:  # one panel per system, each titled with its (wrapped) name
        titles = [ax.get_title() for ax in plot.figure.axes]
        assert titles == [panels.shown(panels.panel_title(n)) for n in names]
        assert [t.replace("\n", " ") for t in titles] == [printable(n) for n in names]
    assert not any(c in text for text in drawn for c in "\x1b\x07\x00\u202e\t")


def test_fixed_tick_labels_are_shown_too() -> None:
    table = pd.DataFrame(
        {"tier": [1, 1, 2, 2], "mean": [0.5, 0.4, 0.3, 0.2], "rank": [1.0, 2.0, 3.0, 4.0]},
        index=pd.Index(HOSTILE, name="system"),
    )
    for column, half in (("mean", 0.05), ("rank", 0.5)):
        table[f"{column}_low"], table[f"{column}_high"] = table[column] - half, table[column] + half
    plot = drawn_without_warnings(lambda: plots.rank_intervals(table, "nDCG@10", dataset="d"))
    assert [t.get_text() for t in plot.figure.axes[0].get_yticklabels()] == [printable(n) for n in HOSTILE]
    means = pd.DataFrame({"s\x1b[0m1": [0.2, 0.4], "n_queries": [3, 4]}, index=pd.Index(["short\x07", "long"]))
    plot = drawn_without_warnings(lambda: plots.group_means(means, "map", dataset="d"))
    labels = [t.get_text() for t in plot.figure.axes[0].get_xticklabels()]
    assert labels == ["short\ufffd\n(3 queries)", "long\n(4 queries)"]  # the figure's own line break stays
    grid = pd.DataFrame({"retriever": ["bm25\x1b[2J", "tfidf", "bm25\x1b[2J", "tfidf"], "k1": [0.9, 0.9, 1.2, 1.2]})
    grid["mean"] = [0.3, 0.2, 0.4, 0.1]
    best = {"retriever": "bm25\x1b[2J", "k1": 1.2}
    plot = drawn_without_warnings(lambda: plots.marginals(grid, ["retriever", "k1"], "map\x07", best, dataset="d"))
    assert [t.get_text() for t in plot.figure.axes[0].get_xticklabels()] == ["bm25", "tfidf"]
    assert plot.figure.axes[0].yaxis.label.get_text() == "map\ufffd"


def test_log_axis_labels_are_plain_numbers() -> None:
    rng = np.random.default_rng(3)
    wide = {"a": rng.lognormal(5, 1.5, 300)}  # several decades: powers of ten labelled
    narrow = {"a": rng.lognormal(5.5, 0.05, 300)}  # under a decade: matplotlib labels minor ticks too
    for values, budgets in ((wide, [500, 2000]), (narrow, [250])):
        plot = plots.tokens_to_first(values, budgets, dataset="d")
        plot.render("svg")
        ax = plot.figure.axes[0]
        low, high = ax.get_xlim()
        shown = [
            (tick.get_loc(), tick.label1.get_text())
            for tick in [*ax.xaxis.get_major_ticks(), *ax.xaxis.get_minor_ticks()]
            if tick.label1.get_text() and low <= tick.get_loc() <= high
        ]
        assert len(shown) >= 2
        for location, label in shown:
            assert "$" not in label and label == f"{location:,.0f}"
