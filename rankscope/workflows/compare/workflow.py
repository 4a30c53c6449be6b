"""Compare systems on one dataset: which is better, on which metric, and is it significant?

A system is a retriever spec, a Retriever object, a run DataFrame or a run file
(:mod:`rankscope.workflows.common.systems`). Every retriever is indexed and searched on the
same queries (to ``depth``, 1000 by default), every given run is checked against the dataset and
scored as given, cut only when a ``depth`` is given (so a run file's numbers are ``rankscope
evaluate``'s); every metric is
scored by :func:`evaluation.evaluate` (trec_eval semantics), and every
retriever is tested against the baseline per metric with a paired test and
Holm's correction over the retrievers compared on that metric. What the result shows, and how:
:mod:`.result`; compare with judgments: :mod:`.judging`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from rankscope.core import forked
from rankscope.core.errors import RankscopeError
from rankscope.core.progress import progress
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.trec import CodedTable, coded_table
from rankscope.evaluation.conventions import WORKFLOW_EXCLUDE_UNJUDGED
from rankscope.evaluation.holes import BANDS, band_name, hole_warnings, judged_by_band
from rankscope.evaluation.marks import ALPHA
from rankscope.reporting import provenance
from rankscope.reporting.finish import finish
from rankscope.reporting.provenance import Provenance
from rankscope.workflows.common.fanout import coded_qrels, produce_runs
from rankscope.workflows.common.judgments import SHARE_DEPTH, Judgments, read_judgments, system_shares
from rankscope.workflows.common.runs import (
    CUTOFFS,
    SEARCH_DEPTH,
    DatasetSource,
    check_depth,
    cutoff_table,
    resolve_dataset,
)
from rankscope.workflows.common.systems import System, SystemLike, SystemRun, descriptions, resolve_systems
from rankscope.workflows.compare.judging import check_judging, judge_intervals, judged_pool, judged_settings
from rankscope.workflows.compare.result import JUDGE_COLUMNS, CompareResult
from rankscope.workflows.options import Execution, Judging, Output, keyword_aliases

if TYPE_CHECKING:
    from rankscope.evaluation.results import EvaluationResult

DEFAULT_RETRIEVERS = ("tfidf", "bm25", "w2v")


@keyword_aliases(qrels="dataset", runs="retrievers")
def compare(
    dataset: DatasetSource = "cranfield",
    retrievers: Sequence[SystemLike] | Mapping[str, SystemLike] = DEFAULT_RETRIEVERS,
    metrics: Sequence[str] | None = None,
    baseline: str | Sequence[str] | None = None,
    out: str | Path | Output | None = None,
    *,
    depth: int | None = None,
    execution: Execution = Execution(),
    judgments: str | Path | Judging | None = None,
) -> CompareResult:
    """Run or read every system, score, test against ``baseline``; write files to ``out`` (a folder,
    or an :class:`~rankscope.workflows.options.Output` with the figures' formats).

    ``judgments`` (a ``rankscope judge --out`` folder) scores with its merged qrels instead of the
    dataset's, adds each system's judge share and invalid replies in its top 10 to the systems
    table and, when the folder records a human sample, the naive, PPI and PPI++ intervals of every
    metric (:mod:`rankscope.workflows.common.judgments`). A :class:`~rankscope.workflows.options.Judging`
    instead has a judge label the pool's holes first, through the judgments cache, with the
    execution's seed drawing the human sample: the same numbers as ``rankscope judge`` then
    ``compare --judgments`` (:func:`~rankscope.workflows.compare.judging.judged_pool`).

    ``depth``: documents each retriever returns per query (None: 1000) and, only when given, the
    rank below which a given run is cut (None: a run is scored as given, as ``rankscope evaluate``
    scores it).

    ``retrievers`` is a list of specs (each named by itself) or a mapping name -> system
    (spec, Retriever, run DataFrame or run file path). ``dataset`` may be judgments alone (a qrels
    table or a qrels file) when every system is a run: ``compare(qrels=qrels, runs={"a": run_a,
    "b": run_b})``, as ranx's ``compare(qrels, runs)`` (``qrels=`` and ``runs=`` name ``dataset`` and
    ``retrievers``). ``baseline`` names one of them
    (default: ``bm25`` when present, else the first system), or several: every system is then tested
    against each, each pair once, with one Holm correction per metric over every comparison made.
    ``execution`` gives the seed, the paired
    test and a scheduler (``local:N`` or a Dask scheduler's address) that makes each system's run a
    task there (:func:`rankscope.workflows.common.fanout.produce_runs`).

    >>> import rankscope as rs
    >>> result = rs.compare("cranfield", ["tfidf", "bm25"], metrics=["ndcg@10", "map"])  # RANKSCOPE_DATA
    >>> result.summary.round(4).to_dict("index")
    {'tfidf': {'ndcg@10': 0.3731, 'map': 0.3115}, 'bm25': {'ndcg@10': 0.3838, 'map': 0.3227}}
    """
    if isinstance(retrievers, (Mapping, list, tuple)) and len(retrievers) == 1:
        resolve_systems(retrievers)  # a mistyped spec is said first (did you mean ...?)
        raise RankscopeError(
            f"compare needs at least two systems, got {list(retrievers)}; diagnose studies one "
            "(rankscope evaluate QRELS RUN --out DIR reports one run)"
        )
    return comparison(
        dataset, retrievers, metrics, baseline, out, depth=depth, execution=execution, judgments=judgments
    )


def comparison(
    dataset: DatasetSource,
    retrievers: Sequence[SystemLike] | Mapping[str, SystemLike],
    metrics: Sequence[str] | None,
    baseline: str | Sequence[str] | None,
    out: str | Path | Output | None,
    *,
    depth: int | None,
    execution: Execution,
    judgments: str | Path | Judging | None,
) -> CompareResult:
    """:func:`compare`'s work for any number of systems, one included (``rankscope evaluate --out``
    reports a single run with compare's tables, plots and LaTeX): metrics, depth, systems (specs checked,
    run files read, before any indexing), baselines, output folder and a judge, each refused before any
    computing; then the dataset and a judgments folder; each system's run made and measured
    (:func:`_scored_systems`); the systems tested and tabulated (:func:`_result`)."""
    from rankscope.evaluation import DEFAULT_METRICS
    from rankscope.evaluation.metrics import parse_metrics

    checked = tuple(m.name for m in parse_metrics(DEFAULT_METRICS if metrics is None else metrics))
    check_depth(depth)
    systems = resolve_systems(retrievers)
    baselines = choose_baselines(baseline, list(systems))
    out_path, figures = Output.of(out).checked()
    if isinstance(judgments, Judging):
        check_judging(judgments)
    labelled = read_judgments(judgments) if isinstance(judgments, (str, Path)) else None
    data = resolve_dataset(dataset)
    if labelled is not None:
        data = replace(data, qrels=labelled.qrels, label_sources=labelled.sources())
    cutoffs = [k for k in CUTOFFS if k <= (depth or SEARCH_DEPTH)]  # beyond the depth Hit@K would just repeat Hit@depth
    setting = _Setting(checked, depth, systems, baselines, out_path, figures, judgments, labelled, data, cutoffs)
    data, labelled, scored = _scored_systems(setting, execution)
    return finish(_result(setting, data, labelled, scored, execution), setting.out_path, setting.figures)


@dataclass(frozen=True)
class _Setting:
    """What a comparison was asked, checked before any computing, and the dataset it runs on (its qrels
    those of a judgments folder, when one is given)."""

    metrics: tuple[str, ...]
    depth: int | None
    systems: dict[str, System]
    baselines: tuple[str, ...]
    out_path: Path | None
    figures: tuple[str, ...]
    judgments: str | Path | Judging | None
    labelled: Judgments | None
    """The judgments folder read (None without one, or with a judge: its pool is judged later)."""
    data: Dataset
    cutoffs: list[int]

    @property
    def judging(self) -> Judging | None:
        """A judge labelling the pool while comparing."""
        return self.judgments if isinstance(self.judgments, Judging) else None


def _scored_systems(
    setting: _Setting, execution: Execution
) -> tuple[Dataset, Judgments | None, list[tuple[str, Scored]]]:
    """Each system's run made and measured, in the systems' order; with a judge, the pool of every run
    judged first (the dataset then scored with its merged qrels, returned with the judgments)."""
    systems, data, depth, labelled = setting.systems, setting.data, setting.depth, setting.labelled
    made: Iterable[tuple[str, SystemRun]] = produce_runs(systems, data, depth, execution.scheduler)
    if setting.judging is not None:  # the pool needs every run before any is scored
        made = list(made)
        labelled = judged_pool(data, {name: produced.run for name, produced in made}, setting.judging, execution)
        data = replace(data, qrels=labelled.qrels, label_sources=labelled.sources())
    qrels = coded_qrels(data.qrels)  # each run is scored four times below: ids coded once (the same values)
    metrics, cutoffs = setting.metrics, setting.cutoffs
    here, later = list(systems), []
    if (
        setting.judging is None
        and execution.scheduler is None
        and all(s.may_fork for s in systems.values())
        and len(systems) > 1
        and forked.can_fork()
    ):
        # the second half of the systems made and scored on the second core (a child forked now) while the first
        # half is made here; without a child, one after the other
        here, later = here[: (len(here) + 1) // 2], here[(len(here) + 1) // 2 :]
        made = produce_runs({name: systems[name] for name in here}, data, depth)
    others = {name: systems[name] for name in later}
    beside = forked.beside(made_and_scored, others, data, depth, qrels, metrics, cutoffs) if later else list
    scored = [
        (name, scored_run(produced, qrels, metrics, cutoffs))
        for name, produced in progress(made, desc="systems", total=len(here), steps=here)
    ]
    return data, labelled, [*scored, *beside()]


def _result(
    setting: _Setting,
    data: Dataset,
    labelled: Judgments | None,
    scored: list[tuple[str, Scored]],
    execution: Execution,
) -> CompareResult:
    """The systems tested against the baseline(s) and pair by pair, and every table of the result."""
    from rankscope.evaluation.metrics import IPREC_LEVELS
    from rankscope.evaluation.significance import compare_results

    metrics, baselines, test, seed = setting.metrics, setting.baselines, execution.test, execution.seed
    baseline = baselines[0]
    runs = {name: produced.run for name, (produced, *_) in scored}
    results = {name: measured for name, (_, measured, *_) in scored}
    # every pair tested on the second core (a child forked now, where scipy.special, imported for the t-tests'
    # p-values, is loaded) while the systems are tested against the baseline(s) here; without a child, in turn
    paired = forked.beside(all_pairs_tests, results, metrics, seed)
    significance = compare_results(results, baselines, metrics, test=test, correction="holm", seed=seed, alpha=ALPHA)
    tiers, pairs, tier_captions = paired()
    summary = pd.DataFrame({spec: result.mean for spec, result in results.items()}).T[list(metrics)]
    summary.index.name = "retriever"
    per_query = pd.concat(
        [result.per_query.assign(retriever=spec) for spec, result in results.items()], ignore_index=True
    )[["retriever", "query_id", "metric", "value"]]
    systems_table = _systems_table(setting.systems, scored)
    holes = tuple(hole_warnings(systems_table[[band_name(band) for band in BANDS]], baseline))
    if labelled is not None:
        shares = system_shares(runs, labelled.labels)[[f"{column}@{SHARE_DEPTH}" for column in JUDGE_COLUMNS]]
        systems_table = systems_table.join(shares)
    curves = [curve.reset_index().assign(retriever=name) for name, (*_, curve, _) in scored]
    precisions = [(name, level, levels[f"iprec@{level:g}"]) for name, (*_, levels) in scored for level in IPREC_LEVELS]
    diagnostics = {name: produced.diagnostics for name, (produced, *_) in scored if produced.diagnostics}
    return CompareResult(
        dataset=data.name,
        baseline=baseline,
        baselines=baselines,
        tiers=tiers,
        pairs=pairs,
        tier_captions=tier_captions,
        queries=data.queries[["query_id", "text"]],
        queries_file=data.queries_file,
        qrels=data.qrels,
        metrics=metrics,
        test=test,
        depth=setting.depth,
        summary=summary,
        per_query=per_query,
        significance=significance,
        curves=pd.concat(curves, ignore_index=True)[["retriever", "K", "hit", "recall"]],
        runs=runs,
        diagnostics=pd.DataFrame.from_dict(diagnostics, orient="index").rename_axis("retriever"),
        systems=systems_table,
        intervals=pd.DataFrame() if labelled is None else judge_intervals(labelled, runs, metrics, baseline),
        precision_recall=pd.DataFrame(precisions, columns=["retriever", "recall", "precision"]),
        warnings=holes + (labelled.warnings if labelled is not None else ()),
        provenance=_provenance(setting, data, test, seed),
    )


def _systems_table(systems: Mapping[str, System], scored: list[tuple[str, Scored]]) -> pd.DataFrame:
    """Per system: its description, the judged shares by rank band and the run check's notes."""
    described = {
        name: {"description": systems[name].description, **bands, "notes": "; ".join(produced.notes)}
        for name, (produced, _, bands, *_) in scored
    }
    return pd.DataFrame.from_dict(described, orient="index").rename_axis("retriever")


