"""The summary table's marks: the best value per metric and significance against a baseline.

One source for ``rankscope compare`` (terminal, Markdown, HTML and LaTeX tables) and for
``rankscope evaluate`` with several runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd

from rankscope.core.errors import RankscopeError

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


def legend(test: str, what: str = "retrievers", baselines: Sequence[str] = ()) -> str:
    """The legend under a marked table; with several ``baselines`` its marks carry each one's number
    and the family of the correction is every comparison made on a metric."""
    if len(baselines) < 2:
        return LEGEND.format(test=test, what=what, alpha=ALPHA)
    numbered = ", ".join(f"{i} = {name}" for i, name in enumerate(baselines, 1))
    return (
        f"* best on this metric; +N / -N significantly better / worse than baseline N ({numbered}; "
        f"paired {test} test, p < {ALPHA})."
    )


def correction_line(significance: pd.DataFrame, correction: str = "holm") -> str:
    """One sentence naming the correction and its family, said under every marked table: how many
    comparisons per metric, against which baselines."""
    baselines = list(dict.fromkeys(significance["baseline"]))
    per_metric = len(significance) // max(1, significance["metric"].nunique())
    against = baselines[0] if len(baselines) == 1 else f"each of {', '.join(baselines)} (each pair once)"
    return (
        f"{correction.capitalize()} correction over the {per_metric} comparison{'s' * (per_metric != 1)} "
        f"made on each metric: every system against {against}."
    )


def summary_marks(summary: pd.DataFrame, significance: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(best, marks) for every summary cell: ``best`` is True on the best value of each metric (all
    of them if tied within :data:`TIE_TOLERANCE`, since equal means summed in another order differ in
    the last bits); ``marks`` is ``+``/``-`` where a system is significantly better/worse than the
    baseline, else "" (several baselines: ``+N``/``-N`` for baseline N, in their order). The one
    rule behind the terminal, Markdown, HTML and LaTeX tables. One system alone has no marks."""
    baselines = list(dict.fromkeys(significance["baseline"])) if len(significance) else []
    flags: dict[tuple[str, str], str] = {}
    for row in significance.itertuples(index=False):
        if row.significant and row.delta != 0:
            number = str(baselines.index(row.baseline) + 1) if len(baselines) > 1 else ""
            key = (row.metric, row.system)
            flags[key] = flags.get(key, "") + ("+" if row.delta > 0 else "-") + number
    if len(summary) < 2:
        best = pd.DataFrame(False, index=summary.index, columns=summary.columns)
    else:
        best = summary.apply(lambda column: column.max() - column <= TIE_TOLERANCE)
    marks = pd.DataFrame(
        {m: [flags.get((m, s), "") for s in summary.index] for m in summary.columns}, index=summary.index
    )
    return best, marks


def baseline_names(summary: pd.DataFrame, baseline: str | Sequence[str]) -> list[str]:
    """Row names with each baseline said: ``bm25 (baseline)``, or ``tfidf (baseline 1)`` ... with
    several; a system alone is no baseline."""
    baselines = [baseline] if isinstance(baseline, str) else list(baseline)
    if len(summary) < 2:
        return [str(s) for s in summary.index]
    if len(baselines) == 1:
        return [f"{s} (baseline)" if s == baselines[0] else str(s) for s in summary.index]
    return [f"{s} (baseline {baselines.index(s) + 1})" if s in baselines else str(s) for s in summary.index]


