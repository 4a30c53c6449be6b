"""The fixed layout of every figure kind (rankscope.reporting.figure_layout): with few and many systems,
long names, one query, every text the figure draws (titles, axis labels, tick labels, the legend) lies
inside the canvas, off every panel's data area and clear of every other text. Facts read off the figure
after it is saved, as the files show it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from rankscope.reporting import plots, rendering

LONG = [f"sentences:{n} / bm25:k1=0.{k},b=0.4" for n in (100, 200, 300, 400) for k in range(4)]
TWO = ["tfidf", "bm25"]
KS = [1, 3, 5, 10, 20, 50, 100, 1000]


def curves(names: list[str], ks: list[int] = KS) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(len(names))
    out = {}
    for name in names:
        hit = np.sort(rng.uniform(0.2, 1.0, len(ks)))
        out[name] = pd.DataFrame({"hit": hit, "recall": hit * 0.7}, index=pd.Index(ks, name="K"))
    return out


def precision(names: list[str]) -> dict[str, pd.Series]:
    rng = np.random.default_rng(1)
    return {n: pd.Series(np.sort(rng.uniform(0, 1, 11))[::-1], index=np.linspace(0, 1, 11)) for n in names}


def differences(names: list[str], queries: int = 225) -> dict[str, pd.Series]:
    return {n: pd.Series(np.random.default_rng(i).normal(0, 0.15, queries)) for i, n in enumerate(names)}


def tiers(names: list[str]) -> pd.DataFrame:
    from rankscope.evaluation.tiers import rank_tiers

    rng = np.random.default_rng(len(names))
    values = pd.DataFrame(rng.normal(0, 0.2, (40, len(names))) + np.linspace(0, 1, len(names)), columns=names)
    return rank_tiers(values, n_resamples=50).table


def first_ranks(names: list[str]) -> dict[str, pd.Series]:
    buckets = ["1", "2-3", "4-10", "11-100", "101-1000", "none"]
    return {
        n: pd.Series(np.random.default_rng(i).integers(0, 50, len(buckets)), index=buckets) for i, n in enumerate(names)
    }


def misses(names: list[str]) -> dict[str, pd.DataFrame]:
    hit = np.linspace(0.3, 0.8, 5)
    ranking = (1 - hit) * 0.6
    frame = pd.DataFrame(
        {"hit_share": hit, "ranking_miss_share": ranking, "recall_miss_share": 1 - hit - ranking},
        index=[1, 3, 10, 100, 1000],
    )
    return {name: frame for name in names}


def tokens(names: list[str]) -> dict[str, np.ndarray]:
    return {n: np.random.default_rng(i).lognormal(5 + i * 0.1, 1.2, 200) for i, n in enumerate(names)}


def grid(with_retriever: bool) -> pd.DataFrame:
    rows = []
    for k1 in (0.6, 0.9, 1.2, 1.5):
        for b in (0.3, 0.5, 0.75):
            for retriever in ("bm25", "tfidf:variant=classic,sublinear=true") if with_retriever else (None,):
                row: dict[str, object] = {"k1": k1, "b": b, "mean": 0.3 + 0.01 * k1 - 0.02 * b}
                if retriever is not None:
                    row["retriever"] = retriever
                rows.append(row)
    return pd.DataFrame(rows)


def groups(names: list[str], count: int) -> pd.DataFrame:
    means = pd.DataFrame(
        {name: np.linspace(0.2, 0.5, count) + 0.02 * i for i, name in enumerate(names)},
        index=[f"group {j}" for j in range(count)],
    )
    return means.assign(n_queries=[10 * (j + 1) for j in range(count)])


QUICK: dict[str, Callable[[], rendering.Plot]] = {
    "cutoff curves, 2 systems": lambda: plots.cutoff_curves(curves(TWO), dataset="cranfield", reference="bm25"),
    "per-query difference, 1 query": lambda: plots.per_query_difference(
        differences(["tfidf"], 1), "ndcg@10", "bm25", dataset="cranfield"
    ),
    "rank intervals, 8 long names": lambda: plots.rank_intervals(tiers(LONG[:8]), "ndcg@10", dataset="cranfield"),
    "heat map with its colour bar": lambda: plots.heatmap(
        np.arange(12.0).reshape(4, 3) / 20,
        [0.6, 0.9, 1.2, 1.5],
        [0.3, 0.5, 0.75],
        (1.2, 0.5),
        (0.9, 0.75),
        "ndcg@10",
        dataset="cranfield",
    ),
    "misses, 1 system (a title wider than the canvas)": lambda: plots.miss_bars(misses(["bm25"]), dataset="cranfield"),
}
SLOW: dict[str, Callable[[], rendering.Plot]] = {
    "cutoff curves, 1 system": lambda: plots.cutoff_curves(curves(["bm25"]), dataset="cranfield"),
    "cutoff curves, 4 long names": lambda: plots.cutoff_curves(curves(LONG[:4]), dataset="cranfield"),
    "cutoff curves, 8 long names": lambda: plots.cutoff_curves(curves(LONG[:8]), dataset="cranfield"),
    "budget curves, 16 long names": lambda: plots.cutoff_curves(
        curves(LONG, [250, 500, 1000]), axis="B", xlabel="context budget B (tokens)", dataset="cisi"
    ),
    "precision-recall, 2 systems": lambda: plots.precision_recall(precision(TWO), dataset="cranfield"),
    "precision-recall, 8 long names": lambda: plots.precision_recall(precision(LONG[:8]), dataset="cranfield"),
    "per-query difference, 1 system": lambda: plots.per_query_difference(
        differences(["tfidf"]), "ndcg@10", "bm25", dataset="cranfield"
    ),
    "per-query difference, 7 long names": lambda: plots.per_query_difference(
        differences(LONG[:7]), "ndcg@10", LONG[8], dataset="cranfield"
    ),
    "rank intervals, 3 systems": lambda: plots.rank_intervals(tiers(["tfidf", "bm25", "w2v"]), "map", dataset="cisi"),
    "rank intervals, 80 systems": lambda: plots.rank_intervals(
        tiers([f"s{i}" for i in range(80)]), "ndcg@10", dataset="cranfield"
    ),
    "first relevant rank, 5 long names": lambda: plots.rank_histogram(first_ranks(LONG[:5]), dataset="cranfield"),
    "misses, 3 long names": lambda: plots.miss_bars(misses(LONG[:3]), dataset="cranfield"),
    "tokens to first, 16 long names": lambda: plots.tokens_to_first(tokens(LONG), [250, 1000], dataset="cranfield"),
    "marginals, 2 parameters": lambda: plots.marginals(
        grid(False), ["k1", "b"], "ndcg@10", {"k1": 1.2, "b": 0.5}, dataset="cranfield"
    ),
    "marginals, a retriever among 3": lambda: plots.marginals(
        grid(True), ["retriever", "k1", "b"], "ndcg@10", {"retriever": "bm25", "k1": 1.2, "b": 0.5}, dataset="d"
    ),
    "group means, 5 long names": lambda: plots.group_means(groups(LONG[:5], 4), "ndcg@10", dataset="cranfield"),
}


def drawn_texts(fig) -> list[tuple[str, object]]:  # type: ignore[no-untyped-def]
    """(owner, text) of every visible, non-empty text drawn; a panel axis' tick labels share one owner."""
    texts = [("title", fig._suptitle)]
    for i, ax in enumerate(fig.axes):
        texts.append((f"panel {i} title", ax.title))
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            texts += [(f"panel {i} {name} label", axis.label), (f"panel {i} {name} offset", axis.offsetText)]
            for tick in axis._update_ticks():  # the ticks drawn: those in view
                texts += [(f"panel {i} {name} ticks", tick.label1), (f"panel {i} {name} ticks", tick.label2)]
    return [(owner, text) for owner, text in texts if text.get_visible() and text.get_text().strip()]


