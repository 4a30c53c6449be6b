"""``rankscope gate``: may a candidate replace a baseline? A non-inferiority test for continuous integration.

Both systems are run (or read) as compare does and scored on the same queries; the decision is
:mod:`rankscope.evaluation.noninferiority`'s: ``pass`` (exit 0) when the candidate is not worse than
the baseline by more than the margin, ``fail`` (exit 1) when it is, ``undecided`` (exit 3) when the
queries cannot tell, each one-sided bound at level ``alpha``. With a ``rankscope judge --out`` folder
holding a human sample the bounds are the prediction-powered interval of the difference
(:mod:`rankscope.evaluation.ppi`), never the judge's number alone. The result shows the queries that
regressed most and gives a Markdown summary and a JUnit XML file for CI systems to display.
"""

from __future__ import annotations

import os
import warnings as _warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.evaluation.noninferiority import (
    EXIT_STATUS,
    FAIL,
    PASS,
    Bounds,
    Margin,
    paired_bounds,
    verdict,
)
from rankscope.reporting import provenance
from rankscope.reporting.finish import finish
from rankscope.reporting.provenance import Provenance
from rankscope.reporting.report import Report, to_markdown, write_csv
from rankscope.reporting.tables import text_table, wrap_paragraph
from rankscope.workflows.common.runs import DatasetSource, resolve_dataset
from rankscope.workflows.common.systems import SystemLike, descriptions, resolve_systems
from rankscope.workflows.options import Execution, Judging, Output

if TYPE_CHECKING:
    from rankscope.corpora.dataset import Dataset
    from rankscope.workflows.common.judgments import Judgments
    from rankscope.workflows.common.systems import System

SHOWN = 10
"""The queries that regressed most, as many as the result shows."""
METHODS = {
    "t": "paired Student t on the per-query differences",
    "sequence": "anytime-valid confidence sequence over the queries in a seeded random order",
    "ppi": "prediction-powered (PPI) interval",
}


@dataclass(frozen=True)
class GateResult:
    """The decision and what it rests on: ``bounds`` of the mean difference ``candidate - baseline``,
    ``per_query`` (``query_id, baseline, candidate, difference``, the worst regression first),
    ``method`` (a key of :data:`METHODS`), ``warnings`` (what the reader must know: queries only one
    system answered, the intervals' simulated coverage)."""

    dataset: str
    metric: str
    margin: float
    baseline: str
    candidate: str
    method: str
    bounds: Bounds
    per_query: pd.DataFrame
    provenance: Provenance
    warnings: tuple[str, ...] = ()
    files: tuple[Path, ...] = ()

    @property
    def verdict(self) -> str:
        return str(verdict(self.bounds.low, self.bounds.high, self.margin))

    @property
    def exit_status(self) -> int:
        """0 pass, 1 fail, 3 undecided."""
        return EXIT_STATUS[self.verdict]

    def regressed(self, count: int = SHOWN) -> pd.DataFrame:
        """The ``count`` queries whose value fell most (only those that fell)."""
        return self.per_query[self.per_query["difference"] < 0].head(count)

    def sentence(self) -> str:
        """The decision in one sentence, with the numbers it rests on."""
        b, level = self.bounds, 1 - 2 * self.bounds.alpha
        told = {
            PASS: f"PASS: {self.candidate} is not worse than {self.baseline} by more than {self.margin:g}",
            FAIL: f"FAIL: {self.candidate} is worse than {self.baseline} by more than {self.margin:g}",
        }.get(
            self.verdict,
            f"UNDECIDED: the queries cannot tell whether {self.candidate} is worse by more than {self.margin:g}",
        )
        return (
            f"{told} on {self.metric} ({len(self.per_query)} queries): mean difference {b.estimate:+.4f}, "
            f"{level:.0%} interval [{b.low:+.4f}, {b.high:+.4f}] ({METHODS[self.method]}; each one-sided bound "
            f"at level {b.alpha:g})"
        )

    def shown(self) -> pd.DataFrame:
        return self.regressed().set_index("query_id")

    def to_text(self) -> str:
        lines = [wrap_paragraph(self.sentence())]  # the warnings were given as the workflow ran
        if len(self.regressed()):
            lines += ["", "queries that regressed most:", text_table(self.shown())]
        return "\n".join(lines + provenance.caption_lines(self.provenance))

    def to_dict(self) -> dict[str, object]:
        return {
            "dataset": self.dataset,
            "metric": self.metric,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "margin": self.margin,
            "alpha": self.bounds.alpha,
            "method": self.method,
            "verdict": self.verdict,
            "exit_status": self.exit_status,
            "n_queries": len(self.per_query),
            "estimate": self.bounds.estimate,
            "low": self.bounds.low,
            "high": self.bounds.high,
            "regressed": self.regressed().to_dict(orient="records"),
            "warnings": list(self.warnings),
            "provenance": self.provenance.to_dict(),
        }

    def report(self) -> Report:
        report = Report(f"rankscope gate: {self.candidate} vs {self.baseline} on {self.dataset}")
        report.paragraph(self.sentence())
        if self.warnings:
            report.bullets(list(self.warnings))
        if len(self.regressed()):
            report.heading("Queries that regressed most").table(self.shown())
        return report.paragraph(provenance.judgments_caption(self.provenance))

    def to_markdown(self) -> str:
        """The summary a CI system shows (``$GITHUB_STEP_SUMMARY``): the report without provenance."""
        return to_markdown(self.report())

    def to_junit(self) -> str:
        """One JUnit test case, failed on ``fail``, skipped on ``undecided``: CI systems list it with the rest."""
        suite = ET.Element("testsuite", name="rankscope gate", tests="1")
        suite.set("failures", "1" if self.verdict == FAIL else "0")
        suite.set("skipped", "1" if self.verdict not in (PASS, FAIL) else "0")
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"rankscope.gate.{self.dataset}",
            name=f"{self.metric}: {self.candidate} vs {self.baseline}",
        )
        if self.verdict == FAIL:
            ET.SubElement(case, "failure", message=self.sentence()).text = self.to_text()
        elif self.verdict != PASS:
            ET.SubElement(case, "skipped", message=self.sentence())
        ET.SubElement(case, "system-out").text = self.to_text()
        ET.indent(suite)
        return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"

    def write_tables(self, out: Path) -> list[Path]:
        from rankscope.reporting.report import write_text

        return [
            write_csv(self.per_query, out / "per_query.csv", index=False),
            write_text(out / "junit.xml", self.to_junit()),
        ]