def mark_summary(
    summary: pd.DataFrame,
    significance: pd.DataFrame,
    baseline: str | Sequence[str],
    digits: int = 4,
    index_name: str = "retriever",
    pairs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Means as text with ``*`` on the best value of each metric and ``+``/``-`` for significance
    (:func:`summary_marks`); with all ``pairs`` (:func:`pair_letters`), superscript letters instead and
    each row named ``letter system``."""
    best, marks = summary_marks(summary, significance)
    if pairs is not None:
        marks = pair_letters(summary, pairs).map(superscript)
    out = pd.DataFrame(index=summary.index.copy(), columns=summary.columns, dtype=object)
    for metric in summary.columns:
        for system, value in summary[metric].items():
            mark = ("*" if best.at[system, metric] else "") + marks.at[system, metric]
            out.at[system, metric] = f"{value:.{digits}f}{mark}"
    if pairs is None:
        out.index = baseline_names(summary, baseline)
    else:
        out.index = [f"{letter} {name}" for name, letter in system_letters(list(map(str, summary.index))).items()]
    out.index.name = index_name
    out.columns = [paper_label(str(metric)) for metric in summary.columns]
    return out


GRID_CAPTION = (
    "Each system minus the baseline (p-value Holm-corrected over the comparisons made on each metric; * significant); "
    "significance.csv has the confidence intervals and raw p-values"
)


def significance_grid(significance: pd.DataFrame, metrics: list[str] | None = None) -> pd.DataFrame:
    """The significance table as a system x metric grid, one cell ``+0.0123 (p 0.031)`` per test (the
    difference with the baseline and the corrected p-value, ``*`` when significant): eight systems on
    six metrics are 7 rows, not 42 (the long table stays in significance.csv). With several baselines
    a row is ``system vs baseline``."""
    metrics = list(dict.fromkeys(significance["metric"])) if metrics is None else metrics
    several = significance["baseline"].nunique() > 1
    rows = [f"{r.system} vs {r.baseline}" if several else r.system for r in significance.itertuples(index=False)]
    grid = pd.DataFrame("", index=pd.Index(list(dict.fromkeys(rows)), name="system"), columns=metrics, dtype=object)
    for row, test in zip(rows, significance.itertuples(index=False)):
        grid.at[row, test.metric] = f"{test.delta:+.4f} (p {test.p_adjusted:.3g}){'*' if test.significant else ''}"
    return grid


LETTERS = "abcdefghijklmnoprstuvwxyz"
"""The systems' letters of all-pairs marks, as ranx's tables: ``q`` is left out, as Unicode has no
superscript q for the terminal."""
_SUPERSCRIPT = str.maketrans(LETTERS, "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ")


def superscript(letters: str) -> str:
    """``letters`` as Unicode superscripts (what the terminal shows; LaTeX writes ``$^{...}$``)."""
    return letters.translate(_SUPERSCRIPT)


def system_letters(names: Sequence[str]) -> dict[str, str]:
    """Each system's letter, in table order; more systems than :data:`LETTERS` are refused (such a
    table is unreadable: the tiers say which systems differ)."""
    if len(names) > len(LETTERS):
        raise RankscopeError(
            f"all-pairs marks name at most {len(LETTERS)} systems, got {len(names)}; read the tiers instead"
        )
    return dict(zip(names, LETTERS))


def pair_letters(summary: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """For every summary cell, the letters of the systems this one is significantly better than on
    that metric (``pairs``: long ``metric, system, other, delta, significant``, system - other =
    delta), in table order, as ranx's all-pairs superscripts."""
    letters = system_letters([str(name) for name in summary.index])
    beaten: dict[tuple[str, str], set[str]] = {}
    for row in pairs.itertuples(index=False):
        if row.significant and row.delta != 0:
            winner, loser = (row.system, row.other) if row.delta > 0 else (row.other, row.system)
            beaten.setdefault((row.metric, winner), set()).add(loser)
    return pd.DataFrame(
        {
            metric: [
                "".join(letters[other] for other in letters if other in beaten.get((metric, system), ()))
                for system in summary.index
            ]
            for metric in summary.columns
        },
        index=summary.index,
    )


def all_pairs_legend(pairs: pd.DataFrame) -> str:
    """The legend of all-pairs marks: what a letter means and the correction's family."""
    per_metric = len(pairs) // max(1, pairs["metric"].nunique())
    return (
        f"* best on this metric; superscript letters = the systems (by their letter) this one is "
        f"significantly better than (paired t-test, Holm correction over all {per_metric} pairs of systems "
        f"per metric, p < {ALPHA})"
    )