def layout_problems(fig) -> list[str]:  # type: ignore[no-untyped-def]
    renderer = fig.canvas.get_renderer()
    canvas = fig.bbox
    boxes = [(owner, text.get_text(), text.get_window_extent(renderer)) for owner, text in drawn_texts(fig)]
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
    boxes += [(f"legend {i}", "", legend.get_window_extent(renderer)) for i, legend in enumerate(legends)]
    panels = [ax.get_window_extent(renderer) for ax in fig.axes]

    def overlap(one, other) -> bool:  # type: ignore[no-untyped-def]
        return (
            min(one.x1, other.x1) - max(one.x0, other.x0) > 0.5 and min(one.y1, other.y1) - max(one.y0, other.y0) > 0.5
        )

    problems = []
    for i, (owner, text, box) in enumerate(boxes):
        if box.x0 < canvas.x0 - 0.5 or box.x1 > canvas.x1 + 0.5 or box.y0 < canvas.y0 - 0.5 or box.y1 > canvas.y1 + 0.5:
            problems.append(f"{owner} {text!r} outside the canvas")
        problems += [f"{owner} {text!r} over panel {j}" for j, panel in enumerate(panels) if overlap(box, panel)]
        problems += [
            f"{owner} {text!r} overlaps {other} {other_text!r}"
            for other, other_text, other_box in boxes[i + 1 :]
            if other != owner and overlap(box, other_box)
        ]
    return problems