def _provenance(setting: _Setting, data: Dataset, test: str, seed: int) -> Provenance:
    """What was compared, on what, with which settings and judgments."""
    baselines = setting.baselines
    return provenance.record(
        "compare",
        data,
        descriptions(setting.systems),
        metrics=list(setting.metrics),
        baseline=baselines[0] if len(baselines) == 1 else list(baselines),
        test=test,
        correction="holm",
        alpha=ALPHA,
        seed=seed,
        depth=setting.depth,
        **judged_settings(setting.judgments),
    )


Scored = tuple[SystemRun, "EvaluationResult", dict[str, float], pd.DataFrame, pd.Series]
"""A system's run (without its retriever), its metrics, judged shares by rank band, Hit/Recall@K and
interpolated precisions, as :func:`comparison` tabulates them."""


def scored_run(produced: SystemRun, qrels: CodedTable, metrics: Sequence[str], cutoffs: Sequence[int]) -> Scored:
    """What compare measures of one system's run (its ids coded once for the four measurements)."""
    from rankscope.evaluation import evaluate
    from rankscope.evaluation.metrics import IPREC_LEVELS

    run = coded_table(produced.run, "run")
    return (
        replace(produced, retriever=None),
        evaluate(qrels, run, metrics, exclude_unjudged=WORKFLOW_EXCLUDE_UNJUDGED),
        judged_by_band(qrels, run),
        cutoff_table(qrels, run, cutoffs, ("hit", "recall")),
        evaluate(
            qrels, run, [f"iprec@{level:g}" for level in IPREC_LEVELS], exclude_unjudged=WORKFLOW_EXCLUDE_UNJUDGED
        ).mean,
    )


