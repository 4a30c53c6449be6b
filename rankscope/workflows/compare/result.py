"""What a comparison shows: :class:`CompareResult` (the systems' means, tests, tiers, curves, and with
judgments the judge's shares and a human sample's intervals) as text, plain data, tables, LaTeX and a
report. :mod:`.workflow` computes it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.corpora.query_fields import QueriesFile
from rankscope.evaluation.conventions import INTERVALS_RULE
from rankscope.evaluation.holes import BANDS_CAPTION, FAR_BELOW
from rankscope.evaluation.marks import (
    ALPHA,
    GRID_CAPTION,
    all_pairs_legend,
    baseline_names,
    correction_line,
    mark_summary,
    pair_letters,
    significance_grid,
    summary_marks,
    system_letters,
)
from rankscope.evaluation.marks import legend as legend_text
from rankscope.reporting import latex, plots, provenance
from rankscope.reporting.provenance import Provenance
from rankscope.reporting.report import Report, table_block, write_csv, write_runs, write_text
from rankscope.reporting.tables import records, text_table, wrap_paragraph
from rankscope.workflows.common import groups
from rankscope.workflows.common.judgments import SHARE_DEPTH
from rankscope.workflows.common.runs import DIAGNOSTICS_CAPTION, SEARCH_DEPTH, check_depth
from rankscope.workflows.common.systems import brief_description

if TYPE_CHECKING:
    from rankscope.workflows.pool_bias import PoolBiasResult

MARKS = ("baseline", "all-pairs")
TIERS_FROM = 3  # systems from which the terminal shows the tiers (two systems: the marks say it all)
SYSTEMS_CAPTION = (
    "Systems: description (the spec, or the run file and its SHA-256; the terminal shows only parameters that "
    f"differ from their defaults, files and the provenance every one); {BANDS_CAPTION}; notes = what the run "
    "check found"
)
JUDGE_COLUMNS = ("judge_share", "invalid", "failed")
JUDGE_CAPTION = (
    f"With --judgments or --judge: judge_share@{SHARE_DEPTH} = share of the top {SHARE_DEPTH} that only the judge labelled; "
    f"invalid@{SHARE_DEPTH} = its replies there that gave no label, failed@{SHARE_DEPTH} = its calls there that "
    "failed (both left unjudged; the warnings say why)"
)
HOLES_RULE = (
    f"(a share is far below the baseline's when it is under {FAR_BELOW[0]:.0%} of it and at least "
    f"{FAR_BELOW[1]:.2f} lower)"
)
INTERVALS_CAPTION = (
    "{confidence:.0%} intervals from {n_labelled} human-labelled queries of {n_total} (the human sample): "
    "naive = judge labels alone, biased by the judge; PPI = corrected by the sample; PPI++ = the judge "
    "weighted by lambda (cross-fitted) to narrow it; Student's t with the finite-population correction "
    "(docs/intervals.md). Rows 'vs' = difference with the baseline. Unlike the table above, the " + INTERVALS_RULE
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
    depth: int | None
    summary: pd.DataFrame
    per_query: pd.DataFrame
    significance: pd.DataFrame
    curves: pd.DataFrame
    provenance: Provenance
    runs: Mapping[str, pd.DataFrame] = field(repr=False)
    systems: pd.DataFrame = field(default_factory=pd.DataFrame)
    precision_recall: pd.DataFrame = field(default_factory=pd.DataFrame)
    files: tuple[Path, ...] = ()
    diagnostics: pd.DataFrame = field(default_factory=pd.DataFrame)
    intervals: pd.DataFrame = field(default_factory=pd.DataFrame)
    warnings: tuple[str, ...] = ()
    """Systems whose judged share in a rank band is far below the baseline's (:func:`hole_warnings`)."""
    baselines: tuple[str, ...] = ()
    tiers: pd.DataFrame = field(default_factory=pd.DataFrame)
    """Per metric, each system's tier, mean and rank intervals (:func:`evaluation.tiers.tiers_by_metric`)."""
    pairs: pd.DataFrame = field(default_factory=pd.DataFrame)
    """Per metric, every pair of systems tested (paired t-test, Holm over all pairs)."""
    tier_captions: Mapping[str, str] = field(default_factory=dict)
    marks: str = "baseline"
    queries: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    queries_file: QueriesFile | None = field(default=None, repr=False)
    """The file the queries were read from (``with_groups("column:NAME")`` reads its field NAME)."""
    group_means: pd.DataFrame = field(default_factory=pd.DataFrame)
    """With :meth:`with_groups`: per group and metric, the group's query count and each system's mean."""
    group_tests: pd.DataFrame = field(default_factory=pd.DataFrame)
    """With :meth:`with_groups`: per group and metric, every system against each baseline (Holm per metric
    over all groups' comparisons; :func:`rankscope.evaluation.groups.group_tables`)."""
    qrels: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    """The judgments the systems were scored with (the dataset's, or merged with a judge's)."""
    pool_bias: PoolBiasResult | None = None
    """With :meth:`with_pool_bias`: ``rankscope poolbias``'s test of these runs."""
    """``baseline``: + / - against the baseline(s); ``all-pairs``: ranx's letters (:meth:`with_marks`)."""

    def __repr__(self) -> str:
        """Counts, not the tables (a notebook cell shows one line)."""
        return (
            f"CompareResult({self.dataset!r}: {len(self.summary)} systems, {len(self.metrics)} metrics, "
            f"{self.per_query['query_id'].nunique()} queries, baseline {self.baseline!r})"
        )

    def with_marks(self, marks: str) -> CompareResult:
        """The same result with its tables marked against the baseline(s) (``baseline``) or, as ranx's,
        with the letters of the systems each one is significantly better than (``all-pairs``)."""
        if marks not in MARKS:
            raise RankscopeError(f"marks: expected one of {', '.join(MARKS)}, got {marks!r}")
        if marks == "all-pairs" and len(self.summary) > 1:
            system_letters(list(map(str, self.summary.index)))  # too many systems: said now
        return replace(self, marks=marks)

    def with_groups(self, source: str | Path | pd.Series) -> CompareResult:
        """The same result with per-group means and tests: ``source`` is ``length`` (the query's
        length in terms), ``column:NAME`` (a field of the queries file), a TSV file of
        ``query_id<TAB>group``, or a series query id -> group."""
        from rankscope.evaluation.groups import group_tables, query_groups

        labels = source if isinstance(source, pd.Series) else query_groups(source, self.queries, self.queries_file)
        means, tests = group_tables(
            self.per_query, labels, self.baselines or (self.baseline,), test=self.test, seed=self.seed()
        )
        return replace(self, group_means=means, group_tests=tests)

    def shown_groups(self, metric: str) -> pd.DataFrame:
        """One metric's group means marked against the baseline(s) (:func:`groups.shown_groups`)."""
        baselines = self.baselines or (self.baseline,)
        return groups.shown_groups(self.group_means, self.group_tests, list(self.summary.index), baselines, metric)

    def with_pool_bias(self, depth: int) -> CompareResult:
        """The same result with the pool-bias test of its runs and metrics (Zobel 1998: each system scored
        again without the relevant judgments only it put in the pool of every system's top ``depth``), the
        table ``rankscope poolbias`` gives for the same systems."""
        from rankscope.evaluation.pool_bias import FLAG_DROP
        from rankscope.workflows.pool_bias import pool_bias_result

        check_depth(depth)
        settings = {**self.provenance.settings, "pool_bias_depth": depth, "flag_drop": FLAG_DROP}
        record = replace(self.provenance, settings=settings)
        described = {str(name): str(row["description"]) for name, row in self.systems.iterrows()}
        found = pool_bias_result(self.dataset, self.qrels, self.runs, self.metrics, depth, described, record)
        return replace(self, pool_bias=found, provenance=record)

    def seed(self) -> int:
        """The seed the comparison ran with (its provenance records it)."""
        return int(str(self.provenance.settings.get("seed", 0)))

    def all_pairs(self) -> bool:
        return self.marks == "all-pairs" and not self.pairs.empty

    def marked(self) -> pd.DataFrame:
        """The summary as text with the best and significance marks (see :data:`rankscope.evaluation.marks.LEGEND`)."""
        pairs = self.pairs if self.all_pairs() else None
        return mark_summary(self.summary, self.significance, self.baselines or self.baseline, pairs=pairs)

    def legend(self) -> str:
        """The marks' legend and the correction's family (nothing for one system alone: no marks)."""
        if len(self.summary) < 2:
            return ""
        if self.all_pairs():
            return all_pairs_legend(self.pairs)
        if len(self.baselines) < 2:
            return legend_text(self.test)
        return f"{legend_text(self.test, baselines=self.baselines)} {correction_line(self.significance)}"

    def to_text(self) -> str:
        """What the terminal shows: the marked summary, the systems (brief specs), intervals and
        diagnostics, each caption wrapped to the terminal's width (:mod:`rankscope.reporting.tables`)."""
        text = text_table(self.marked()) + (f"\n\n{wrap_paragraph(self.legend())}" if self.legend() else "")
        text = f"{text}\n{wrap_paragraph(provenance.judgments_caption(self.provenance))}"
        if len(self.summary) >= TIERS_FROM:
            metric = self.metrics[0]
            table = shown_tiers(self.tiers[self.tiers["metric"] == metric])
            text = f"{text}\n\n{wrap_paragraph(f'Tiers on {metric}: ' + self.tier_captions[metric])}\n{table}"
        text = f"{text}\n\n{wrap_paragraph(SYSTEMS_CAPTION)}\n{text_table(shown_systems(self.systems))}"
        if not self.group_means.empty:
            text = f"{text}\n\n{wrap_paragraph(groups.CAPTION.format(metric=self.metrics[0]))}\n"
            text += text_table(self.shown_groups(self.metrics[0]))
        if self.pool_bias is not None:
            text = f"{text}\n\nPool bias (as rankscope poolbias):\n{self.pool_bias.table_text()}"
        if self.warnings:
            text = f"{text}\n" + "\n".join(wrap_paragraph(f"warning: {line}") for line in self.warnings)
            text = f"{text}\n{wrap_paragraph(HOLES_RULE)}"
        if f"judge_share@{SHARE_DEPTH}" in self.systems.columns:
            text = f"{text}\n{wrap_paragraph(JUDGE_CAPTION)}"
        if not self.intervals.empty:
            first = self.intervals.iloc[0]
            caption = INTERVALS_CAPTION.format(
                confidence=first["confidence"], n_labelled=first["n_labelled"], n_total=first["n_total"]
            )
            text = f"{text}\n\n{wrap_paragraph(caption)}\n{text_table(shown_intervals(self.intervals), index=False)}"
            text += "".join(f"\n{wrap_paragraph(f'warning: {line}')}" for line in interval_warnings(self.intervals))
        if self.diagnostics.empty:
            return text
        diagnostics = text_table(self.diagnostics.round(4).astype(object).fillna(""))
        return f"{text}\n\n{wrap_paragraph(DIAGNOSTICS_CAPTION)}\n{diagnostics}"

    def report(self) -> Report:
        """Tables and plots as a :class:`Report` (shown inline in Jupyter)."""
        return build_report(self)

    def write_tables(self, out: Path) -> list[Path]:
        """summary.csv/.tex, per_query.csv, significance.csv, curves.csv, systems.csv,
        precision_recall.csv and one TREC run per system (:func:`~rankscope.reporting.finish.finish` adds the rest)."""
        return [
            write_csv(self.summary, out / "summary.csv"),
            write_text(out / "summary.tex", self.provenance.latex_comment() + self.to_latex()),
            write_csv(self.per_query, out / "per_query.csv", index=False),
            write_csv(self.significance, out / "significance.csv", index=False),
            write_csv(self.curves, out / "curves.csv", index=False),
            write_csv(self.systems, out / "systems.csv"),
            write_csv(self.precision_recall, out / "precision_recall.csv", index=False),
            *([] if self.intervals.empty else [write_csv(self.intervals, out / "intervals.csv", index=False)]),
            *([] if self.tiers.empty else [write_csv(self.tiers, out / "tiers.csv", index=False)]),
            *([] if self.pairs.empty else [write_csv(self.pairs, out / "pairs.csv", index=False)]),
            *groups.write_groups(self.group_means, self.group_tests, out),
            *([] if self.pool_bias is None else [self.pool_bias.write_table(out)]),
            *write_runs(self.runs, out),
        ]

    def to_latex(self, label: str = "tab:rankscope-compare") -> str:
        """The summary as a booktabs LaTeX table: best per metric in bold, significance against the
        baseline as superscripts, the legend and the test in the caption (as ranx's ``to_latex``)."""
        best, marks = summary_marks(self.summary, self.significance)
        legend = self.legend().removeprefix("* best on this metric; ")  # LaTeX says best in bold
        caption = f"{self.dataset}: bold = best on the metric; {legend}" if legend else self.dataset
        names = dict(zip(self.summary.index, baseline_names(self.summary, self.baselines or self.baseline)))
        if self.all_pairs():
            marks = pair_letters(self.summary, self.pairs)
            names = {name: f"{letter} {name}" for name, letter in system_letters(list(names)).items()}
        return latex.summary_table(self.summary, best, marks, names=names, caption=caption, label=label)

    def to_dict(self) -> dict[str, object]:
        """The result as plain data (what ``--format json`` prints and summary.json holds)."""
        return {
            "dataset": self.dataset,
            "baseline": self.baseline,
            "baselines": list(self.baselines or (self.baseline,)),
            "test": self.test,
            "correction": "holm",
            "alpha": ALPHA,
            "depth": self.depth,
            "systems": {name: row.to_dict() for name, row in self.systems.iterrows()},
            "mean": {spec: row.to_dict() for spec, row in self.summary.iterrows()},
            "significance": records(self.significance, index=False),
            "diagnostics": {spec: row.dropna().to_dict() for spec, row in self.diagnostics.iterrows()},
            "intervals": records(self.intervals, index=False),
            "interval_warnings": interval_warnings(self.intervals),
            "tiers": records(self.tiers, index=False),
            "pairs": records(self.pairs, index=False),
            "groups": records(self.group_means, index=False),
            "group_tests": records(self.group_tests, index=False),
            "pool_bias": None if self.pool_bias is None else pool_bias_dict(self.pool_bias),
            "warnings": list(self.warnings),
            "provenance": self.provenance.to_dict(),
        }


