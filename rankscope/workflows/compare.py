"""Compare retrievers on one dataset: which is better, on which metric, and is it significant?

Every retriever is indexed and searched on the same queries; every metric is
scored by :func:`evaluation.evaluate` (trec_eval semantics), and every
retriever is tested against the baseline per metric with a paired test and
Holm's correction over the retrievers compared on that metric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.outputs import check_output_folder, write_folder
from rankscope.core.progress import progress
from rankscope.workflows import latex, plots
from rankscope.workflows.misses import CUTOFFS
from rankscope.workflows.report import Report, write_csv, write_report, write_runs, write_text
from rankscope.workflows.runs import (
    DatasetSource,
    check_depth,
    check_specs,
    cutoff_table,
    resolve_dataset,
    run_system,
)
from rankscope.workflows.tables import records, text_table, to_json

DIAGNOSTICS_CAPTION = (
    "Retriever diagnostics: oov_* = share of document/query tokens the word vectors do not know; "
    "ann_recall@K = share of the exact top K an approximate index returned (mean over queries)"
)
DEFAULT_RETRIEVERS = ("tfidf", "bm25", "w2v")
ALPHA = 0.05
TIE_TOLERANCE = 1e-12
LEGEND = (
    "* best on this metric; + significantly better than the baseline, - significantly worse "
    "(paired {test} test, Holm-corrected over the retrievers per metric, p < {alpha})"
)


@dataclass(frozen=True)
class CompareResult:
    """Everything a comparison produced, as DataFrames.

    ``summary``: index retriever, one column per metric (means). ``per_query``:
    long ``retriever, query_id, metric, value``. ``significance``: one row per
    (metric, non-baseline retriever), the columns of
    :func:`evaluation.significance.compare_results`. ``curves``: long
    ``retriever, K, hit, recall``. ``runs``: each retriever's run. ``files``:
    what was written with ``out``.
    """

    dataset: str
    baseline: str
    metrics: tuple[str, ...]
    test: str
    depth: int
    summary: pd.DataFrame
    per_query: pd.DataFrame
    significance: pd.DataFrame
    curves: pd.DataFrame
    runs: Mapping[str, pd.DataFrame] = field(repr=False)
    files: tuple[Path, ...] = ()
    diagnostics: pd.DataFrame = field(default_factory=pd.DataFrame)

    def marked(self) -> pd.DataFrame:
        """The summary as text with the best and significance marks (see :data:`LEGEND`)."""
        return mark_summary(self.summary, self.significance, self.baseline)

    def legend(self) -> str:
        return LEGEND.format(test=self.test, alpha=ALPHA)

    def to_text(self) -> str:
        text = f"{text_table(self.marked())}\n\n{self.legend()}"
        if self.diagnostics.empty:
            return text
        return f"{text}\n\n{DIAGNOSTICS_CAPTION}\n{text_table(self.diagnostics.round(4).astype(object).fillna(''))}"

    def report(self) -> Report:
        """Tables and plots as a :class:`Report` (shown inline in Jupyter)."""
        return build_report(self)

    def to_latex(self, label: str = "tab:rankscope-compare") -> str:
        """The summary as a booktabs LaTeX table: best per metric in bold, significance against the
        baseline as superscripts, the legend and the test in the caption (as ranx's ``to_latex``)."""
        best, marks = summary_marks(self.summary, self.significance)
        caption = (
            f"{self.dataset}: bold = best on the metric; + / - = significantly better / worse than "
            f"{self.baseline} (paired {self.test} test, Holm-corrected over the systems per metric, p < {ALPHA})."
        )
        return latex.summary_table(self.summary, best, marks, baseline=self.baseline, caption=caption, label=label)

    def to_dict(self) -> dict[str, object]:
        """The result as plain data (what ``--format json`` prints and summary.json holds)."""
        return {
            "dataset": self.dataset,
            "baseline": self.baseline,
            "test": self.test,
            "correction": "holm",
            "alpha": ALPHA,
            "depth": self.depth,
            "mean": {spec: row.to_dict() for spec, row in self.summary.iterrows()},
            "significance": records(self.significance, index=False),
            "diagnostics": {spec: row.dropna().to_dict() for spec, row in self.diagnostics.iterrows()},
        }


def summary_marks(summary: pd.DataFrame, significance: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(best, marks) for every summary cell: ``best`` is True on the best value of each metric (all
    of them if tied within :data:`TIE_TOLERANCE`, since equal means summed in another order differ in
    the last bits); ``marks`` is ``+``/``-`` where a retriever is significantly better/worse than the
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


def mark_summary(summary: pd.DataFrame, significance: pd.DataFrame, baseline: str, digits: int = 4) -> pd.DataFrame:
    """Means as text with ``*`` on the best value of each metric and ``+``/``-`` for significance
    (:func:`summary_marks`)."""
    best, marks = summary_marks(summary, significance)
    out = pd.DataFrame(index=summary.index.copy(), columns=summary.columns, dtype=object)
    for metric in summary.columns:
        for system, value in summary[metric].items():
            mark = ("*" if best.at[system, metric] else "") + marks.at[system, metric]
            out.at[system, metric] = f"{value:.{digits}f}{mark}"
    out.index = [f"{s} (baseline)" if s == baseline else s for s in summary.index]
    out.index.name = "retriever"
    return out


def compare(
    dataset: DatasetSource = "cranfield",
    retrievers: Sequence[str] = DEFAULT_RETRIEVERS,
    metrics: Sequence[str] | None = None,
    baseline: str = "bm25",
    out: str | Path | None = None,
    *,
    depth: int = 1000,
    test: str = "randomization",
    seed: int = 0,
) -> CompareResult:
    """Index and search with every retriever, score, test against ``baseline``; write files to ``out``."""
    from rankscope.evaluation import DEFAULT_METRICS, evaluate
    from rankscope.evaluation.metrics import parse_metrics
    from rankscope.evaluation.significance import compare_results

    metrics = tuple(DEFAULT_METRICS if metrics is None else metrics)
    parse_metrics(metrics)  # unknown or repeated names fail before minutes of indexing
    check_specs(retrievers)
    check_depth(depth)
    if len(retrievers) < 2:
        raise RankscopeError(f"compare needs at least two retrievers, got {list(retrievers)}; diagnose studies one")
    if baseline not in retrievers:
        raise RankscopeError(f"baseline {baseline!r} is not among the retrievers {list(retrievers)}; use --baseline")
    out_path = None if out is None else check_output_folder(out)  # before any computing
    data = resolve_dataset(dataset)
    cutoffs = [k for k in CUTOFFS if k <= depth]  # beyond the depth Hit@K would just repeat Hit@depth
    runs, results, curves, diagnostics = {}, {}, [], {}
    for spec in progress(retrievers, desc="retrievers", total=len(retrievers), label=str):
        system = run_system(spec, data, depth)
        runs[spec] = system.run
        if system.diagnostics:
            diagnostics[spec] = system.diagnostics
        results[spec] = evaluate(data.qrels, system.run, metrics)
        curve = cutoff_table(data.qrels, system.run, cutoffs, ("hit", "recall"))
        curves.append(curve.reset_index().assign(retriever=spec))
    significance = compare_results(results, baseline, metrics, test=test, correction="holm", seed=seed, alpha=ALPHA)
    summary = pd.DataFrame({spec: result.mean for spec, result in results.items()}).T[list(metrics)]
    summary.index.name = "retriever"
    per_query = pd.concat(
        [result.per_query.assign(retriever=spec) for spec, result in results.items()], ignore_index=True
    )[["retriever", "query_id", "metric", "value"]]
    result = CompareResult(
        dataset=data.name,
        baseline=baseline,
        metrics=metrics,
        test=test,
        depth=depth,
        summary=summary,
        per_query=per_query,
        significance=significance,
        curves=pd.concat(curves, ignore_index=True)[["retriever", "K", "hit", "recall"]],
        runs=runs,
        diagnostics=pd.DataFrame.from_dict(diagnostics, orient="index").rename_axis("retriever"),
    )
    if out_path is None:
        return result
    return replace(result, files=write_folder(out_path, partial(write_outputs, result)))


def write_outputs(result: CompareResult, out: Path) -> list[Path]:
    """summary.csv/.json/.tex, per_query.csv, significance.csv, curves.csv, one TREC run per retriever, the report."""
    files = [
        write_csv(result.summary, out / "summary.csv"),
        write_text(out / "summary.tex", result.to_latex()),
        write_text(out / "summary.json", to_json(result.to_dict())),
        write_csv(result.per_query, out / "per_query.csv", index=False),
        write_csv(result.significance, out / "significance.csv", index=False),
        write_csv(result.curves, out / "curves.csv", index=False),
    ]
    files += write_runs(result.runs, out)
    files += write_report(build_report(result), out)
    return files


def per_query_differences(result: CompareResult, metric: str) -> dict[str, pd.Series]:
    """Per-query ``retriever - baseline`` on ``metric`` for every non-baseline retriever."""
    wide = result.per_query[result.per_query["metric"] == metric].pivot(
        index="query_id", columns="retriever", values="value"
    )
    return {s: wide[s] - wide[result.baseline] for s in result.summary.index if s != result.baseline}


def build_report(result: CompareResult) -> Report:
    """The comparison as a report: marked summary, significance details, curves, per-query differences."""
    primary = result.metrics[0]
    report = Report(f"rankscope compare: {result.dataset}")
    report.paragraph(
        f"{len(result.summary)} retrievers searched to depth {result.depth} on {result.dataset}; baseline "
        f"{result.baseline}; metrics scored with trec_eval semantics over the "
        f"{result.per_query['query_id'].nunique()} queries in the qrels."
    )
    report.heading("Summary").table(result.marked(), caption=result.legend())
    sig = result.significance[
        ["metric", "system", "delta", "ci_low", "ci_high", "p_value", "p_adjusted", "significant"]
    ]
    if not result.diagnostics.empty:
        report.heading("Retriever diagnostics").table(result.diagnostics, caption=DIAGNOSTICS_CAPTION)
    report.heading("Significance against the baseline").table(sig, index=False)
    curves = {
        spec: frame.set_index("K")[["hit", "recall"]] for spec, frame in result.curves.groupby("retriever", sort=False)
    }
    wide = result.curves.pivot(index="K", columns="retriever", values=["hit", "recall"])
    order = [(m, s) for m in ("hit", "recall") for s in result.summary.index]
    wide = wide[order]
    wide.columns = [f"{m.capitalize()}@K {s}" for m, s in order]
    report.heading("Hit@K and Recall@K").table(wide)
    report.image("hit_recall_at_k.png", plots.cutoff_curves(curves), "Hit@K and Recall@K against K")
    diffs = per_query_differences(result, primary)
    if diffs:
        report.heading(f"Per-query difference to {result.baseline} ({primary})")
        report.image(
            "per_query_difference.png",
            plots.per_query_difference(diffs, primary, result.baseline),
            f"{primary} of each retriever minus {result.baseline}, per query, sorted",
        )
    return report