def made_and_scored(
    systems: Mapping[str, System],
    data: Dataset,
    depth: int | None,
    qrels: CodedTable,
    metrics: Sequence[str],
    cutoffs: Sequence[int],
) -> list[tuple[str, Scored]]:
    """Each system's run made and measured, one after the other (the half of them a child does)."""
    return [
        (name, scored_run(produced, qrels, metrics, cutoffs)) for name, produced in produce_runs(systems, data, depth)
    ]


def all_pairs_tests(
    results: Mapping[str, EvaluationResult], metrics: Sequence[str], seed: int
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """Every pair of systems tested on every metric, the tiers and rank intervals
    (:func:`rankscope.evaluation.tiers.tiers_by_metric`); empty for one system alone."""
    if len(results) < 2:
        return pd.DataFrame(), pd.DataFrame(), {}
    from rankscope.evaluation.tiers import tiers_by_metric

    wide = {name: result.wide() for name, result in results.items()}
    per_metric = {metric: pd.DataFrame({name: table[metric] for name, table in wide.items()}) for metric in metrics}
    return tiers_by_metric(per_metric, seed=seed)


def choose_baselines(baseline: str | Sequence[str] | None, names: Sequence[str]) -> tuple[str, ...]:
    """The named baselines (each refused if it is not a system or named twice), else ``bm25`` if
    compared, else the first system."""
    if baseline is None:
        return ("bm25" if "bm25" in names else names[0],)
    baselines = (baseline,) if isinstance(baseline, str) else tuple(baseline)
    for name in baselines:
        if name not in names:
            raise RankscopeError(f"baseline {name!r} is not among the systems {list(names)}; use --baseline")
    repeated = [name for i, name in enumerate(baselines) if name in baselines[:i]]
    if repeated or not baselines:
        raise RankscopeError(f"--baseline {repeated[0]!r} is given twice" if repeated else "no baseline given")
    return baselines