def shown_tiers(tiers: pd.DataFrame) -> str:
    """One metric's tiers as the terminal shows them: ``mean [low, high]`` and ``rank [low, high]``."""
    rows = pd.DataFrame(
        {
            "system": tiers["system"],
            "tier": tiers["tier"],
            "mean": [
                f"{m:.4f} [{lo:.4f}, {hi:.4f}]" for m, lo, hi in tiers[["mean", "mean_low", "mean_high"]].to_numpy()
            ],
            "rank": [f"{r} [{lo}, {hi}]" for r, lo, hi in tiers[["rank", "rank_low", "rank_high"]].to_numpy()],
        }
    )
    return text_table(rows, index=False)


def pool_bias_dict(found: PoolBiasResult) -> dict[str, object]:
    """The pool-bias test in compare's summary.json: depth, threshold, flagged systems and rows."""
    return {key: value for key, value in found.to_dict().items() if key not in ("dataset", "metrics", "provenance")}


def interval_warnings(intervals: pd.DataFrame) -> list[str]:
    """What the simulation says of the intervals' coverage at their human sample's size (docs/intervals.md)."""
    if intervals.empty:
        return []
    from rankscope.evaluation.ppi import coverage_warning

    first = intervals.iloc[0]
    line = coverage_warning(int(first["n_labelled"]), int(first["n_total"]), float(first["confidence"]))
    return [] if line is None else [line]


