"""Query groups as compare and diagnose show them: the terminal table, its caption, the report's
section with its plot, the files, and the sentence saying where a system wins and where it loses.
The numbers are :func:`rankscope.evaluation.groups.group_tables`'; this is only how they are shown."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from rankscope.evaluation.marks import ALPHA, baseline_names, summary_marks
from rankscope.reporting import plots
from rankscope.reporting.report import Report, write_csv

CAPTION = (
    "By query group ({metric}): each system's mean over the group's queries; + / - significantly better / "
    "worse than the baseline in that group (+N / -N: baseline N), paired test, Holm-corrected per metric over "
    "every comparison in every group, p < 0.05; groups.csv and group_tests.csv have every metric"
)


def shown_groups(
    means: pd.DataFrame, tests: pd.DataFrame, systems: Sequence[str], baselines: Sequence[str], metric: str
) -> pd.DataFrame:
    """One metric's group means as text, a row per group (``group (n)``) and a column per system,
    each mean with its marks against the baseline(s) in that group."""
    rows = means[means["metric"] == metric].set_index("group")
    if not tests.empty:
        tests = tests[tests["metric"] == metric].assign(metric=tests["group"])
    _, marks = summary_marks(rows[list(systems)].T, tests)
    shown = pd.DataFrame(
        {name: [f"{rows.at[g, name]:.4f}{marks.at[name, g]}" for g in rows.index] for name in systems},
        index=[f"{g} ({int(rows.at[g, 'n_queries'])})" for g in rows.index],
    )
    shown.columns = baseline_names(pd.DataFrame(index=list(systems)), list(baselines))
    shown.index.name = "group (queries)"
    return shown


def add_section(
    report: Report,
    means: pd.DataFrame,
    tests: pd.DataFrame,
    systems: Sequence[str],
    baselines: Sequence[str],
    metric: str,
    dataset: str,
) -> None:
    """The report's section: the marked table of ``metric`` and a bar per system and group."""
    report.heading(f"By query group ({metric})").table(
        shown_groups(means, tests, systems, baselines, metric), caption=CAPTION.format(metric=metric)
    )
    chosen = means[means["metric"] == metric].set_index("group")
    report.image(
        "group_means",
        plots.group_means(chosen.drop(columns="metric"), metric, dataset=dataset),
        f"{metric} per query group",
    )


def write_groups(means: pd.DataFrame, tests: pd.DataFrame, out: Path) -> list[Path]:
    """groups.csv (every metric's means per group) and group_tests.csv (each test), when there are any."""
    return [
        *([] if means.empty else [write_csv(means, out / "groups.csv", index=False)]),
        *([] if tests.empty else [write_csv(tests, out / "group_tests.csv", index=False)]),
    ]


def wins_and_losses(means: pd.DataFrame, tests: pd.DataFrame, system: str, metric: str) -> str:
    """Where ``system`` wins and where it loses on ``metric``, in one sentence: against the baseline of
    ``tests`` the groups where it is significantly better and worse; with no test (one system), the
    groups where its mean is highest and lowest, said to be untested."""
    rows = means[means["metric"] == metric].set_index("group")
    if tests.empty:
        top, bottom = rows[system].idxmax(), rows[system].idxmin()
        return (
            f"By query group ({metric}): {system} scores highest on {top} ({rows.at[top, system]:.4f}) and lowest "
            f"on {bottom} ({rows.at[bottom, system]:.4f}); untested with one system (a second one is tested "
            "against it in every group)"
        )
    chosen = tests[(tests["metric"] == metric) & (tests["system"] == system)]
    baseline = ", ".join(dict.fromkeys(chosen["baseline"]))
    significant = chosen[chosen["significant"]]

    def said(rows_of: pd.DataFrame) -> str:
        return ", ".join(
            f"{row.group} ({rows.at[row.group, system]:.4f} vs {rows.at[row.group, row.baseline]:.4f})"
            for row in rows_of.itertuples(index=False)
        )

    wins, losses = significant[significant["delta"] > 0], significant[significant["delta"] < 0]
    level = len(chosen) - len(wins) - len(losses)
    return (
        f"By query group ({metric}): {system} wins against {baseline} on {said(wins) or 'no group'}; loses on "
        f"{said(losses) or 'no group'}; level on {level} group{'s' * (level != 1)} (Holm-corrected p < {ALPHA})"
    )
