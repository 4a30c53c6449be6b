"""A comparison as a LaTeX table a paper can use: booktabs rules, the best value per metric in
bold, significance against the baseline as a superscript, the legend in the caption."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from rankscope.evaluation.marks import paper_label

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def escape(text: str) -> str:
    """``text`` with LaTeX's special characters written so that they print as themselves."""
    return "".join(_SPECIAL.get(char, char) for char in str(text))


def summary_table(
    summary: pd.DataFrame,
    best: pd.DataFrame,
    marks: pd.DataFrame,
    *,
    names: Mapping[str, str],
    caption: str,
    label: str = "tab:rankscope-compare",
    digits: int = 4,
) -> str:
    """``summary`` (systems x metrics) as a ``table`` environment needing only ``\\usepackage{booktabs}``.

    ``best`` is True where a value is the best of its metric; ``marks`` holds ``+``/``-`` (or "")
    for significantly better/worse than a baseline; ``names`` gives each system's row name (with
    ``(baseline)`` said where it is one), escaped here.
    """
    columns = "l" + "r" * len(summary.columns)
    header = " & ".join(["System", *(escape(paper_label(str(m))) for m in summary.columns)]) + r" \\"
    rows = []
    for system in summary.index:
        cells = [escape(names.get(system, system))]
        for metric in summary.columns:
            value = f"{summary.at[system, metric]:.{digits}f}"
            if best.at[system, metric]:
                value = rf"\textbf{{{value}}}"
            if marks.at[system, metric]:
                value += rf"$^{{{marks.at[system, metric]}}}$"
            cells.append(value)
        rows.append(" & ".join(cells) + r" \\")
    return "\n".join(
        [
            r"\begin{table}[t]",
            r"\centering",
            rf"\caption{{{escape(caption)}}}",
            rf"\label{{{label}}}",
            rf"\begin{{tabular}}{{{columns}}}",
            r"\toprule",
            header,
            r"\midrule",
            *rows,
            r"\bottomrule",
            r"\end{tabular}",
            r"\end{table}",
            "",
        ]
    )
