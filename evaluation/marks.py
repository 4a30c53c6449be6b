"""The summary table's marks: the best value per metric and significance against a baseline.

One source for ``rankscope compare`` (terminal, Markdown, HTML and LaTeX tables) and for
``rankscope evaluate`` with several runs.
"""

from __future__ import annotations

import re

import pandas as pd

ALPHA = 0.05
"""The significance level every comparison is marked and reported at (compare, evaluate, tune's gain test)."""
TIE_TOLERANCE = 1e-12
LEGEND = (
    "* best on this metric; + significantly better than the baseline, - significantly worse "
    "(paired {test} test, Holm-corrected over the {what} per metric, p < {alpha})"
)


PAPER_NAMES = {
    "ndcg": "nDCG",
    "precision": "P",
    "recall": "Recall",
    "mrr": "MRR",
    "map": "MAP",
    "hit": "Hit",
    "judged": "Judged",
    "success": "Success",
    "rbp": "RBP",
    "rprec": "R-Prec",
    "maxp": "MaxP",
}
"""Metric families as papers write them (trec_eval's and ranx's tables use the same forms)."""
_LABEL = re.compile(r"[a-z_]+")


def paper_label(metric: str) -> str:
    """A metric as papers write it in tables: ``ndcg@10`` is nDCG@10, ``precision@10`` P@10, ``map``
    MAP, ``mrr@10`` MRR@10, ``maxp ndcg@10`` MaxP nDCG@10; an unknown family as it is. Tables and
    LaTeX show these; files, JSON and the Python API keep rankscope's names."""
    return _LABEL.sub(lambda m: PAPER_NAMES.get(m[0], m[0]), metric)


def legend(test: str, what: str = "retrievers") -> str:
    """The legend under a marked table."""
    return LEGEND.format(test=test, what=what, alpha=ALPHA)


def summary_marks(summary: pd.DataFrame, significance: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(best, marks) for every summary cell: ``best`` is True on the best value of each metric (all
    of them if tied within :data:`TIE_TOLERANCE`, since equal means summed in another order differ in
    the last bits); ``marks`` is ``+``/``-`` where a system is significantly better/worse than the
    baseline, else "". The one rule behind the terminal, Markdown, HTML and LaTeX tables."""
    flags = {
        (row.metric, row.system): ("+" if row.delta > 0 else "-")
        for row in significance.itertuples(index=False)
        if row.significant and row.delta != 0
    }
    best = summary.apply(lambda column: column.max() - column <= TIE_TOLERANCE)
    marks = pd.DataFrame(
        {m: [flags.get((m, s), "") for s in summary.index] for m in summary.columns}, index=summary.index
    )
    return best, marks


def mark_summary(
    summary: pd.DataFrame, significance: pd.DataFrame, baseline: str, digits: int = 4, index_name: str = "retriever"
) -> pd.DataFrame:
    """Means as text with ``*`` on the best value of each metric and ``+``/``-`` for significance
    (:func:`summary_marks`)."""
    best, marks = summary_marks(summary, significance)
    out = pd.DataFrame(index=summary.index.copy(), columns=summary.columns, dtype=object)
    for metric in summary.columns:
        for system, value in summary[metric].items():
            mark = ("*" if best.at[system, metric] else "") + marks.at[system, metric]
            out.at[system, metric] = f"{value:.{digits}f}{mark}"
    out.index = [f"{s} (baseline)" if s == baseline else s for s in summary.index]
    out.index.name = index_name
    out.columns = [paper_label(str(metric)) for metric in summary.columns]
    return out


GRID_CAPTION = (
    "Each system minus the baseline (p-value Holm-corrected over the systems per metric; * significant); "
    "significance.csv has the confidence intervals and raw p-values"
)


def significance_grid(significance: pd.DataFrame, metrics: list[str] | None = None) -> pd.DataFrame:
    """The significance table as a system x metric grid, one cell ``+0.0123 (p 0.031)`` per test (the
    difference with the baseline and the corrected p-value, ``*`` when significant): eight systems on
    six metrics are 7 rows, not 42 (the long table stays in significance.csv)."""
    metrics = list(dict.fromkeys(significance["metric"])) if metrics is None else metrics
    systems = list(dict.fromkeys(significance["system"]))
    grid = pd.DataFrame("", index=pd.Index(systems, name="system"), columns=metrics, dtype=object)
    for row in significance.itertuples(index=False):
        grid.at[row.system, row.metric] = f"{row.delta:+.4f} (p {row.p_adjusted:.3g}){'*' if row.significant else ''}"
    return grid