def gate(
    dataset: DatasetSource = "cranfield",
    *,
    baseline: SystemLike,
    candidate: SystemLike,
    margin: float | Margin,
    metric: str = "ndcg@10",
    out: str | Path | Output | None = None,
    execution: Execution = Execution(),
    judgments: str | Path | Judging | None = None,
) -> GateResult:
    """Is ``candidate`` not worse than ``baseline`` by more than ``margin`` on ``metric``?

    ``baseline`` and ``candidate`` are specs, Retrievers, runs or run files (as
    :func:`rankscope.workflows.compare.compare` takes them); ``dataset`` may be judgments alone when
    both are runs. ``margin`` is a number, or a :class:`~rankscope.evaluation.noninferiority.Margin`
    with each one-sided bound's error ``alpha`` (default 0.05). ``execution.scheduler`` makes each
    run a task there. ``judgments`` (a ``rankscope judge --out`` folder with a human sample, or a
    :class:`~rankscope.workflows.options.Judging` with ``human_sample``: the two runs' pool judged as
    ``compare`` judges it, the sample drawn with ``execution.seed``) scores with the merged qrels and
    decides by the prediction-powered interval of the difference, never the judge's number alone.
    """
    from rankscope.evaluation.metrics import parse_metric

    name = parse_metric(metric).name
    rule = Margin.of(margin)
    margin, alpha = rule.width, rule.alpha
    systems = resolve_systems(_named(baseline, candidate))
    out_path, figures = Output.of(out).checked()
    judged = _checked_judgments(judgments, rule.sequential)  # before any system runs
    data = resolve_dataset(dataset)
    runs = _runs(systems, data, execution.scheduler)
    if isinstance(judgments, Judging):
        from rankscope.workflows.compare.judging import judged_pool

        judged = judged_pool(data, runs, judgments, execution)
    qrels = data.qrels if judged is None else judged.qrels
    per_query, warnings = _per_query(qrels, runs, name)
    if judged is None:
        differences = per_query["difference"].to_numpy()
        if rule.sequential:  # the sequence depends on the order: a seeded one, so the decision is repeatable
            differences = _in_range(per_query)[np.random.default_rng(execution.seed).permutation(len(differences))]
        bounds, method = paired_bounds(differences, alpha, rule.sequential), "sequence" if rule.sequential else "t"
    else:
        bounds, more = _ppi_bounds(judged, runs, name, alpha)
        method, warnings = "ppi", warnings + more
    for line in warnings:
        _warnings.warn(line, UserWarning, stacklevel=2)
    from rankscope.workflows.compare.judging import judged_settings

    described = descriptions(systems)
    record = provenance.record(
        "gate",
        data,
        described,
        metric=name,
        margin=margin,
        alpha=alpha,
        method=method,
        **judged_settings(judgments),
    )
    labels = list(systems)
    result = GateResult(data.name, name, margin, labels[0], labels[1], method, bounds, per_query, record, warnings)
    return finish(result, out_path, figures)