def shown_systems(systems: pd.DataFrame) -> pd.DataFrame:
    """The systems table as the terminal shows it: brief descriptions, no notes column when nothing is noted."""
    shown = systems.assign(description=systems["description"].map(brief_description))
    if "notes" in shown.columns and not shown["notes"].astype(bool).any():
        shown = shown.drop(columns="notes")
    return shown


def shown_intervals(intervals: pd.DataFrame) -> pd.DataFrame:
    """The intervals as text, one row per metric and system (or difference): ``estimate [low, high]``."""

    def cell(row: pd.Series, method: str) -> str:
        return f"{row[method + '_estimate']:.4f} [{row[method + '_low']:.4f}, {row[method + '_high']:.4f}]"

    rows = [
        {
            "metric": row["metric"],
            "system": row["system"] if not row["baseline"] else f"{row['system']} vs {row['baseline']}",
            "naive": cell(row, "naive"),
            "PPI": cell(row, "ppi"),
            "PPI++": cell(row, "ppipp"),
            "lambda": f"{row['ppipp_lambda']:.2f}",
        }
        for _, row in intervals.iterrows()
    ]
    return pd.DataFrame(rows)


def depth_phrase(depth: int | None, retrievers: bool = True) -> str:
    """How deep the runs are, in words: what a depth given or left out did (``retrievers``: False when
    every system is a run file, as in ``evaluate``, which has no retriever to search)."""
    if depth is None:
        return (
            f"retrievers searched to depth {SEARCH_DEPTH}, run files scored as given"
            if retrievers
            else ("run files scored as given")
        )
    return f"every run to depth {depth}"


