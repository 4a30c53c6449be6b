"""The compare table marks the best value per metric and significance against the baseline."""

from __future__ import annotations

import pandas as pd

from rankscope.evaluation.marks import mark_summary, summary_marks
from rankscope.reporting.latex import escape, summary_table

SUMMARY = pd.DataFrame(
    {"ndcg@10": [0.30, 0.40, 0.40], "map": [0.25, 0.20, 0.10]},
    index=pd.Index(["tfidf", "bm25", "w2v"], name="retriever"),
)
# compare_results columns that mark_summary reads
SIGNIFICANCE = pd.DataFrame(
    {
        "metric": ["ndcg@10", "ndcg@10", "map", "map"],
        "system": ["tfidf", "w2v", "tfidf", "w2v"],
        "baseline": ["bm25"] * 4,
        "delta": [-0.10, 0.0, 0.05, -0.10],
        "significant": [True, False, False, True],
    }
)


def test_best_and_significance_marks() -> None:
    marked = mark_summary(SUMMARY, SIGNIFICANCE, "bm25")
    assert list(marked.index) == ["tfidf", "bm25 (baseline)", "w2v"]
    assert list(marked.columns) == ["nDCG@10", "MAP"]  # as papers write them
    assert marked["nDCG@10"].tolist() == ["0.3000-", "0.4000*", "0.4000*"]  # tie: both best
    assert marked["MAP"].tolist() == ["0.2500*", "0.2000", "0.1000-"]  # tfidf best but not significant


def test_significant_improvement_marked_plus() -> None:
    sig = SIGNIFICANCE.assign(significant=[False, False, True, False])
    marked = mark_summary(SUMMARY, sig, "bm25", digits=2)
    assert marked.loc["tfidf", "MAP"] == "0.25*+"
    assert marked.loc["tfidf", "nDCG@10"] == "0.30"


def test_float_noise_tie_marks_both() -> None:
    summary = pd.DataFrame({"p@10": [55 / 225 + 1e-16, 55 / 225, 0.2]}, index=["tfidf", "bm25", "w2v"])
    marked = mark_summary(summary, SIGNIFICANCE.iloc[:0], "bm25")
    assert marked["p@10"].tolist() == ["0.2444*", "0.2444*", "0.2000"]


def test_latex_table_bolds_the_best_and_raises_the_marks() -> None:
    best, marks = summary_marks(SUMMARY, SIGNIFICANCE)
    tex = summary_table(
        SUMMARY, best, marks, names={"bm25": "bm25 (baseline)"}, caption="cranfield: 50% of 10_000 & more"
    )
    body = tex.splitlines()
    assert body[:7] == [
        r"\begin{table}[t]",
        r"\centering",
        r"\caption{cranfield: 50\% of 10\_000 \& more}",
        r"\label{tab:rankscope-compare}",
        r"\begin{tabular}{lrr}",
        r"\toprule",
        r"System & nDCG@10 & MAP \\",
    ]
    assert body[8:11] == [
        r"tfidf & 0.3000$^{-}$ & \textbf{0.2500} \\",
        r"bm25 (baseline) & \textbf{0.4000} & 0.2000 \\",
        r"w2v & \textbf{0.4000} & 0.1000$^{-}$ \\",
    ]
    assert body[11:] == [r"\bottomrule", r"\end{tabular}", r"\end{table}"]


def test_escape_writes_every_special_character_as_itself() -> None:
    assert escape("a_b & 5% #1 $x {y} ~ ^ \\") == (
        r"a\_b \& 5\% \#1 \$x \{y\} \textasciitilde{} \textasciicircum{} \textbackslash{}"
    )
