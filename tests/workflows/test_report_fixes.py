"""Report fixes (issue 29 item 13): unique SVG ids per report.html, legends inside the canvas, 16 lines
told apart, wrapped panel titles, significance as a grid after the figures, a marginal figure for
tunes of 3+ parameters, parameters as typed, worst queries and unjudged grades, one-line repr."""

from __future__ import annotations

import collections
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.corpora.export import export_dataset
from rankscope.reporting import plots
from tests.workflows.tiny_collection import small_dataset

LONG_NAMES = [f"sentences:{n} / bm25:k1=0.{k},b=0.4" for n in (100, 200, 300, 400) for k in range(4)]


def duplicate_ids(page: str) -> dict[str, int]:
    counts = collections.Counter(re.findall(r'\bid="([^"]+)"', page))
    return {name: n for name, n in counts.items() if n > 1}


def dangling_references(page: str) -> set[str]:
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    used = set(re.findall(r"url\(#([^)]+)\)", page)) | set(re.findall(r'href="#([^"]+)"', page))
    return used - ids


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every workflow's report.html on a small collection (rag with 16 systems)."""
    root = tmp_path_factory.mktemp("reports")
    export_dataset(small_dataset(), root / "small")
    data = ["--quiet"], ["--dataset", str(root / "small")]
    commands = {
        "compare": ["compare", "--retrievers", "bm25", "tfidf", "bm25:k1=0.9"],
        "diagnose": ["diagnose", "--retriever", "bm25", "--vs", "tfidf"],
        "tune": ["tune", "--k1", "0.5:1.5:0.5", "--b", "0.25:0.75:0.25", "--folds", "2"],
        "tune3": [
            "tune",
            "--param",
            "k1=0.5:1.5:0.5",
            "--param",
            "b=0.25:0.75:0.25",
            "--param",
            "variant=lucene,okapi",
            "--folds",
            "2",
        ],  # fmt: skip
        "rag": [
            "rag",
            "--chunking",
            "words:4:0",
            "words:6:2",
            "sentences:8",
            "--retrievers",
            "bm25",
            "tfidf",
            "bm25:k1=0.9",
            "bm25:b=0.4",
            "tfidf:variant=classic",
        ],  # fmt: skip
    }
    out = {}
    for name, args in commands.items():
        out[name] = root / name
        assert main([*data[0], args[0], *data[1], *args[1:], "--out", str(out[name])]) == 0, name
    return out


@pytest.mark.slow
def test_no_duplicate_ids_in_any_report(reports: dict[str, Path]) -> None:
    assert len(pd.read_csv(reports["rag"] / "summary.csv")) == 20  # 4 chunkings (whole too) x 5 retrievers
    for name, folder in reports.items():
        page = (folder / "report.html").read_text()
        assert page.count("<svg") >= 1, name
        assert duplicate_ids(page) == {}, name
        assert dangling_references(page) == set(), name  # every clip path and link still resolves


@pytest.mark.slow
def test_sixteen_rag_systems_are_told_apart_and_their_legend_fits() -> None:
    distributions = {name: np.arange(1.0, 6.0) * (i + 1) for i, name in enumerate(LONG_NAMES)}
    plot = plots.tokens_to_first(distributions, [10, 20], dataset="d")
    fig = plot.figure
    fig.draw_without_rendering()
    looks = [
        (line.get_color(), line.get_linestyle()) for line in fig.axes[0].get_lines() if line.get_label() in LONG_NAMES
    ]
    assert len(looks) == 16 and len(set(looks)) == 16
    assert_legends_inside(fig)


def assert_legends_inside(fig) -> None:  # type: ignore[no-untyped-def]
    canvas = fig.bbox
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    assert legends
    for legend in legends:
        box = legend.get_window_extent()
        assert box.x0 >= canvas.x0 - 0.5 and box.x1 <= canvas.x1 + 0.5, (box, canvas)
        assert box.y0 >= canvas.y0 - 0.5 and box.y1 <= canvas.y1 + 0.5, (box, canvas)


