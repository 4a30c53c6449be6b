"""Diagnose where a retriever loses: recall (not retrieved within the depth) or ranking (retrieved too low).

For each cutoff K every relevant document is found, a ranking loss or a recall
loss, and the queries that miss are split into ranking misses and recall misses
(see :mod:`rankscope.workflows.diagnose.misses`); each metric's gap is priced in points:
the value now, with a perfect reranker over the top D, and the ideal
(:mod:`rankscope.workflows.diagnose.headroom`); every recall loss is explained as a
vocabulary mismatch or outscored, and with a second system it is said which
losses that system recovers (:mod:`rankscope.workflows.diagnose.recall_failures`); the
queries that lose the most points are listed with their text, and the report
drills down into every query (:mod:`rankscope.workflows.diagnose.drilldown`);
plain-language findings are generated from the numbers
(:mod:`rankscope.workflows.diagnose.findings`); on request (``sampled=True``) the sampled
protocol's numbers are set beside the full-ranking ones
(:mod:`rankscope.workflows.diagnose.sampling`).

:func:`diagnose` builds its systems from any system (:mod:`rankscope.workflows.common.systems`); :func:`diagnose_runs`
takes runs already made (each with its retriever, if there is one: it gives the
analyzer and scores the sampled protocol). What the result shows, and how: :mod:`.result`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TypeVar

import pandas as pd

from rankscope.core import forked
from rankscope.core.errors import RankscopeError
from rankscope.core.progress import progress
from rankscope.corpora.dataset import Dataset
from rankscope.reporting import provenance
from rankscope.reporting.finish import finish
from rankscope.reporting.provenance import Provenance
from rankscope.workflows.common.runs import CUTOFFS, check_depth, cutoff_table, resolve_dataset
from rankscope.workflows.common.systems import SystemLike, SystemRun, named_systems, produce_run, system_name
from rankscope.workflows.diagnose.analysed import Analysed
from rankscope.workflows.diagnose.drilldown import document_titles, top_results
from rankscope.workflows.diagnose.findings import (
    comparison_findings,
    complementarity_findings,
    diagnostics_findings,
    failure_findings,
    headroom_findings,
    loss_findings,
    retriever_findings,
    sampled_findings,
)
from rankscope.workflows.diagnose.headroom import check_metrics, default_metrics, headroom, ideal_values, top_of_run
from rankscope.workflows.diagnose.misses import (
    first_relevant,
    judgment_table,
    loss_summary,
    loss_table,
    miss_breakdown,
    relevant_ranks,
)
from rankscope.workflows.diagnose.recall_failures import analyzer_of, failure_summary, recall_failures
from rankscope.workflows.diagnose.result import DiagnoseResult, Diagnosis
from rankscope.workflows.diagnose.sampling import Sampled, sampled_table, too_few_negatives
from rankscope.workflows.options import Output


def diagnose(
    dataset: str | Dataset = "cranfield",
    retriever: SystemLike | Mapping[str, SystemLike] = "bm25",
    vs: SystemLike | None = None,
    depth: int = 100,
    out: str | Path | Output | None = None,
    *,
    metrics: Sequence[str] | None = None,
    sampled: bool | Sampled = False,
    seed: int = 0,
) -> DiagnoseResult:
    """Diagnose ``retriever`` (and ``vs``, if given) at candidate depth ``depth``; write files to ``out``
    (a folder, or an :class:`~rankscope.workflows.options.Output` with the figures' formats).

    ``metrics`` are priced in points (default :func:`~rankscope.workflows.diagnose.headroom.default_metrics`);
    the first one orders the worst queries. ``sampled=True`` (or a
    :class:`~rankscope.workflows.diagnose.sampling.Sampled` with its negatives and repeats) adds the
    sampled-negatives protocol, seeded by ``seed``. ``retriever`` and ``vs`` are systems (a spec, a
    Retriever, a run DataFrame or a run file path), or ``retriever`` maps one or two names to systems.

    >>> import rankscope as rs
    >>> result = rs.diagnose("cranfield", "bm25")  # RANKSCOPE_DATA holds cranfield/
    >>> headroom = result.diagnoses[0].headroom.summary  # a perfect reranker of the top 100: "oracle"
    >>> headroom.loc["ndcg@10", ["actual", "oracle", "ideal"]].round(4).to_dict()
    {'actual': 0.3838, 'oracle': 0.8441, 'ideal': 1.0}
    """
    given = list(retriever.items()) if isinstance(retriever, Mapping) else [(system_name(retriever), retriever)]
    if vs is not None:
        given.append((system_name(vs), vs))
    named = named_systems(_one_or_two(given))
    _settings(depth, metrics, sampled, out)  # before any computing
    data = resolve_dataset(dataset)
    systems, described = [], []
    for name, given_system in progress(named.items(), desc="systems", total=len(named), label=lambda item: item[0]):
        made = produce_run(given_system, data, depth)
        systems.append(made)
        if not given_system.indexed_here:  # a spec names itself; a run is said to be which file
            described += [f"{name} is {made.description}", *(f"{name}: {note}" for note in made.notes)]
    return diagnose_runs(data, systems, depth, out, metrics=metrics, sampled=sampled, seed=seed, described=described)


T = TypeVar("T")


def _one_or_two(systems: Sequence[T]) -> Sequence[T]:
    if not 1 <= len(systems) <= 2:
        raise RankscopeError(f"diagnose takes one system, or two to compare; got {len(systems)}")
    return systems


def _settings(
    depth: int, metrics: Sequence[str] | None, sampled: bool | Sampled, out: str | Path | Output | None
) -> tuple[tuple[str, ...], Sampled | None, Path | None, tuple[str, ...]]:
    """The checked metrics, sampled settings, output folder and figure formats, refused before any computing."""
    check_depth(depth)
    checked = tuple(check_metrics(default_metrics(depth) if metrics is None else metrics, depth))
    return (checked, Sampled.of(sampled), *Output.of(out).checked())


def diagnose_runs(
    data: Dataset,
    systems: Sequence[SystemRun],
    depth: int = 100,
    out: str | Path | Output | None = None,
    *,
    metrics: Sequence[str] | None = None,
    sampled: bool | Sampled = False,
    seed: int = 0,
    described: Sequence[str] = (),
) -> DiagnoseResult:
    """Diagnose one or two runs already made on ``data`` (the first is the one diagnosed in depth).

    ``described``: what the notes say first (each system's description and run checks).

    A :class:`~rankscope.workflows.common.systems.SystemRun`'s ``retriever`` may be None (a run from elsewhere): its terms are then
    analysed with the default analyzer, and the sampled protocol, which must score
    documents the run does not hold, is skipped with a note.
    """
    _one_or_two(systems)
    metrics, sampling, out_path, figures = _settings(depth, metrics, sampled, out)
    cutoffs = [k for k in CUTOFFS if k <= depth] + ([depth] if depth > max(CUTOFFS) else [])
    relevant = [relevant_ranks(system.run, data.qrels, depth) for system in systems]
    if relevant[0].empty:
        raise RankscopeError(f"dataset {data.name!r} has no query with a relevant document: nothing to diagnose")
    tasks, notes = _tasks(data, systems, relevant, depth, cutoffs, metrics, sampling, seed)
    analysed = Analysed(data.corpus, data.queries)  # texts analysed once per analyzer and process
    diagnose_one = partial(diagnose_system, analysed=analysed, ideal=ideal_values(data.qrels, metrics))
    # the second system on the second core (a child forked now) while the first is diagnosed here; without
    # a child, one after the other, the second reusing the first one's analyses
    second = [forked.beside(diagnose_one, *task) for task in tasks[1:]]
    diagnoses = [diagnose_one(*tasks[0]), *(diagnosis() for diagnosis in second)]
    shown = set(relevant[0]["doc_id"]).union(*(d.top_results["doc_id"] for d in diagnoses))
    titles = document_titles(data.corpus.loc[data.corpus["doc_id"].isin(shown)])
    settings = sampling or Sampled()
    result = DiagnoseResult(
        dataset=data.name,
        depth=depth,
        metrics=metrics,
        queries=data.queries,
        titles=pd.Series(titles, dtype=object),
        diagnoses=tuple(diagnoses),
        comparison=_comparison(diagnoses, depth),
        sampled_settings=f"{settings.negatives} negatives, {settings.repeats} repeats, seed {seed}",
        provenance=_provenance(data, systems, metrics, depth, sampling, seed),
        notes=(*described, *notes),
        queries_file=data.queries_file,
    )
    return finish(result, out_path, figures)


Task = tuple[
    Dataset,
    SystemRun,
    pd.DataFrame,
    dict[str, pd.DataFrame],
    int,
    list[int],
    tuple[str, ...],
    "tuple[int, int, int] | None",
]
"""The arguments of :func:`diagnose_system` for one system."""


def _tasks(
    data: Dataset,
    systems: Sequence[SystemRun],
    relevant: Sequence[pd.DataFrame],
    depth: int,
    cutoffs: list[int],
    metrics: tuple[str, ...],
    sampling: Sampled | None,
    seed: int,
) -> tuple[list[Task], list[str]]:
    """Each system's :func:`diagnose_system` arguments (the other system's relevant ranks, the sampled
    protocol's draws or None) and the notes: too few negatives to sample, a run without a retriever."""
    settings = sampling or Sampled()
    notes = [] if sampling is None else too_few_negatives(data, settings.negatives)
    can_sample = sampling is not None and not notes  # decided before the per-system notes below are added
    tasks: list[Task] = []
    for i, system in enumerate(systems):
        others = {o.name: r for j, (o, r) in enumerate(zip(systems, relevant)) if j != i}
        if sampling is not None and system.retriever is None:
            notes.append(f"{system.name}: the sampled protocol needs a retriever to score documents; skipped")
        drawn = (settings.negatives, settings.repeats, seed) if can_sample and system.retriever is not None else None
        tasks.append((data, system, relevant[i], others, depth, cutoffs, metrics, drawn))
    return tasks, notes


def _comparison(diagnoses: Sequence[Diagnosis], depth: int) -> tuple[str, ...]:
    """The findings comparing two systems (none for one)."""
    if len(diagnoses) != 2:
        return ()
    a, b = diagnoses
    return (
        *comparison_findings(a.retriever, a.cutoffs, a.first_ranks, b.retriever, b.cutoffs, b.first_ranks, depth),
        *complementarity_findings(a.retriever, a.failures, b.retriever, b.failures, depth),
    )


def _provenance(
    data: Dataset,
    systems: Sequence[SystemRun],
    metrics: tuple[str, ...],
    depth: int,
    sampling: Sampled | None,
    seed: int,
) -> Provenance:
    """What was diagnosed, on what, with which settings (the sampled protocol's counts even when off)."""
    settings = sampling or Sampled()
    return provenance.record(
        "diagnose",
        data,
        {system.name: system.described() for system in systems},
        metrics=list(metrics),
        depth=depth,
        sampled=sampling is not None,
        sampled_negatives=settings.negatives,
        sampled_repeats=settings.repeats,
        seed=seed,
    )


def diagnose_system(
    data: Dataset,
    system: SystemRun,
    relevant: pd.DataFrame,
    others: dict[str, pd.DataFrame],
    depth: int,
    cutoffs: Sequence[int],
    metrics: Sequence[str],
    sampled: tuple[int, int, int] | None,
    *,
    analysed: Analysed | None = None,
    ideal: pd.Series | None = None,
) -> Diagnosis:
    """One system's tables and findings; ``others`` maps the other system to its relevant ranks,
    ``sampled`` is (negatives, repeats, seed) or None to skip the sampled protocol; ``analysed`` and
    ``ideal`` (:func:`~rankscope.workflows.diagnose.headroom.ideal_values`) are shared with the other system."""
    analysed = analysed or Analysed(data.corpus, data.queries)
    name = system.name
    top = top_of_run(system.run, depth)
    ranks = first_relevant(relevant)
    losses = loss_table(relevant, cutoffs, depth, judgment_table(top, data.qrels, cutoffs))
    table = cutoff_table(data.qrels, top, cutoffs, ("hit", "recall", "mrr", "judged"))
    misses = miss_breakdown(ranks, cutoffs)
    gaps = headroom(data.qrels, top, metrics, depth, ideal=ideal)
    analyzer = analyzer_of(system.retriever)
    failures = recall_failures(relevant, data.queries, data.corpus, analyzer, others, analysed=analysed)
    sample = pd.DataFrame()
    if sampled is not None:
        negatives, repeats, seed = sampled
        sample = sampled_table(system.retriever, data, top, n_negatives=negatives, repeats=repeats, seed=seed)
    findings = [
        *loss_findings(name, loss_summary(losses), depth),
        *headroom_findings(name, gaps.summary, depth),
        *failure_findings(name, failure_summary(failures), depth),
        *retriever_findings(name, table, misses, depth),
        *(sampled_findings(name, sample) if len(sample) else []),
        *diagnostics_findings(name, system.diagnostics),
    ]
    judged = data.qrels.loc[data.qrels["query_id"].isin(ranks.index)]
    return Diagnosis(
        retriever=name,
        cutoffs=table,
        ranks=relevant,
        losses=losses,
        misses=misses,
        first_ranks=ranks,
        headroom=gaps,
        failures=failures,
        top_results=top_results(
            top.loc[top["query_id"].isin(ranks.index)], judged, data.corpus, data.queries, analyzer, analysed=analysed
        ),
        run=top,
        sampled=sample,
        findings=tuple(findings),
        diagnostics=dict(system.diagnostics),
    )