def per_query_differences(result: CompareResult, metric: str) -> dict[str, pd.Series]:
    """Per-query ``retriever - baseline`` on ``metric`` for every non-baseline retriever."""
    wide = result.per_query[result.per_query["metric"] == metric].pivot(
        index="query_id", columns="retriever", values="value"
    )
    return {s: wide[s] - wide[result.baseline] for s in result.summary.index if s != result.baseline}


def cutoff_table_of(result: CompareResult, measure: str) -> pd.DataFrame:
    """``measure`` (hit or recall) at each K: one row per system, one column per K (narrow for any
    number of systems, unlike one column per system and measure)."""
    table = result.curves.pivot(index="retriever", columns="K", values=measure).reindex(result.summary.index)
    table.columns = [f"@{k}" for k in table.columns]
    return table


def build_report(result: CompareResult) -> Report:
    """The comparison as a report: marked summary, significance details, curves, per-query differences."""
    primary = result.metrics[0]
    workflow = result.provenance.workflow  # compare, or evaluate writing compare's report of run files
    report = Report(f"rankscope {workflow}: {result.dataset}")
    report.paragraph(
        f"{len(result.summary)} systems on {result.dataset} ({depth_phrase(result.depth, workflow != 'evaluate')}); baseline"
        f"{'s' * (len(result.baselines) > 1)} {', '.join(result.baselines or (result.baseline,))}; metrics scored with trec_eval semantics over the "
        f"{result.per_query['query_id'].nunique()} queries in the qrels."
    )
    report.heading("Summary").table(result.marked(), caption=result.legend())
    report.paragraph(provenance.judgments_caption(result.provenance))
    report.heading("Systems").table(result.systems, caption=SYSTEMS_CAPTION)
    for line in result.warnings:
        report.paragraph(f"Warning: {line}")
    if result.warnings:
        report.paragraph(HOLES_RULE)
    if not result.diagnostics.empty:
        report.heading("Retriever diagnostics").table(result.diagnostics, caption=DIAGNOSTICS_CAPTION)
    curves = {
        spec: frame.set_index("K")[["hit", "recall"]] for spec, frame in result.curves.groupby("retriever", sort=False)
    }
    report.heading("Hit@K and Recall@K").row(
        *(
            table_block(cutoff_table_of(result, measure), caption=f"{measure.capitalize()}@K")
            for measure in ("hit", "recall")
        )
    )
    report.image(
        "hit_recall_at_k",
        plots.cutoff_curves(curves, dataset=result.dataset, reference=result.baseline),
        "Hit@K and Recall@K against K",
    )
    pr = {
        name: frame.set_index("recall")["precision"]
        for name, frame in result.precision_recall.groupby("retriever", sort=False)
    }
    report.heading("Precision-recall").image(
        "precision_recall",
        plots.precision_recall(pr, dataset=result.dataset, reference=result.baseline),
        "interpolated precision at the 11 recall points",
    )
    diffs = per_query_differences(result, primary)
    if diffs:
        report.heading(f"Per-query difference to {result.baseline} ({primary})")
        report.image(
            "per_query_difference",
            plots.per_query_difference(diffs, primary, result.baseline, dataset=result.dataset),
            f"{primary} of each retriever minus {result.baseline}, per query, sorted",
        )
    if len(result.summary) >= TIERS_FROM:
        tiers = result.tiers[result.tiers["metric"] == primary]
        report.heading(f"Tiers and rank intervals ({primary})").table(
            tiers.drop(columns="metric").set_index("system"), caption=result.tier_captions[primary]
        )
        report.image(
            "rank_intervals",
            plots.rank_intervals(tiers.set_index("system"), primary, dataset=result.dataset),
            f"{primary}: each system's mean and rank interval, sorted, coloured by tier",
        )
    if not result.group_means.empty:
        systems, baselines = list(result.summary.index), result.baselines or (result.baseline,)
        groups.add_section(report, result.group_means, result.group_tests, systems, baselines, primary, result.dataset)
    if result.pool_bias is not None:
        result.pool_bias.add_section(report)
    if not result.significance.empty:
        report.heading(f"Significance against the baseline{'s' * (len(result.baselines) > 1)}").table(
            significance_grid(result.significance, list(result.metrics)), caption=GRID_CAPTION
        )
    return provenance.add_section(report, result.provenance)
