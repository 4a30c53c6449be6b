"""Plots stay readable with many systems: one panel per system beyond four, shared axes, the legend
outside every panel, no empty slot in a grid (issue 17). Facts read off the drawn figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankscope.reporting import panels, plots, rendering

KS = [1, 3, 5, 10, 20, 50, 100]


def curves(n: int) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(n)
    out = {}
    for i in range(n):
        hit = np.sort(rng.uniform(0.2, 1.0, len(KS)))
        out[f"sys{i}"] = pd.DataFrame({"hit": hit, "recall": hit * 0.7}, index=pd.Index(KS, name="K"))
    return out


def laid_out(plot: rendering.Plot):
    """The figure after its layout is solved (as every saved file shows it)."""
    plot.figure.draw_without_rendering()
    return plot.figure


def bboxes(fig):
    renderer = fig.canvas.get_renderer()
    return [ax.get_window_extent(renderer) for ax in fig.axes]


def assert_legend_outside_axes(fig) -> None:
    renderer = fig.canvas.get_renderer()
    assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in fig.axes)
    legend = fig.legends[0].get_window_extent(renderer)
    for box in bboxes(fig):
        assert not legend.overlaps(box)


def assert_no_empty_axes(fig) -> None:
    for ax in fig.axes:
        assert ax.get_visible() and (ax.lines or ax.patches or ax.collections), ax.get_title()


@pytest.mark.parametrize("n", [2, 4])
def test_few_systems_share_one_panel_per_measure(n: int) -> None:
    fig = laid_out(plots.cutoff_curves(curves(n), dataset="d"))
    assert [ax.get_title() for ax in fig.axes] == ["Hit@K", "Recall@K"]
    assert all(len(ax.lines) == n for ax in fig.axes)
    assert {ax.get_ylim() for ax in fig.axes} == {(0.0, 1.0)}
    assert_legend_outside_axes(fig)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == list(curves(n))


@pytest.mark.slow
def test_eight_systems_get_small_multiples_with_the_reference_in_each() -> None:
    data = curves(8)
    fig = laid_out(plots.cutoff_curves(data, dataset="cranfield", reference="sys3"))
    assert [ax.get_title() for ax in fig.axes] == list(data)  # panel count = systems
    assert len({ax.get_ylim() for ax in fig.axes}) == 1 and len({ax.get_xlim() for ax in fig.axes}) == 1
    for ax in fig.axes:  # the system's two lines, plus the reference's two in every other panel
        assert len(ax.lines) == (2 if ax.get_title() == "sys3" else 4)
        grey = [line for line in ax.lines if line.get_color() == "0.65"]
        assert all(np.allclose(line.get_ydata(), data["sys3"][c]) for line, c in zip(grey, ("hit", "recall")))
    assert_no_empty_axes(fig)
    assert_legend_outside_axes(fig)
    assert fig._suptitle.get_text() == "Hit@K and Recall@K - cranfield"
    rows = sorted({round(box.y0) for box in bboxes(fig)})
    assert len(rows) == 2  # 4 + 4


@pytest.mark.slow
def test_per_query_panels_share_y_and_leave_no_empty_slot() -> None:
    rng = np.random.default_rng(0)
    diffs = {f"sys{i}": pd.Series(rng.normal(0, 0.1 * (i + 1), 50)) for i in range(7)}
    fig = laid_out(plots.per_query_difference(diffs, "ndcg@10", "bm25", dataset="d"))
    assert len(fig.axes) == 7
    assert len({ax.get_ylim() for ax in fig.axes}) == 1  # one scale: panels compare at a glance
    low, high = fig.axes[0].get_ylim()
    assert low <= min(d.min() for d in diffs.values()) and high >= max(d.max() for d in diffs.values())
    assert_no_empty_axes(fig)
    boxes = bboxes(fig)
    width = fig.bbox.width
    by_row: dict[int, list] = {}
    for box in boxes:
        by_row.setdefault(round(box.y0), []).append(box)
    assert sorted(len(r) for r in by_row.values()) == [2, 2, 3]
    for row in by_row.values():  # every row, short ones too, is centred: no empty slot at its end
        centre = (min(b.x0 for b in row) + max(b.x1 for b in row)) / 2
        assert abs(centre - width / 2) < 0.06 * width


def test_grid_shape_is_even() -> None:
    assert panels.grid_shape(7, 3) == [3, 2, 2]
    assert panels.grid_shape(8, 4) == [4, 4]
    assert panels.grid_shape(5, 4) == [3, 2]
    assert panels.grid_shape(1, 3) == [1]


@pytest.mark.slow
def test_compare_report_with_eight_systems_stays_narrow_and_shares_axes() -> None:
    from rankscope.workflows.compare import compare
    from rankscope.workflows.compare.result import build_report, cutoff_table_of
    from tests.workflows.tiny_collection import DATA

    specs = ["bm25", "tfidf", "bm25:k1=0.9,b=0.4", "bm25:variant=bm25l", "bm25:variant=bm25+", "bm25:b=0.3"]
    specs += ["tfidf:variant=classic", "bm25:variant=okapi"]
    result = compare(DATA, specs, ["ndcg@10", "map"], depth=5)
    report = build_report(result)
    hit = cutoff_table_of(result, "hit")
    assert list(hit.index) == specs and list(hit.columns) == ["@1", "@3", "@5"]  # one row per system
    assert hit.loc["tfidf", "@5"] == result.curves.set_index(["retriever", "K"]).loc[("tfidf", 5), "hit"]
    rows = [b for b in report.blocks if b.kind == "row"]
    assert [len(b.children) for b in rows[:1]] == [2]  # Hit@K and Recall@K tables side by side
    curves = report.images["hit_recall_at_k"].figure
    curves.draw_without_rendering()
    assert [ax.get_title() for ax in curves.axes] == specs
    assert_no_empty_axes(curves)
    assert_legend_outside_axes(curves)
    diffs = report.images["per_query_difference"].figure
    assert len(diffs.axes) == 7 and len({ax.get_ylim() for ax in diffs.axes}) == 1


def test_diagnose_report_puts_each_plot_beside_its_table() -> None:
    from rankscope.workflows.diagnose.result import build_report
    from rankscope.workflows.diagnose.workflow import diagnose
    from tests.workflows.tiny_collection import DATA

    report = build_report(diagnose(DATA, "bm25", vs="tfidf", depth=5))
    rows = [b for b in report.blocks if b.kind == "row"]
    pairs = [(b.children[0].kind, b.children[1].kind, b.children[1].name) for b in rows]
    assert ("table", "image", "first_relevant_rank") in pairs
    assert ("table", "image", "misses.bm25") in pairs and ("table", "image", "misses.tfidf") in pairs
    first_plot = next(i for i, b in enumerate(report.blocks) if b.kind == "row" and b.children[1].kind == "image")
    first_worst = next(i for i, b in enumerate(report.blocks) if b.kind == "heading" and "worst" in b.text)
    assert first_plot < first_worst  # plots come before the long per-query tables, not after them
    misses = next(b for b in rows if b.children[1].name == "misses.bm25")
    assert misses.children[0].frame.index.name == "K"  # the table that plot draws: misses per K


@pytest.mark.parametrize("count", [5, 80])
def test_rank_intervals_draw_every_system_sorted_by_mean_coloured_by_tier(count: int) -> None:
    from rankscope.evaluation.tiers import rank_tiers

    rng = np.random.default_rng(count)
    values = pd.DataFrame(rng.normal(0, 0.2, (40, count)) + np.linspace(0, 1, count))
    values.columns = [f"sys{k}" for k in range(count)]
    found = rank_tiers(values, n_resamples=100)
    fig = laid_out(plots.rank_intervals(found.table, "nDCG@10", dataset="d"))
    means, ranks = fig.axes
    segments = means.collections[0].get_segments()
    assert len(segments) == count  # one interval per system
    heights = [segment[0][1] for segment in segments]
    assert heights == sorted(heights, reverse=True)  # the table's order: best on top
    lows = [segment[0][0] for segment in segments]
    np.testing.assert_allclose(lows, found.table["mean_low"])
    np.testing.assert_allclose([s[1][0] for s in ranks.collections[0].get_segments()], found.table["rank_high"])
    labels = [t.get_text() for t in means.get_yticklabels()]
    assert labels == (list(found.table.index) if count <= plots.LABELLED_MAX else [])
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [f"tier {t}" for t in sorted(set(found.table["tier"]))]
    assert_legend_outside_axes(fig)


def test_per_query_bars_are_each_query_sorted_wins_green_losses_red() -> None:
    from matplotlib.colors import to_hex

    diff = {"tfidf": pd.Series([0.1, -0.2, 0.0, 0.3, -0.05], index=["q1", "q2", "q3", "q4", "q5"])}
    fig = laid_out(plots.per_query_difference(diff, "ndcg@10", "bm25", dataset="d"))
    (ax,) = fig.axes
    wins, losses = ax.patches  # one outline each, every query a bar one unit wide at its sorted position
    for patch, colour, heights in (
        (wins, panels.WIN, [0.3, 0.1, 0, 0, 0]),
        (losses, panels.LOSS, [0, 0, 0, -0.05, -0.2]),
    ):
        data = patch.get_data()
        np.testing.assert_allclose(data.values, heights)
        np.testing.assert_allclose(data.edges, np.arange(6) - 0.5)
        assert data.baseline == 0 and patch.get_fill() and to_hex(patch.get_facecolor()) == colour
    low, high = ax.get_ylim()
    assert low < -0.2 and high > 0.3 and ax.get_xlim()[0] < -0.5 and ax.get_xlim()[1] > 4.5
    assert ax.get_title() == "tfidf: 2 better, 2 worse"