def _checked_judgments(judgments: str | Path | Judging | None, sequential: bool) -> Judgments | None:
    """A judgment folder read (one with a human sample), or a :class:`Judging` checked (one asking for a
    sample): a gate with judge labels decides by PPI only, so either without a human sample is refused."""
    if judgments is None:
        return None
    if sequential:
        raise RankscopeError(
            "--sequential decides from the per-query differences alone; with judge labels the PPI interval decides"
        )
    if isinstance(judgments, Judging):
        from rankscope.workflows.compare.judging import check_judging

        if judgments.human_sample is None:
            raise RankscopeError(
                "--judge needs --human-sample N: the gate decides by the PPI interval of a human sample, never "
                "the judge's number alone"
            )
        check_judging(judgments)
        return None
    from rankscope.workflows.common.judgments import read_judgments

    found = read_judgments(judgments)
    found.ppi_qrels()  # a folder without a human sample is refused here
    return found


def _named(baseline: SystemLike, candidate: SystemLike) -> dict[str, SystemLike]:
    """The two systems by their names (a spec, a run file's name); the same system twice is refused,
    and two run files of one name are told apart as baseline and candidate."""
    from rankscope.workflows.common.systems import system_name

    if _same(baseline, candidate):
        raise RankscopeError(
            f"--baseline and --candidate are the same system ({system_name(baseline)}): nothing to test"
        )
    names = [system_name(baseline), system_name(candidate)]
    if names[0] == names[1]:
        names = [f"baseline {names[0]}", f"candidate {names[1]}"]
    return dict(zip(names, (baseline, candidate)))


def _same(first: SystemLike, second: SystemLike) -> bool:
    if isinstance(first, str) and isinstance(second, str):
        return first == second
    if isinstance(first, os.PathLike) and isinstance(second, os.PathLike):
        return Path(first).resolve() == Path(second).resolve()
    return first is second


def _runs(systems: dict[str, System], data: Dataset, scheduler: str | None) -> dict[str, pd.DataFrame]:
    from rankscope.workflows.common.fanout import produce_runs

    return {name: produced.run for name, produced in produce_runs(systems, data, None, scheduler)}


def _per_query(qrels: pd.DataFrame, runs: dict[str, pd.DataFrame], metric: str) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Each judged query's value for both systems (0 where a run has no answer: a query the candidate
    dropped is a regression) and its difference, the worst regression first; runs that share no query
    are refused, and a query only one of them answers is said."""
    from rankscope.evaluation import evaluate
    from rankscope.evaluation.conventions import WORKFLOW_EXCLUDE_UNJUDGED

    (base_name, base_run), (cand_name, cand_run) = runs.items()
    judged_queries = set(qrels["query_id"].astype(str))
    answered = [set(run["query_id"].astype(str)) & judged_queries for run in (base_run, cand_run)]
    if not answered[0] & answered[1]:
        raise RankscopeError(
            f"{base_name} and {cand_name} answer no judged query in common ({len(answered[0])} and "
            f"{len(answered[1])} judged queries answered): runs of different query sets, or ids written otherwise"
        )
    values = {
        label: evaluate(qrels, run, [metric], exclude_unjudged=WORKFLOW_EXCLUDE_UNJUDGED).per_query.set_index(
            "query_id"
        )["value"]
        for label, run in (("baseline", base_run), ("candidate", cand_run))
    }
    table = pd.DataFrame(values).fillna(0.0).rename_axis("query_id")  # the queries either was scored on
    scored = set(table.index.astype(str))
    warnings = tuple(
        f"{name} has no answer for {len(missing)} judged queries the other answers (scored 0), e.g. {sorted(missing)[0]!r}"
        for name, missing in ((base_name, scored - answered[0]), (cand_name, scored - answered[1]))
        if missing
    )
    table["difference"] = table["candidate"] - table["baseline"]
    table = table.reset_index().sort_values(["difference", "query_id"], kind="stable", ignore_index=True)
    return table, warnings


def _in_range(per_query: pd.DataFrame) -> np.ndarray:
    """The differences by query id, if each is in [-1, 1] (a metric in [0, 1]): the confidence sequence's bound."""
    per_query = per_query.sort_values("query_id", ignore_index=True)
    differences = per_query["difference"].to_numpy()
    outside = np.flatnonzero(np.abs(differences) > 1)
    if len(outside):
        row = per_query.iloc[outside[0]]
        raise RankscopeError(
            f"--sequential needs a metric in [0, 1]: query {row['query_id']!r} differs by {row['difference']:g}"
        )
    return differences


def _ppi_bounds(
    judged: Judgments, runs: dict[str, pd.DataFrame], metric: str, alpha: float
) -> tuple[Bounds, tuple[str, ...]]:
    """The PPI interval of ``candidate - baseline`` at ``1 - 2 alpha``: each bound one-sided at ``alpha``."""
    from rankscope.evaluation.ppi import ppi_evaluate

    human, judge = judged.ppi_qrels()
    base = next(iter(runs))
    found = ppi_evaluate(human, judge, runs, metric, baseline=base, queries=judged.queries(), confidence=1 - 2 * alpha)
    row = found.differences.iloc[0]
    bounds = Bounds(float(row["ppi_estimate"]), float(row["ppi_low"]), float(row["ppi_high"]), alpha)
    return bounds, tuple(found.warnings)