@pytest.mark.slow
def test_budget_grid_titles_wrap_and_never_overlap() -> None:
    curves = {
        name: pd.DataFrame({"hit": [0.2, 0.5, 0.7], "recall": [0.1, 0.3, 0.4]}, index=pd.Index([250, 500, 1000]))
        for name in LONG_NAMES
    }
    plot = plots.cutoff_curves(curves, axis="B", dataset="d")
    fig = plot.figure
    plot.render("png")  # the layout is solved as when written
    renderer = fig.canvas.get_renderer()
    titles = [ax.title for ax in fig.axes]
    assert all("\n" in t.get_text() for t in titles)  # 33-character names wrap
    boxes = [t.get_window_extent(renderer) for t in titles]
    panels = [ax.get_tightbbox(renderer) for ax in fig.axes]  # each panel with its tick and axis labels
    tops = [ax.get_position().y1 for ax in fig.axes]
    for i, box in enumerate(boxes):
        for j, other in enumerate(boxes):
            assert i == j or not box.overlaps(other), (titles[i].get_text(), titles[j].get_text())
        for ax, panel in zip(fig.axes, panels):  # a title never runs into the panel above it
            if ax.get_position().y0 > tops[i]:
                assert not box.overlaps(panel)
    assert_legends_inside(fig)


@pytest.mark.slow
def test_significance_is_a_grid_after_the_figures(reports: dict[str, Path]) -> None:
    for name in ("compare", "rag"):
        page = (reports[name] / "report.html").read_text()
        assert page.index("Significance against") > page.rindex("<figure"), name
    significance = pd.read_csv(reports["compare"] / "significance.csv")
    row = significance.iloc[0]
    md = (reports["compare"] / "report.md").read_text()
    cell = f"{row['delta']:+.4f} (p {row['p_adjusted']:.3g})"
    assert cell in md
    assert md.count(f"| {row['system']} |") >= 1


@pytest.mark.slow
def test_a_tune_of_three_parameters_has_marginals_and_parameters_as_typed(reports: dict[str, Path]) -> None:
    assert (reports["tune3"] / "marginals.svg").is_file()
    assert not (reports["tune3"] / "heatmap.svg").exists()
    assert (reports["tune"] / "heatmap.svg").is_file() and not (reports["tune"] / "marginals.svg").exists()
    grid = pd.read_csv(reports["tune3"] / "grid.csv")
    md = (reports["tune3"] / "report.md").read_text()
    best = grid.sort_values("mean", ascending=False, kind="stable").iloc[0]
    assert f"| {best['k1']:g} | {best['b']:g} | {best['variant']} |" in md
    assert "0.5000 |" not in md and "1.5000" not in md


def test_marginals_plot_the_best_and_average_over_the_others() -> None:
    grid = pd.DataFrame(
        [(a, b, c, a + b * (c == "y")) for a in (1.0, 2.0) for b in (0.0, 1.0) for c in ("x", "y")],
        columns=["a", "b", "c", "mean"],
    )
    plot = plots.marginals(grid, ["a", "b", "c"], "m", {"a": 2.0, "b": 1.0, "c": "y"}, dataset="d")
    first = plot.figure.axes[0].get_lines()
    assert first[0].get_ydata().tolist() == [2.0, 3.0]  # best over b, c for a = 1, 2
    assert first[1].get_ydata().tolist() == [1.25, 2.25]  # the average


@pytest.mark.slow
def test_drilldown_says_unjudged_and_worst_queries_lost_something(reports: dict[str, Path]) -> None:
    page = (reports["diagnose"] / "report.html").read_text()
    assert "<td>unjudged</td>" in page
    worst = page[page.index("bm25: worst queries") :]
    worst = worst[: worst.index("</table>")]
    lost = [float(v) for v in re.findall(r'<td class="num">([0-9.]+)</td>', worst)[1::4]]
    assert lost and all(value > 0 for value in lost)


def test_an_evaluation_result_repr_is_one_line() -> None:
    import rankscope as rs

    data = small_dataset()
    result = rs.evaluate(data.qrels, rs.make_retriever("bm25").index(data.corpus).search(data.queries), ["map"])
    text = repr(result)
    assert "\n" not in text
    assert text == f"EvaluationResult(12 queries, 0 without relevant judgments: map {result.mean['map']:.4f})"