def check(make: Callable[[], rendering.Plot]) -> None:
    plot = make()
    plot.render("svg")  # as the file shows it (the SVG is drawn at 72 dpi, the canvas measures at 110)
    fig = plot.figure
    assert layout_problems(fig) == []
    assert fig.get_layout_engine() is None  # laid out once, by figure_layout: no engine at each draw
    if fig.legends:  # the legend below every panel, centred
        legend = fig.legends[0].get_window_extent(fig.canvas.get_renderer())
        assert all(legend.y1 <= ax.get_window_extent().y0 for ax in fig.axes)
        assert abs((legend.x0 + legend.x1) / 2 - fig.bbox.width / 2) < 1


@pytest.mark.parametrize("case", list(QUICK))
def test_every_text_lies_inside_the_canvas_clear_of_panels_and_other_texts(case: str) -> None:
    check(QUICK[case])


@pytest.mark.slow
@pytest.mark.parametrize("case", list(SLOW))
def test_every_figure_kind_with_many_and_long_names_keeps_its_texts_clear(case: str) -> None:
    check(SLOW[case])


def test_a_title_wider_than_the_canvas_wraps_and_the_checks_see_a_broken_layout() -> None:
    plot = QUICK["misses, 1 system (a title wider than the canvas)"]()
    fig = plot.figure
    assert fig._suptitle.get_text() == "Hits, ranking misses and recall misses -\ncranfield"
    assert plot.title == "Hits, ranking misses and recall misses - cranfield"  # the name, unwrapped
    (ax,) = fig.axes
    ax.set_position((0.0, 0.0, 1.0, 1.0))  # the panel over every text: the checks say so
    problems = layout_problems(fig)
    assert any("title" in p and "over panel 0" in p for p in problems)
    assert any(p.startswith("panel 0 y ticks") and "outside the canvas" in p for p in problems)


def test_axis_labels_sit_beside_the_tick_labels_and_stay_there() -> None:
    plot = QUICK["cutoff curves, 2 systems"]()
    fig = plot.figure
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        ticks = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
        label = ax.xaxis.label.get_window_extent(renderer)
        assert 0 < min(t.y0 for t in ticks) - label.y1 < 10  # just under the lowest tick label
    ylabel = fig.axes[0].yaxis.label.get_window_extent(renderer)
    yticks = [t.get_window_extent(renderer) for t in fig.axes[0].get_yticklabels() if t.get_text()]
    assert 0 < min(t.x0 for t in yticks) - ylabel.x1 < 10
    before = ylabel
    plot.render("png")
    assert fig.axes[0].yaxis.label.get_window_extent(renderer).bounds == before.bounds  # no draw moves it
